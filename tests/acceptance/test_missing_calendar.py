"""A real ``tickwork worker`` whose app declares a schedule naming a calendar the database
does not hold (issue 47): the worker logs an ERROR naming the schedule and the calendar,
serves the other schedules, and registers the first once the calendar is stored.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

pytestmark = pytest.mark.acceptance

APP = f"{Path(__file__).parent / 'missing_calendar_app.py'}:engine"


def _start_worker(harness: Any) -> Any:
    """``tickwork worker missing_calendar_app.py:engine`` on the harness's database (the
    harness kills it when the test ends); the acceptance conftest's ``WorkerProcess``."""
    ns = type(harness).worker.__globals__  # conftest.py is not importable by name
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ACCEPT_", "TICKWORK_"))}
    env.update(TICKWORK_DATABASE_URL=harness.url, PYTHONUNBUFFERED="1")
    args = [*ns["tickwork_command"](), "worker", APP, "--log-level", "INFO"]
    worker = ns["WorkerProcess"]("w1", args, env, harness.dir / "w1.log")
    harness.workers.append(worker)
    return worker


def test_a_schedules_missing_calendar_is_logged_and_the_worker_serves_the_others(
    harness: Any,
) -> None:
    worker = _start_worker(harness)
    engine = harness.engine

    def beats() -> int:
        runs = engine.list_runs(schedule_key="heartbeat", status="completed")
        return len(runs)

    harness.wait_until(lambda: beats() >= 2, "the heartbeat fired and ran", alive=[worker])
    errors = [line for line in worker.log().splitlines() if " ERROR " in line]
    assert any("'holiday-report'" in line and "calendar 'uk'" in line for line in errors), (
        worker.log()
    )
    assert engine.get_schedule("holiday-report") is None  # not registered without it

    engine.calendar("uk", holidays=["2026-12-25"])  # what `tickwork calendars set` does
    registered = harness.wait_until(
        lambda: engine.get_schedule("holiday-report"),
        "the schedule is registered once its calendar is stored",
        alive=[worker],
    )
    assert registered.calendar == "uk"
    harness.stop_cleanly([worker])
