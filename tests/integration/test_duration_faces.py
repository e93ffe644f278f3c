"""Durations through every face (DESIGN §2, issue 28): a bare number is refused wherever a
length of time is taken, with a message that shows both readings, and nothing is stored;
durations are written for people one way; an interval's occurrences fall on whole
seconds; an overdue schedule's upcoming list starts from now."""

from __future__ import annotations

import re
import subprocess
import sys
from collections.abc import Iterator
from contextlib import ExitStack
from datetime import timedelta
from pathlib import Path

import pytest
from tests.browser import Browser
from tests.integration.test_api import Api
from tests.integration.test_dashboard import text
from tests.timeline import START

from tickwork import Client, ConfigError, Context, Engine, Every, Retry, RunFailed
from tickwork.server import create_app
from tickwork.testing import FakeClock

TICKWORK = str(Path(sys.executable).parent / "tickwork")


def both_readings(value: str) -> str:
    """What every refusal of a bare number says (a regex)."""
    return rf"seconds or milliseconds; write '{value}s' or '{value}ms'"


def job(ctx: Context) -> str:
    return "done"


@pytest.fixture
def app_engine(engine: Engine) -> Engine:
    engine.workflow("job")(job)
    return engine


# -- the engine ------------------------------------------------------------------------


@pytest.mark.parametrize(
    "options",
    [
        {"every": 5},
        {"every": 2.5},
        {"every": "1h", "jitter": 30},
        {"every": "1h", "catchup_window": 60},
    ],
    ids=repr,
)
def test_schedule_refuses_a_bare_number_naming_the_option_and_stores_nothing(
    app_engine: Engine, options: dict[str, object]
) -> None:
    """``engine.schedule(..., every=5)`` (or jitter=30...) raises ConfigError naming the
    option and both readings; no schedule is stored."""
    name, value = next((k, v) for k, v in options.items() if not isinstance(v, str))
    with pytest.raises(ConfigError, match=rf"^{name}: Bad duration .*{both_readings(str(value))}"):
        app_engine.schedule("job", **options)  # type: ignore[arg-type]
    assert app_engine.list_schedules() == []


def test_start_refuses_a_bare_delay_and_stores_no_run(app_engine: Engine) -> None:
    """``engine.start(..., delay=5)`` raises ConfigError with both readings; no run."""
    with pytest.raises(ConfigError, match=rf"^delay: .*{both_readings('5')}"):
        app_engine.start("job", delay=5)  # type: ignore[arg-type]
    assert app_engine.list_runs() == []


def test_a_bare_number_in_ctx_sleep_fails_the_run_with_the_hint(
    engine: Engine, clock: FakeClock
) -> None:
    """``ctx.sleep("nap", 10)`` in a workflow run on a FakeClock: the run fails, its error
    showing both readings, instead of sleeping 10 ms."""

    @engine.workflow()
    def napper(ctx: Context) -> str:
        ctx.sleep("nap", 10)  # type: ignore[arg-type]
        return "woke"

    handle = engine.start("napper")
    engine.run_until_idle()
    with pytest.raises(RunFailed, match=both_readings("10")):
        handle.result(timeout=0)
    info = engine.get_run(handle.id)
    assert info is not None and info.error is not None and "sleep 'nap'" in info.error


