"""A real ``tickwork worker`` whose app declares a schedule naming a calendar the database
does not hold (issue 47): the worker logs an ERROR naming the schedule and the calendar,
serves the other schedules, and registers the first once the calendar is stored. While
it waits, ``tickwork schedules list`` (another process, without the app) says that the
schedule is not registered and why: the worker's record says which it holds back.
"""

from __future__ import annotations

import os
import socket
import subprocess
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


def _schedules_list(harness: Any) -> str:
    """``tickwork schedules list --database URL`` in a process of its own: no app."""
    ns = type(harness).worker.__globals__
    args = [*ns["tickwork_command"](), "schedules", "list", "--database", harness.url]
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ACCEPT_", "TICKWORK_"))}
    env.update(COLUMNS="250")
    done = subprocess.run(args, env=env, capture_output=True, text=True, timeout=60, check=True)
    return done.stdout


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
    listed = _schedules_list(harness)
    assert "1 declared schedule(s) not registered, so they do not fire:" in listed, listed
    assert (
        f"  holiday-report: not registered: no calendar 'uk' is stored (declared by worker "
        f"{socket.gethostname()}:{worker.pid})" in listed
    ), listed
    assert "tickwork calendars set uk" in listed

    engine.calendar("uk", holidays=["2026-12-25"])  # what `tickwork calendars set` does
    registered = harness.wait_until(
        lambda: engine.get_schedule("holiday-report"),
        "the schedule is registered once its calendar is stored",
        alive=[worker],
    )
    assert registered.calendar == "uk"
    harness.wait_until(
        lambda: "not registered" not in _schedules_list(harness),
        "schedules list no longer says it is not registered",
        alive=[worker],
    )
    harness.stop_cleanly([worker])
