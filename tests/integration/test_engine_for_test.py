"""``tickwork.testing.engine_for_test``: an app's own engine (a module-level ``Engine()``,
imported as ``from myapp import engine``) run in a user's test on a ``FakeClock`` and a
private store in memory, its retries and sleeps waiting on the fake clock; the app's own
database is never opened.
"""

from __future__ import annotations

import importlib
import sys
import textwrap
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from types import ModuleType

import pytest

from tickwork import ConfigError, Context, Engine, RunStatus
from tickwork.testing import FakeClock, engine_for_test

START = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)

APP = """
from tickwork import Context, Engine, Every, Retry

engine = Engine("sqlite:///{db}")
tries = []
finished = []


def flaky(day: str) -> str:
    tries.append(day)
    if len(tries) < 3:
        raise ConnectionError("the source is not ready")
    return "fetched " + day


@engine.workflow("nightly", schedule=Every("1h", input={{"day": "today"}}))
def nightly(ctx: Context, input: dict) -> str:
    got = ctx.step("fetch", flaky, input["day"], retry=Retry(5, backoff="30s", factor=1))
    ctx.sleep("settle", "10m")
    return got


@engine.on_run_completed
def remember(run):
    finished.append(run.id)
"""


@pytest.fixture
def app(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[ModuleType]:
    """A user's app module, ``myapp``, whose module-level engine names a file under
    ``tmp_path`` (``app.db``) that nothing should create."""
    (tmp_path / "myapp.py").write_text(APP.format(db=tmp_path / "app.db"))
    monkeypatch.syspath_prepend(str(tmp_path))
    sys.modules.pop("myapp", None)
    yield importlib.import_module("myapp")
    sys.modules.pop("myapp", None)


def test_an_apps_module_level_engine_runs_on_a_fake_clock_and_a_store_in_memory(
    app: ModuleType, tmp_path: Path
) -> None:
    """The harness runs the app's workflow, declared schedule and hook: the step's retry
    waits its 30 s back-off on the fake clock (not done until the clock moves), the sleep
    wakes when the clock passes it, the declared schedule fires on ``tick``; the app's
    database file is never created."""
    clock = FakeClock(START)
    with engine_for_test(app.engine, clock=clock) as test_engine:
        assert test_engine is not app.engine
        assert test_engine.workflows() == ["nightly"]
        assert test_engine.sync_schedules() == ["nightly"]
        clock.advance("1h")
        [run_id] = test_engine.tick()  # the declared schedule fires at its occurrence
        test_engine.run_until_idle()
        assert app.tries == ["today"]  # failed once: the retry waits its back-off
        test_engine.run_until_idle()
        assert app.tries == ["today"]  # ... on the fake clock, which has not moved
        assert test_engine.get_run(run_id).status is RunStatus.PENDING  # type: ignore[union-attr]
        clock.advance("30s")
        test_engine.run_until_idle()
        clock.advance("30s")
        test_engine.run_until_idle()
        assert app.tries == ["today"] * 3  # the third try succeeded
        assert test_engine.get_run(run_id).status is RunStatus.SLEEPING  # type: ignore[union-attr]
        clock.advance("10m")
        test_engine.run_until_idle()
        run = test_engine.get_run(run_id)
        assert run is not None and run.status is RunStatus.COMPLETED
        assert run.result == "fetched today"
        assert app.finished == [run_id]  # the app's hook came along
    assert not (tmp_path / "app.db").exists()
    assert app.engine.workflows() == ["nightly"]


def test_two_harnesses_on_one_app_engine_share_nothing(app: ModuleType, tmp_path: Path) -> None:
    """Each harness has a store of its own, gone at the end of its block: a run started
    in one is unknown to the next."""
    with engine_for_test(app.engine, clock=FakeClock(START)) as first:
        started = first.start("nightly", {"day": "monday"}, run_id="one")
        assert first.get_run(started.id) is not None
    with engine_for_test(app.engine, clock=FakeClock(START)) as second:
        assert second.get_run("one") is None
        assert second.list_schedules() == []  # nothing registered until sync_schedules
    assert not (tmp_path / "app.db").exists()


def test_engine_for_test_refuses_what_is_not_an_engine() -> None:
    """A wrong argument (the module instead of its engine) is a ConfigError that says so."""
    harness = engine_for_test(textwrap)  # type: ignore[arg-type]
    with pytest.raises(ConfigError, match=r"takes a tickwork\.Engine"), harness:
        pass


def test_the_copy_keeps_the_apps_pools_and_on_error_and_leaves_its_registry_alone(
    tmp_path: Path,
) -> None:
    """An engine serving only pool "reports" with an ``on_error`` hook: the copy serves
    the same pool (a run of another pool waits) and reports to the same hook; a workflow
    registered on the copy is not added to the app's engine."""
    reported: list[str] = []
    app = Engine(
        f"sqlite:///{tmp_path / 'app.db'}",
        pools=["reports"],
        on_error=lambda exc, info: reported.append(info["where"]),
    )

    @app.workflow("report", pool="reports")
    def report(ctx: Context) -> str:
        return str(ctx.step("build", lambda: "built"))

    @app.workflow("elsewhere", pool="other")
    def elsewhere(ctx: Context) -> str:
        return "ran"

    with engine_for_test(app, clock=FakeClock(START)) as test_engine:
        test_engine.on_run_completed(lambda run: 1 / 0)  # its error goes to on_error
        test_engine.workflow("extra")(lambda ctx: None)
        served = test_engine.start("report")
        waiting = test_engine.start("elsewhere")
        assert test_engine.run_until_idle() == 1
        assert served.result(timeout=1) == "built"
        assert waiting.status() is RunStatus.PENDING
    assert reported == ["hook <lambda>"]
    assert app.workflows() == ["elsewhere", "report"]
    assert not (tmp_path / "app.db").exists()


CALENDAR_APP = """
from tickwork import Calendar, Context, Cron, Engine

engine = Engine("sqlite:///{db}", calendars=[Calendar("uk", holidays=["2026-03-03"])])


@engine.workflow("standup", schedule=Cron("0 9 * * *", calendar="uk"))
def standup(ctx: Context) -> str:
    return "stood up"
"""


def test_an_apps_declared_calendar_comes_along_and_its_database_is_never_opened(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An app that declares its calendar (``Engine(calendars=[...])``, not
    ``engine.calendar(...)`` at import, which opens the app's database): the harness's
    ``sync_schedules`` stores it before the schedule that uses it, which skips the
    calendar's holiday; the app's database file is never created."""
    (tmp_path / "calapp.py").write_text(CALENDAR_APP.format(db=tmp_path / "app.db"))
    monkeypatch.syspath_prepend(str(tmp_path))
    sys.modules.pop("calapp", None)
    app = importlib.import_module("calapp")
    try:
        clock = FakeClock(START)  # Monday 2 March 2026, 09:00
        with engine_for_test(app.engine, clock=clock) as test_engine:
            assert test_engine.sync_schedules() == ["standup"]
            assert [c.name for c in test_engine.list_calendars()] == ["uk"]
            clock.advance("1d")  # Tuesday 3 March: the calendar's holiday
            assert test_engine.tick() == []
            clock.advance("1d")
            assert len(test_engine.tick()) == 1
    finally:
        sys.modules.pop("calapp", None)
    assert not (tmp_path / "app.db").exists()