def test_every_option_that_takes_a_duration_refuses_a_bare_number(
    db_url: str, clock: FakeClock
) -> None:
    """Engine options, workflow options, Retry, Every, FakeClock.advance, worker options:
    each refuses a bare number with both readings."""
    refusals = [
        lambda: Retry(backoff=1),
        lambda: Retry(max_backoff=300),
        lambda: Every(5),
        lambda: clock.advance(5),
        lambda: Engine(db_url, clock=clock, lease=30),
        lambda: Engine(db_url, clock=clock, retention=30),
        lambda: Engine(db_url, clock=clock, fire_ahead=1),
    ]
    for refused in refusals:
        with pytest.raises(ConfigError, match="seconds or milliseconds; write"):
            refused()
    with Engine(db_url, clock=clock) as engine:
        with pytest.raises(ConfigError, match=rf"^timeout: .*{both_readings('60')}"):
            engine.workflow("slow", timeout=60)(job)  # type: ignore[arg-type]
        with pytest.raises(ConfigError, match=rf"^retention: .*{both_readings('7')}"):
            engine.workflow("kept", retention=7)(job)  # type: ignore[arg-type]
        with pytest.raises(ConfigError, match=both_readings("5")):
            engine.prune(older_than=5)  # type: ignore[arg-type]
        with (
            pytest.raises(ConfigError, match=rf"poll_interval: .*{both_readings('1')}"),
            engine.worker(poll_interval=1),  # type: ignore[arg-type]
        ):
            pass
    assert clock.now() == START


def test_a_bare_number_in_the_config_file_names_the_file_and_the_option(
    sqlite_url: str, clock: FakeClock, tmp_path: Path
) -> None:
    """``every = 5`` in tickwork.toml: ConfigError naming the file, the entry and the key,
    with both readings; nothing is registered."""
    config = tmp_path / "tickwork.toml"
    config.write_text('[[schedules]]\nworkflow = "job"\nevery = 5\n')
    with Engine(sqlite_url, clock=clock, config=config) as engine:
        engine.workflow("job")(job)
        with pytest.raises(ConfigError) as caught:
            engine.sync_schedules()
        message = str(caught.value)
        assert str(config) in message and "schedule 1" in message
        assert re.search(rf"every: Bad duration 5: .*{both_readings('5')}", message)
        assert engine.list_schedules() == []


# -- HTTP and Client ---------------------------------------------------------------------


@pytest.fixture
def api(app_engine: Engine) -> Api:
    return Api(create_app(app_engine), app_engine.create_api_key("tests"))


@pytest.mark.parametrize(
    ("body", "field", "value"),
    [
        ({"workflow": "job", "every": 5}, "every", "5"),
        ({"workflow": "job", "every": "1h", "jitter": 1.5}, "jitter", "1.5"),
        ({"workflow": "job", "every": "1h", "retry": {"backoff": 2}}, "retry.backoff", "2"),
    ],
    ids=["every", "jitter", "retry.backoff"],
)
def test_http_refuses_a_json_number_where_a_duration_goes_with_422(
    api: Api, app_engine: Engine, body: dict[str, object], field: str, value: str
) -> None:
    """POST a schedule with ``"every": 5``: 422 whose message names the field and both
    readings; nothing is stored."""
    response = api.post("/api/v1/schedules", json=body)
    assert response.status_code == 422
    message = response.json()["error"]["message"]
    assert f"{field}: " in message and re.search(both_readings(value), message)
    assert app_engine.list_schedules() == []


def test_http_refuses_a_bare_delay_and_starts_no_run(api: Api, app_engine: Engine) -> None:
    """POST a run with ``"delay": 5``: 422 with both readings, no run."""
    response = api.post("/api/v1/runs", json={"workflow": "job", "delay": 5})
    assert response.status_code == 422
    assert re.search(both_readings("5"), response.json()["error"]["message"])
    assert app_engine.list_runs() == []


def test_http_preview_refuses_bare_digits_for_every(api: Api) -> None:
    """``GET /cron/preview?every=5`` is a 400 with both readings (it used to read ms)."""
    response = api.get("/api/v1/cron/preview", params={"every": "5"})
    assert response.status_code == 400
    assert re.search(both_readings("5"), response.json()["error"]["message"])
    assert api.get("/api/v1/cron/preview", params={"every": "5s"}).status_code == 200


