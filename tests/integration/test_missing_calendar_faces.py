"""A declared schedule whose calendar is not stored is held back by its worker (issue 47):
the worker says so in its record, so the faces without the app say why it does not fire
— ``tickwork schedules list`` / ``show``, ``tickwork workers``, ``GET /api/v1/workers``,
the dashboard's Schedules page and the schedule's page.

The worker runs in an engine that has the app (``holding_back``); the faces look through
another engine on the same database that has none, as ``tickwork serve`` and the CLI do.
"""

from __future__ import annotations

import html
import json
import os
import re
import socket
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager

import httpx
import pytest
from click.testing import CliRunner, Result
from tests.browser import Browser
from tests.integration.test_api import Api
from tests.polling import wait_until

from tickwork import Context, Cron, Engine, Every
from tickwork.cli import main
from tickwork.server import create_app
from tickwork.testing import FakeClock

KEY = "holiday-report"
WHERE = f"{socket.gethostname()}:{os.getpid()}"
WHY = f"not registered: no calendar 'uk' is stored (declared by worker {WHERE})"


@contextmanager
def holding_back(db_url: str, clock: FakeClock | None = None) -> Iterator[Engine]:
    """A worker whose app declares ``holiday-report`` on calendar ``uk`` (not stored) and
    ``beat`` (no calendar), running until the block ends."""
    reported: list[str] = []  # on_error: the ERROR it reports is another test's matter
    kwargs = {} if clock is None else {"clock": clock}
    with Engine(db_url, on_error=lambda e, i: reported.append(str(e)), **kwargs) as app:

        @app.workflow(KEY, schedule=Cron("0 9 * * *", calendar="uk"))
        def holiday_report(ctx: Context) -> None:
            return None

        @app.workflow(schedule=Every("1h"))
        def beat(ctx: Context) -> None:
            return None

        with app.worker(threads=1, poll_interval="20ms"):
            yield app
    assert any(f"{KEY!r}" in message for message in reported)


def text(response: httpx.Response) -> str:
    return " ".join(html.unescape(re.sub(r"<[^>]+>", " ", response.text)).split())


def tickwork(*args: str, code: int = 0) -> Result:
    result = CliRunner().invoke(main, list(args), catch_exceptions=False, env={"COLUMNS": "250"})
    assert result.exit_code == code, result.output
    return result


# -- the record ------------------------------------------------------------------------


def test_a_worker_records_the_declared_schedules_it_holds_back_until_their_calendar_is_stored(
    db_url: str, engine: Engine, clock: FakeClock
) -> None:
    with holding_back(db_url, clock) as app:
        (worker,) = engine.list_workers()  # read by an engine without the app
        assert worker.alive and worker.waiting_for_calendars == ((KEY, "uk"),)
        assert engine.get_schedule(KEY) is None and engine.get_schedule("beat") is not None
        app.calendar("uk", holidays=["2026-12-25"])
        clock.advance("1s")  # the worker's next look (its poll interval passed)
        wait_until(lambda: engine.get_schedule(KEY) is not None, "registered")
        # The record says it at the worker's next look, not at the next renewal.
        wait_until(lambda: engine.list_workers()[0].waiting_for_calendars == (), "said")


def test_a_worker_holding_nothing_back_records_none(engine: Engine) -> None:
    engine.workflow("beat", schedule=Every("1h"))(lambda ctx: None)
    with engine.worker(threads=1):
        (worker,) = engine.list_workers()
    assert worker.waiting_for_calendars == ()


# -- the API and the dashboard, without the app ---------------------------------------------


