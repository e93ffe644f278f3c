"""``max_runs`` and ``deadline`` on every face but the engine's: the HTTP API (the body's
fields, the schedule's JSON, refusals), its OpenAPI document, ``Client``, the CLI's
``schedules show``/``list --json``, ``/metrics`` (``tickwork_deadline_misses_total{key}``)
and the dashboard (a schedule's runs left and deadline; the deadline-missed banner on the
Schedules page and on the schedule's page)."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from contextlib import ExitStack
from datetime import timedelta

import pytest
from click.testing import CliRunner
from prometheus_client.parser import text_string_to_metric_families
from tests.browser import Browser
from tests.integration.test_api import Api, error_of
from tests.integration.test_state_notes_faces import client as client  # the fixture

from tickwork import Client, ConfigError, Context, Engine
from tickwork.cli import main
from tickwork.server import create_app
from tickwork.server.metrics import metrics_registry, render_metrics
from tickwork.server.openapi import openapi_document
from tickwork.testing import FakeClock

EVERY = timedelta(hours=1)


@pytest.fixture
def app_engine(engine: Engine) -> Engine:
    @engine.workflow()
    def job(ctx: Context) -> None:
        ctx.sleep("long", "1h")

    engine.schedule("job", every=EVERY, key="hourly", max_runs=3, deadline="15m")
    return engine


@pytest.fixture
def missed_once(app_engine: Engine, clock: FakeClock) -> Engine:
    """hourly's first run still sleeping 20 minutes after its occurrence: a miss."""
    clock.advance(EVERY)
    app_engine.tick()
    app_engine.run_until_idle()
    clock.advance("20m")
    app_engine.tick()
    return app_engine


# -- HTTP API, OpenAPI --------------------------------------------------------------------


@pytest.fixture
def api(app_engine: Engine) -> Api:
    return Api(create_app(app_engine), app_engine.create_api_key("tests"))


def test_the_api_registers_max_runs_and_deadline_and_answers_with_runs_left(api: Api) -> None:
    body = {"workflow": "job", "every": "10m", "key": "k", "max_runs": 5, "deadline": "2m"}
    response = api.post("/api/v1/schedules", json=body)
    assert response.status_code == 200, response.text
    schedule = response.json()["schedule"]
    assert (schedule["max_runs"], schedule["runs_left"], schedule["deadline"]) == (5, 5, "2m")
    for bad, word in (({"max_runs": 0}, "max_runs"), ({"deadline": "8d"}, "deadline")):
        refused = api.post("/api/v1/schedules", json={**body, "key": "k2", **bad})
        assert refused.status_code == 400 and word in error_of(refused)["message"]
    assert api.get("/api/v1/schedules/k2").status_code == 404  # nothing stored


def test_the_openapi_document_describes_both_options_and_runs_left() -> None:
    schemas = openapi_document()["components"]["schemas"]
    assert {"max_runs", "deadline"} <= set(schemas["ScheduleCreate"]["properties"])
    assert {"max_runs", "runs_left", "deadline"} <= set(schemas["Schedule"]["properties"])
    bounds = schemas["ScheduleCreate"]["properties"]["max_runs"]["anyOf"][0]
    assert (bounds["minimum"], bounds["maximum"]) == (1, 10**9)


def test_client_registers_both_options_as_the_engine_would(
    client: Client, app_engine: Engine
) -> None:
    assert client.schedule("job", every="10m", key="k", max_runs=2, deadline="5m") == "k"
    stored = app_engine.get_schedule("k")
    assert stored is not None and (stored.max_runs, stored.deadline) == (2, timedelta(minutes=5))
    assert client.get_schedule("k") == stored
    assert app_engine.schedule("job", every="10m", key="k", max_runs=2, deadline="5m") == "k"
    assert app_engine.get_schedule("k") == stored  # the same definition: unchanged
    with pytest.raises(ConfigError, match="max_runs"):
        client.schedule("job", every="10m", key="k3", max_runs=-1)


# -- CLI ---------------------------------------------------------------------------------


def test_cli_show_and_list_json_say_max_runs_runs_left_and_deadline(
    missed_once: Engine, db_url: str
) -> None:
    def tickwork(*args: str) -> str:
        return CliRunner().invoke(main, [*args, "--database", db_url]).output

    shown = json.loads(tickwork("schedules", "show", "hourly", "--json"))
    assert (shown["max_runs"], shown["runs_left"], shown["deadline"]) == (3, 2, "15m")
    (listed,) = json.loads(tickwork("schedules", "list", "--json"))["schedules"]
    assert listed["runs_left"] == 2
    table = tickwork("schedules", "show", "hourly")
    assert re.search(r"runs_left\W+2\b", table) and re.search(r"deadline\W+15m", table)
    listed_table = tickwork("schedules", "list")
    assert "runs left" in listed_table and "2 of 3" in listed_table
    history = tickwork("schedules", "history", "hourly")
    assert "deadline_missed" in history


# -- /metrics ---------------------------------------------------------------------------


def test_metrics_count_deadline_misses_per_schedule(missed_once: Engine, clock: FakeClock) -> None:
    def misses() -> dict[str, float]:
        text = render_metrics(metrics_registry(missed_once)).decode()
        return {
            sample.labels["key"]: sample.value
            for family in text_string_to_metric_families(text)
            for sample in family.samples
            if sample.name == "tickwork_deadline_misses_total"
        }

    assert misses() == {"hourly": 1}
    clock.advance("1h")  # the second occurrence fires; its run sleeps past 15 minutes too
    missed_once.tick()
    missed_once.run_until_idle()
    clock.advance("20m")
    missed_once.tick()
    assert misses() == {"hourly": 2}


# -- dashboard ---------------------------------------------------------------------------


@pytest.fixture
def browser(app_engine: Engine) -> Iterator[Browser]:
    with ExitStack() as stack:
        browser = Browser(create_app(app_engine), stack)
        assert browser.login(app_engine.create_api_key("dashboard")).status_code == 303
        yield browser


def words(page: str) -> str:
    return " ".join(re.sub(r"<[^>]+>", " ", page).split())


def test_the_schedule_page_shows_runs_left_and_the_deadline(
    browser: Browser, missed_once: Engine
) -> None:
    page = words(browser.get("/schedule", params={"key": "hourly"}).text)
    assert "Max runs 2 of 3 left" in page
    assert "Deadline 15 min after each occurrence" in page


def test_a_missed_deadline_is_a_banner_on_the_schedules_page_and_the_schedules_own(
    browser: Browser, missed_once: Engine, clock: FakeClock
) -> None:
    for path, params in (("/", {}), ("/schedule", {"key": "hourly"})):
        page = browser.get(path, params=params).text
        assert 'id="banner-deadline-missed"' in page, path
        assert "hourly@2026-03-01T13:00:00.000Z had not completed by its deadline" in page
    clock.advance("2d")  # a day later the banner is gone; the history keeps the miss
    browser_page = browser.get("/").text
    assert 'id="banner-deadline-missed"' not in browser_page


def test_no_banner_without_a_miss(browser: Browser, app_engine: Engine) -> None:
    assert 'id="banner-deadline-missed"' not in browser.get("/").text