def test_client_refuses_a_bare_number_before_sending_anything() -> None:
    """The Client checks durations itself: nothing listens at its URL, so a request would
    be an ApiError; a bare number is a ConfigError instead."""
    with Client("http://127.0.0.1:9", api_key="tw_unused", timeout=1) as client:
        with pytest.raises(ConfigError, match=both_readings("5")):
            client.schedule("job", every=5)  # type: ignore[arg-type]
        with pytest.raises(ConfigError, match=both_readings("5")):
            client.start("job", delay=5)  # type: ignore[arg-type]
        with pytest.raises(ConfigError, match=both_readings("10")):
            client.preview(every=10)  # type: ignore[arg-type]


def test_client_sends_durations_the_api_reads(api: Api, app_engine: Engine) -> None:
    """What the Client sends for a schedule (durations as strings) is accepted by the API
    as the same definition the engine stores."""
    from tickwork._edge.wire import spec_to_wire
    from tickwork._rules.spec import ScheduleSpec

    spec = ScheduleSpec(
        workflow="job", every="1h30m", jitter={"seconds": 30}, retry=Retry(backoff="2s")
    )
    body = spec_to_wire(spec)
    assert (body["every"], body["jitter"], body["retry"]["backoff"]) == ("1h30m", "30s", "2s")
    assert api.post("/api/v1/schedules", json={**body, "key": "k"}).status_code in (200, 201)
    info = app_engine.get_schedule("k")
    assert info is not None and info.every == timedelta(hours=1, minutes=30)


# -- the command line ----------------------------------------------------------------------


def tickwork(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [TICKWORK, *args], capture_output=True, text=True, timeout=60, check=False
    )


def test_db_prune_refuses_a_bare_older_than_and_prunes_nothing(sqlite_url: str) -> None:
    """``tickwork db prune --older-than 5``: an error with both readings, exit 2 (bad
    input), and the old run is still there."""
    with Engine(sqlite_url, clock=FakeClock(START)) as engine:
        engine.workflow("job")(job)
        engine.start("job", run_id="old")
        engine.run_until_idle()
    done = tickwork("db", "prune", "--older-than", "5", "--database", sqlite_url)
    assert done.returncode == 2, done
    assert re.search(both_readings("5"), done.stderr)
    with Engine(sqlite_url) as engine:
        assert engine.get_run("old") is not None
    pruned = tickwork("db", "prune", "--older-than", "5s", "--database", sqlite_url)
    assert pruned.returncode == 0 and "pruned" in pruned.stdout
    with Engine(sqlite_url) as engine:
        assert engine.get_run("old") is None  # the same command with a unit does prune


APP = """
from tickwork import Context, Engine

engine = Engine({url!r})

@engine.workflow()
def job(ctx: Context) -> str:
    return "done"
"""


@pytest.mark.parametrize(
    "command",
    [
        ["runs", "start", "job", "--app", "{app}", "--wait", "--timeout", "5"],
        ["worker", "{app}", "--drain-timeout", "5"],
    ],
    ids=["runs start --timeout", "worker --drain-timeout"],
)
def test_cli_duration_flags_refuse_a_bare_number(
    sqlite_url: str, tmp_path: Path, command: list[str]
) -> None:
    """``--timeout 5``, ``--drain-timeout 5``: an error with both readings, exit 2, and no
    run started, before any waiting or working."""
    app = tmp_path / "app.py"
    app.write_text(APP.format(url=sqlite_url))
    done = tickwork(*(part.format(app=f"{app}:engine") for part in command))
    assert done.returncode == 2, done
    assert re.search(both_readings("5"), done.stderr)
    with Engine(sqlite_url) as engine:
        assert engine.list_runs() == []