def test_the_api_says_what_each_worker_holds_back_and_which_schedules_are_not_registered(
    db_url: str, engine: Engine, clock: FakeClock
) -> None:
    api = Api(create_app(engine, dashboard=False), engine.create_api_key("ops"))
    with holding_back(db_url, clock):
        (worker,) = api.get("/api/v1/workers").json()["workers"]
        listed = api.get("/api/v1/schedules").json()
        filtered = api.get("/api/v1/schedules", params={"state": "active"}).json()
    assert worker["waiting_for_calendars"] == {KEY: "uk"}
    assert [s["key"] for s in listed["schedules"]] == ["beat"]
    (held,) = listed["not_registered"]
    assert held["key"] == KEY and held["workers"] == [worker["id"]]
    assert held["reason"].startswith(WHY)
    assert filtered["not_registered"] == []  # no row: no state to filter by
    document = api.get("/api/v1/openapi.json").json()["components"]["schemas"]
    assert "not_registered" in document["ScheduleList"]["properties"]
    assert "waiting_for_calendars" in document["Worker"]["properties"]


@pytest.fixture
def browser(engine: Engine) -> Iterator[Browser]:
    """The dashboard of an engine without the app (``tickwork serve`` without one)."""
    with ExitStack() as stack:
        browser = Browser(create_app(engine), stack)
        assert browser.login(engine.create_api_key("dashboard")).status_code == 303
        yield browser


def test_the_schedules_page_says_which_declared_schedule_a_worker_holds_back_without_the_app(
    db_url: str, browser: Browser, clock: FakeClock
) -> None:
    with holding_back(db_url, clock):
        page = browser.get("/")
    assert 'id="banner-calendar-missing"' in page.text
    said = text(page)
    assert "1 declared schedule(s) not registered: their calendar is missing." in said
    assert f"{KEY} : {WHY}; set it (tickwork calendars set uk ...)" in said
    assert f'href="/schedule?key={KEY}"' in page.text
    assert 'id="banner-calendar-missing"' not in browser.get("/").text  # the worker stopped


def test_a_held_back_schedules_page_says_why_it_does_not_fire(
    db_url: str, browser: Browser, clock: FakeClock
) -> None:
    with holding_back(db_url, clock):
        page = browser.get("/schedule", params={"key": KEY})
        other = browser.get("/schedule", params={"key": "nothing-like-it"})
    assert page.status_code == 404
    said = text(page)
    assert f"Schedule '{KEY}' is not registered" in said
    assert f"It does not fire: {WHY}" in said
    assert "Engine(calendars=[Calendar('uk', ...)])" in said
    assert other.status_code == 404 and "There is no schedule 'nothing-like-it'" in text(other)


# -- the command line, without the app ------------------------------------------------------


def test_schedules_list_says_which_declared_schedule_is_not_registered_and_why(
    db_url: str,
) -> None:
    with holding_back(db_url):
        table = tickwork("schedules", "list", "--database", db_url).output
        listed = json.loads(tickwork("schedules", "list", "--database", db_url, "--json").output)
    assert "beat" in table  # the stored schedules' table first
    assert "1 declared schedule(s) not registered, so they do not fire:" in table
    assert f"  {KEY}: {WHY}; set it (tickwork calendars set uk ...)" in table
    assert [s["key"] for s in listed["schedules"]] == ["beat"]  # its shape kept
    (held,) = listed["not_registered"]
    assert (held["key"], held["calendar"]) == (KEY, "uk") and len(held["workers"]) == 1
    assert held["reason"].startswith(WHY)
    after = json.loads(tickwork("schedules", "list", "--database", db_url, "--json").output)
    assert after["not_registered"] == []  # the worker stopped: nobody holds it back


def test_schedules_show_says_why_a_held_back_schedule_is_not_there(db_url: str) -> None:
    with holding_back(db_url):
        result = tickwork("schedules", "show", KEY, "--database", db_url, code=3)
    assert f"error: schedule '{KEY}' is {WHY}" in result.stderr
    assert "tickwork calendars set uk" in result.stderr


def test_tickwork_workers_says_what_each_worker_holds_back(db_url: str) -> None:
    with holding_back(db_url):
        table = tickwork("workers", "--database", db_url).output
    header = next(line for line in table.splitlines() if "last seen" in line)
    assert "not registered" in header
    row = next(line for line in table.splitlines() if str(os.getpid()) in line)
    assert f"{KEY} (no calendar 'uk')" in row
