"""Nobody serving, shown where a person looks (DESIGN §3 ``overdue_by``, §8): an overdue
schedule in ``ScheduleInfo``, the API, ``Client``, ``tickwork schedules list``, ``/metrics``
and banners on the dashboard's pages; each gone once a worker fires it.

Engines run on a ``FakeClock``, so "overdue by 30 s" is exact.
"""

from __future__ import annotations

import html
import json
import re
from collections.abc import Iterator
from contextlib import ExitStack
from datetime import UTC, datetime, timedelta

import pytest
from click.testing import CliRunner
from prometheus_client.parser import text_string_to_metric_families
from tests.integration.test_api import Api
from tests.integration.test_dashboard import Browser, text
from tests.integration.test_workers import serving

from tickwork import Client, Context, Engine
from tickwork.cli import main
from tickwork.server import create_app
from tickwork.server.metrics import metrics_registry, render_metrics
from tickwork.testing import FakeClock

WAIT = 30.0


def report(ctx: Context) -> str:
    return "done"


@pytest.fixture
def late(engine: Engine, clock: FakeClock) -> str:
    """A schedule every minute, 90 s after registration, never fired: 30 s overdue."""
    engine.workflow("report")(report)
    key = engine.schedule("report", every="1m", key="every-minute")
    clock.advance("90s")
    return key


# -- the engine ------------------------------------------------------------------------


def test_a_schedule_is_overdue_by_how_late_its_next_occurrence_is(
    engine: Engine, clock: FakeClock
) -> None:
    engine.workflow("report")(report)
    engine.schedule("report", every="1m", key="every-minute")
    info = engine.get_schedule("every-minute")
    assert info is not None and info.overdue_by is None  # due in a minute
    clock.advance("1m")
    info = engine.get_schedule("every-minute")
    assert info is not None and info.overdue_by is None  # due now: not yet late
    clock.advance("30s")
    info = engine.get_schedule("every-minute")
    assert info is not None and info.overdue_by == timedelta(seconds=30)
    assert [s.overdue_by for s in engine.list_schedules()] == [timedelta(seconds=30)]


def test_an_overdue_schedule_is_not_overdue_once_fired(
    engine: Engine, clock: FakeClock, late: str
) -> None:
    assert engine.tick()
    info = engine.get_schedule(late)
    assert info is not None and info.overdue_by is None
    assert info.next_fire_at == clock.now() + timedelta(seconds=30)


def test_a_worker_that_serves_it_fires_it_and_ends_the_lateness(engine: Engine, late: str) -> None:
    with engine.worker(threads=1, poll_interval="50ms"):
        deadline = datetime.now(UTC) + timedelta(seconds=WAIT)
        while (info := engine.get_schedule(late)) and info.overdue_by is not None:
            assert datetime.now(UTC) < deadline, "the worker did not fire the schedule"
    assert engine.list_runs(schedule_key=late)


@pytest.mark.parametrize("action", ["pause", "deactivate"])
def test_a_paused_or_inactive_schedule_is_never_overdue(
    engine: Engine, clock: FakeClock, late: str, action: str
) -> None:
    getattr(engine, action)(late)
    clock.advance("1h")
    info = engine.get_schedule(late)
    assert info is not None and info.overdue_by is None


def test_a_resumed_schedule_is_overdue_only_past_the_grace_until_catch_up_decides(
    engine: Engine, clock: FakeClock, late: str
) -> None:
    engine.pause(late)
    clock.advance("10m")
    engine.resume(late)
    clock.advance("271ms")  # a live worker in another process has not looked yet
    info = engine.get_schedule(late)
    assert info is not None and info.overdue_by is None
    clock.advance("9729ms")  # the grace, to the millisecond
    info = engine.get_schedule(late)
    assert info is not None and info.overdue_by is None
    clock.advance("1ms")  # nobody fired it for the grace: late since its occurrence
    info = engine.get_schedule(late)
    assert info is not None and info.overdue_by == timedelta(minutes=10, seconds=40, milliseconds=1)
    engine.tick()
    info = engine.get_schedule(late)
    assert info is not None and info.overdue_by is None


def test_no_face_calls_a_schedule_overdue_within_the_grace(
    engine: Engine, clock: FakeClock
) -> None:
    engine.workflow("report")(report)
    key = engine.schedule("report", every="1m", key="every-minute")
    clock.advance("1m271ms")
    api = Api(create_app(engine), engine.create_api_key("ops"))
    names = ("tickwork_schedules_overdue", "tickwork_schedule_overdue_seconds")
    with ExitStack() as stack:
        browser = Browser(create_app(engine), stack)
        assert browser.login(engine.create_api_key("dashboard")).status_code == 303
        assert api.get(f"/api/v1/schedules/{key}").json()["overdue_by"] is None
        assert samples(engine, *names) == {("tickwork_schedules_overdue", ()): 0.0}
        assert banner(browser.get("/").text, "overdue") is None
        assert banner(browser.get(f"/schedule?key={key}").text, "overdue") is None
        clock.advance("10s")
        assert api.get(f"/api/v1/schedules/{key}").json()["overdue_by"] == "10s271ms"
        assert samples(engine, *names)[("tickwork_schedules_overdue", ())] == 1.0
        shown = banner(browser.get("/").text, "overdue")
        assert shown is not None and "overdue by 10.3 s" in shown