def test_schedules_show_and_list_write_durations_for_people(sqlite_url: str) -> None:
    """``tickwork schedules show`` and ``list``: "every 1 h 30 min", jitter "30 s", an unset
    duration "none", never a Python None or a raw number of milliseconds."""
    with Engine(sqlite_url) as engine:  # the real clock, as the command's: not overdue
        engine.workflow("job")(job)
        engine.schedule("job", every="1h30m", jitter="30s", key="slow")
    shown = tickwork("schedules", "show", "slow", "--database", sqlite_url)
    assert shown.returncode == 0, shown
    rows = {
        cells[0]: cells[1]
        for line in shown.stdout.splitlines()
        if len(cells := [c.strip() for c in line.strip("│┃ ").split("│")]) == 2
    }
    assert rows["every"] == "1 h 30 min" and rows["jitter"] == "30 s"
    assert rows["overdue_by"] == "none"
    assert "None" not in shown.stdout and "5400000" not in shown.stdout
    listed = tickwork("schedules", "list", "--database", sqlite_url)
    assert "every 1 h 30 min" in " ".join(listed.stdout.split())


# -- occurrences on whole seconds; upcoming from now ------------------------------------


def test_an_interval_registered_mid_second_fires_on_whole_seconds(
    app_engine: Engine, clock: FakeClock
) -> None:
    """``every="1h"`` registered at 12:00:00.437 fires at 13:00:00.000, then 14:00:00.000:
    the registration instant's milliseconds are dropped."""
    clock.advance("437ms")
    app_engine.schedule("job", every="1h", key="hourly")
    info = app_engine.get_schedule("hourly")
    assert info is not None and info.next_fire_at == START + timedelta(hours=1)
    clock.set(START + timedelta(hours=1))
    assert app_engine.tick() == ["hourly@2026-03-01T13:00:00.000Z"]
    info = app_engine.get_schedule("hourly")
    assert info is not None and info.next_fire_at == START + timedelta(hours=2)


def test_a_sub_second_interval_keeps_its_cadence_from_the_whole_second(
    app_engine: Engine, clock: FakeClock
) -> None:
    """``every="250ms"`` registered at .437: occurrences at .500, .750, 1.000 — never at
    registration, and still every 250 ms."""
    clock.advance("437ms")
    app_engine.schedule("job", every="250ms", key="fast", catchup="all")
    info = app_engine.get_schedule("fast")
    assert info is not None and info.next_fire_at == START + timedelta(milliseconds=500)
    clock.set(START + timedelta(seconds=1))
    assert app_engine.tick() == [
        "fast@2026-03-01T12:00:00.500Z",
        "fast@2026-03-01T12:00:00.750Z",
        "fast@2026-03-01T12:00:01.000Z",
    ]


@pytest.fixture
def browser(app_engine: Engine) -> Iterator[Browser]:
    with ExitStack() as stack:
        browser = Browser(create_app(app_engine), stack)
        assert browser.login(app_engine.create_api_key("dashboard")).status_code == 303
        yield browser


@pytest.mark.parametrize(
    ("cadence", "expected"),
    [
        ({"every": "1h"}, ["15:00", "16:00", "17:00", "18:00", "19:00"]),
        ({"cron": "0 * * * *"}, ["15:00", "16:00", "17:00", "18:00", "19:00"]),
    ],
    ids=["every", "cron"],
)
def test_an_overdue_schedules_upcoming_list_starts_from_now(
    app_engine: Engine,
    clock: FakeClock,
    browser: Browser,
    cadence: dict[str, str],
    expected: list[str],
) -> None:
    """Nobody fired it since 13:00 and it is 14:30: the page says it is overdue, and its
    upcoming occurrences are 15:00 on, none in the past."""
    app_engine.schedule("job", key="late", **cadence)  # type: ignore[arg-type]
    clock.set(START + timedelta(hours=2, minutes=30))
    page = browser.get("/schedule", params={"key": "late"})
    assert 'id="banner-overdue"' in page.text
    section = text(page).split("Upcoming", 1)[1].split("Recent runs", 1)[0]
    shown = re.findall(r"2026-03-01 (\d\d:\d\d):00 UTC", section)
    assert shown == expected
