"""A worker that fired an occurrence ahead (``Engine(fire_ahead=...)``) and was killed
before the occurrence came: its run waits in the store, and another worker, firing
nothing ahead, starts it at the occurrence, once. What a run decided ahead needs of
exactly once is what any run needs: its row, committed with the decision."""

from __future__ import annotations

import os
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

pytestmark = pytest.mark.acceptance

APP = f"{Path(__file__).parent / 'fire_ahead_app.py'}:engine"
KEY = "ahead"  # as in fire_ahead_app


def _start_worker(harness: Any, name: str, occurrence: datetime, fire_ahead: str) -> Any:
    """``tickwork worker fire_ahead_app.py:engine``; the harness kills it at the end."""
    ns = type(harness).worker.__globals__  # the acceptance conftest (see test_schedule_fleet)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ACCEPT_", "TICKWORK_"))}
    env.update(
        TICKWORK_DATABASE_URL=harness.url,
        PYTHONUNBUFFERED="1",
        ACCEPT_OCCURRENCE=occurrence.isoformat(),
        ACCEPT_FIRE_AHEAD=fire_ahead,
    )
    args = [*ns["tickwork_command"](), "worker", APP, "--log-level", "INFO"]
    worker = ns["WorkerProcess"](name, args, env, harness.dir / f"{name}.log")
    harness.workers.append(worker)
    return worker


def test_a_run_decided_ahead_survives_its_worker_killed_and_runs_once(harness):
    """Worker A fires 10 s ahead an occurrence 20 s away and is SIGKILLed as soon as the
    run is stored; worker B, started after, runs it at its occurrence: one run, one
    attempt, started no earlier than the occurrence, one "started" decision."""
    occurrence = datetime.fromtimestamp(time.time() // 1 + 20, UTC)
    run_id = f"{KEY}@{occurrence:%Y-%m-%dT%H:%M:%S}.000Z"
    first = _start_worker(harness, "ahead", occurrence, "10s")
    decided = harness.wait_until(
        lambda: harness.engine.get_run(run_id), "the run is decided ahead", alive=[first]
    )
    first.kill()
    assert decided.status == "pending"
    assert decided.created_at < occurrence == decided.scheduled_for
    second = _start_worker(harness, "on-time", occurrence, "")
    done = harness.wait_for_status(run_id, "completed", alive=[second])
    second.terminate()
    assert second.wait_exit() == 0, second.log()
    assert done.attempt == 1
    assert done.started_at is not None and done.started_at >= occurrence
    assert done.result == occurrence.isoformat()
    assert [r.id for r in harness.engine.list_runs(schedule_key=KEY)] == [run_id]
    history = harness.engine.schedule_history(KEY)
    assert [(h.decision, h.occurrence) for h in history] == [("started", occurrence)]
    schedule = harness.engine.get_schedule(KEY)
    assert schedule is not None and schedule.next_fire_at == occurrence + timedelta(hours=1)