# -- API, Client, CLI ------------------------------------------------------------------


def test_the_api_sends_overdue_by_as_a_duration(
    engine: Engine, clock: FakeClock, late: str
) -> None:
    api = Api(create_app(engine, dashboard=False), engine.create_api_key("ops"))
    assert api.get(f"/api/v1/schedules/{late}").json()["overdue_by"] == "30s"
    (listed,) = api.get("/api/v1/schedules").json()["schedules"]
    assert listed["overdue_by"] == "30s"
    engine.tick()
    assert api.get(f"/api/v1/schedules/{late}").json()["overdue_by"] is None


def test_the_client_gets_the_engines_overdue_by(engine: Engine, late: str) -> None:
    key = engine.create_api_key("client")
    with serving(create_app(engine, dashboard=False)) as url, Client(url, api_key=key) as client:
        info = client.get_schedule(late)
        assert info is not None and info.overdue_by == timedelta(seconds=30)
        assert client.list_schedules() == engine.list_schedules()


def test_schedules_list_marks_the_overdue_ones(db_url: str) -> None:
    # The CLI reads the real clock: the schedules are registered an hour ago.
    an_hour_ago = datetime.now(UTC).replace(microsecond=0) - timedelta(hours=1)
    with Engine(db_url, clock=FakeClock(an_hour_ago)) as engine:
        engine.workflow("report")(report)
        engine.schedule("report", every="1m", key="every-minute")
        engine.schedule("report", every="1d", key="daily")

    def tickwork(*args: str) -> str:
        result = CliRunner().invoke(main, [*args, "--database", db_url], env={"COLUMNS": "250"})
        assert result.exit_code == 0, result.output
        return result.output

    table = tickwork("schedules", "list")
    late_row = next(line for line in table.splitlines() if "every-minute" in line)
    daily_row = next(line for line in table.splitlines() if "daily" in line)
    assert re.search(r"OVERDUE 59 min( \d+ s)?", late_row), late_row
    assert "OVERDUE" not in daily_row
    assert "1 schedule(s) OVERDUE" in table
    listed = {
        s["key"]: s["overdue_by"]
        for s in json.loads(tickwork("schedules", "list", "--json"))["schedules"]
    }
    assert listed["daily"] is None and listed["every-minute"].startswith("59m")
    shown = json.loads(tickwork("schedules", "show", "every-minute", "--json"))
    assert shown["overdue_by"].startswith("59m")


# -- /metrics --------------------------------------------------------------------------


def samples(engine: Engine, *names: str) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    scraped = render_metrics(metrics_registry(engine)).decode()
    return {
        (sample.name, tuple(sorted(sample.labels.items()))): sample.value
        for family in text_string_to_metric_families(scraped)
        for sample in family.samples
        if sample.name in names
    }


def test_metrics_show_overdue_schedules_and_drop_them_once_fired(
    engine: Engine, clock: FakeClock, late: str
) -> None:
    engine.schedule("report", every="1h", key="hourly")
    names = ("tickwork_schedules_overdue", "tickwork_schedule_overdue_seconds")
    assert samples(engine, *names) == {
        ("tickwork_schedules_overdue", ()): 1.0,
        ("tickwork_schedule_overdue_seconds", (("key", late),)): 30.0,
    }
    engine.tick()
    assert samples(engine, *names) == {("tickwork_schedules_overdue", ()): 0.0}


def test_metrics_count_live_workers_per_pool(engine: Engine, clock: FakeClock) -> None:
    engine.workflow("report", pool="reports")(report)
    engine.schedule("report", every="1h", key="hourly")  # in pool "reports"
    engine.schedule("report", every="1h", key="gpu", pool="gpu")
    assert samples(engine, "tickwork_workers") == {
        ("tickwork_workers", (("pool", "gpu"),)): 0.0,
        ("tickwork_workers", (("pool", "reports"),)): 0.0,
    }
    with engine.worker(threads=1):
        live = samples(engine, "tickwork_workers")
    assert live == {
        ("tickwork_workers", (("pool", "default"),)): 1.0,
        ("tickwork_workers", (("pool", "gpu"),)): 0.0,
        ("tickwork_workers", (("pool", "reports"),)): 0.0,
    }
    assert samples(engine, "tickwork_workers")[("tickwork_workers", (("pool", "default"),))] == 0


def test_metrics_read_overdue_schedules_and_served_pools_as_list_schedules_says(
    engine: Engine, clock: FakeClock
) -> None:
    # The scrape reads three columns of the schedules, not every ScheduleInfo: the same
    # rule must come out (paused and inactive schedules are late on purpose).
    engine.workflow("report")(report)
    engine.schedule("report", every="1m", key="late")
    engine.schedule("report", every="1m", key="paused", pool="batch")
    engine.schedule("report", every="1m", key="inactive", pool="night")
    engine.schedule("report", every="1h", key="hourly", pool="hourly")
    clock.advance("90s")
    engine.pause("paused")
    engine.deactivate("inactive")
    listed = {s.key: s.overdue_by for s in engine.list_schedules() if s.overdue_by}
    stats = engine.console.stats()
    assert stats.overdue == listed == {"late": timedelta(seconds=30)}
    assert stats.active_pools == {"default": 1, "hourly": 1}
    assert stats.schedules == {"active": 2, "paused": 1, "inactive": 1}
    assert samples(engine, "tickwork_workers", "tickwork_schedule_overdue_seconds") == {
        ("tickwork_workers", (("pool", "default"),)): 0.0,
        ("tickwork_workers", (("pool", "hourly"),)): 0.0,
        ("tickwork_schedule_overdue_seconds", (("key", "late"),)): 30.0,
    }


# -- the dashboard ---------------------------------------------------------------------


@pytest.fixture
def browser(engine: Engine) -> Iterator[Browser]:
    with ExitStack() as stack:
        browser = Browser(create_app(engine), stack)
        assert browser.login(engine.create_api_key("dashboard")).status_code == 303
        yield browser


def _banner_html(page: str, kind: str) -> str | None:
    found = re.search(rf'<div class="banner" id="banner-{kind}"[^>]*>(.*?)</div>', page, re.S)
    return None if found is None else found.group(1)


def banner(page: str, kind: str) -> str | None:
    """The text of the page's banner of this kind, or None."""
    inner = _banner_html(page, kind)
    if inner is None:
        return None
    return " ".join(html.unescape(re.sub(r"<[^>]+>", " ", inner)).split())


def named(page: str, kind: str) -> list[str]:
    """What the page's banner of this kind links to, by label."""
    return [
        html.unescape(label)
        for label in re.findall(r">([^<]+)</a>", _banner_html(page, kind) or "")
    ]


def test_the_schedules_page_warns_of_an_overdue_schedule_until_it_fires(
    engine: Engine, browser: Browser, late: str
) -> None:
    shown = banner(browser.get("/").text, "overdue")
    assert shown is not None and late in shown
    assert "overdue by 30 s: no worker is alive" in shown
    assert banner(browser.get(f"/schedule?key={late}").text, "overdue") is not None
    engine.tick()
    assert banner(browser.get("/").text, "overdue") is None
    assert banner(browser.get(f"/schedule?key={late}").text, "overdue") is None


def test_a_schedule_no_live_worker_serves_is_named_before_it_is_late(
    engine: Engine, browser: Browser
) -> None:
    engine.workflow("report")(report)
    engine.schedule("report", every="1h", key="gpu-hourly", pool="gpu")
    engine.schedule("report", every="1h", key="hourly")
    with engine.worker(threads=1):  # serves pool "default" only
        page = browser.get("/").text
        schedule_page = browser.get("/schedule?key=gpu-hourly").text
        served_page = browser.get("/schedule?key=hourly").text
    shown = banner(page, "unserved")
    assert shown is not None and named(page, "unserved") == ["gpu-hourly"]
    assert "no live worker serves pool 'gpu'" in shown
    assert (
        banner(schedule_page, "unserved") == "It will not fire: no live worker serves pool 'gpu'."
    )
    assert banner(served_page, "unserved") is None and banner(page, "overdue") is None


def test_the_runs_page_warns_of_runs_waiting_for_a_workflow_nobody_registers(
    engine: Engine, browser: Browser
) -> None:
    engine.workflow("report")(report)
    engine.workflow("renamed")(report)
    engine.start("renamed")
    engine.start("renamed")
    with engine.worker(threads=1, poll_interval="50ms"):
        deadline = datetime.now(UTC) + timedelta(seconds=WAIT)
        while engine.list_runs(status="pending"):  # this worker serves both: they run
            assert datetime.now(UTC) < deadline, "the runs did not run"
        assert banner(browser.get("/runs").text, "waiting") is None
    engine.start("renamed")
    engine.start("renamed")  # and no worker is alive now
    shown = banner(browser.get("/runs").text, "waiting")
    assert shown == (
        "Runs wait for workflows no live worker registers: they will not start. "
        "renamed : 2 pending run(s)"
    )


def test_the_workers_page_lists_each_worker_and_warns_when_none_is_alive(
    engine: Engine, browser: Browser
) -> None:
    engine.workflow("report")(report)
    assert banner(browser.get("/workers").text, "no-workers") is not None
    with engine.worker(threads=1):
        (worker,) = engine.list_workers()
        page = browser.get("/workers")
    assert page.status_code == 200 and banner(page.text, "no-workers") is None
    row = text(page)
    assert worker.id in row and worker.host in row and str(worker.pid) in row and "yes" in row
    assert 'href="/workers" aria-current="page">Workers</a>' in page.text
    assert "stopped" in text(browser.get("/workers"))
