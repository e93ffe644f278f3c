"""A fleet (3 worker processes on one SQLite file, 4 on PostgreSQL) with a backfill and an
``overlap="buffer_all"`` schedule: every occurrence starts exactly one run, the waiting
ones one at a time in occurrence order, each after the one before it ended.

- "bf-all": every 1 s for 4 occurrences, runs of 1.2 s: occurrences wait and drain.
- "bf-back": a backfill of 12 past occurrences, asked twice at once from two threads with
  ``overlap="buffer_all"`` while the workers fire, and once more with "allow": each
  occurrence still has exactly one run, and the runs never overlap.
"""

from __future__ import annotations

import itertools
import os
import time
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from tickwork import Engine, RunInfo

pytestmark = pytest.mark.acceptance

APP = f"{Path(__file__).parent / 'backfill_fleet_app.py'}:engine"
EXECUTIONS = "executions.log"  # backfill_fleet_app.EXECUTIONS
SECOND = timedelta(seconds=1)
BUFFERED = 4
BACKFILLED = 12


def _start_worker(harness: Any, name: str) -> Any:
    """``tickwork worker backfill_fleet_app.py:engine``; the harness kills it at the end."""
    ns = type(harness).worker.__globals__  # the acceptance conftest (see test_schedule_fleet)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ACCEPT_", "TICKWORK_"))}
    env.update(TICKWORK_DATABASE_URL=harness.url, ACCEPT_DIR=str(harness.dir), PYTHONUNBUFFERED="1")
    args = [*ns["tickwork_command"](), "worker", APP, "--log-level", "INFO"]
    worker = ns["WorkerProcess"](name, args, env, harness.dir / f"{name}.log")
    harness.workers.append(worker)
    return worker


def _runs(engine: Engine, key: str) -> list[RunInfo]:
    return sorted(engine.list_runs(schedule_key=key, limit=1000), key=lambda r: r.id)


def _one_at_a_time(harness: Any, runs: list[RunInfo]) -> None:
    """Executed in occurrence order, each after the one before it ended (the app's log of
    executions, on this machine's one clock: see backfill_fleet_app.py)."""
    spans: dict[str, tuple[float, float]] = {}
    for line in (harness.dir / EXECUTIONS).read_text().splitlines():
        run_id, began, ended = line.split(" ")
        assert run_id not in spans, f"{run_id} executed twice"
        spans[run_id] = (float(began), float(ended))
    by_start = sorted(runs, key=lambda r: spans[r.id])
    assert [r.scheduled_for for r in by_start] == sorted(r.scheduled_for for r in runs)  # type: ignore[type-var]
    for before, after in itertools.pairwise(by_start):
        assert spans[after.id][0] >= spans[before.id][1], (before.id, after.id)


def _fleet(harness: Any, workers: int, start_worker: Any) -> None:
    engine: Engine = harness.engine

    @engine.workflow("bf-job")  # as in the app: the test registers the schedules
    def bf_job(ctx: Any, input: dict[str, Any]) -> str:
        raise AssertionError("run by the workers only")

    opening = datetime.fromtimestamp(int(time.time()) + 3, UTC)
    engine.schedule(
        "bf-job", {"seconds": 1.2}, key="bf-all", every="1s", overlap="buffer_all",
        catchup="all", start_at=opening, end_at=opening + BUFFERED * SECOND,
    )  # fmt: skip
    engine.schedule("bf-job", {"seconds": 0.05}, key="bf-back", every="1s", start_at=opening,
                    end_at=opening + SECOND)  # fmt: skip
    span = (opening - BACKFILLED * SECOND, opening)
    procs = [start_worker(harness, f"w{i + 1}") for i in range(workers)]
    with ThreadPoolExecutor(2) as pool:
        answers = list(
            pool.map(lambda _: engine.backfill("bf-back", *span, overlap="buffer_all"), range(2))
        )
    assert answers[0] == answers[1] and len(answers[0]) == BACKFILLED
    assert engine.backfill("bf-back", *span, overlap="allow") == answers[0]  # idempotent

    def done(key: str, count: int) -> bool:
        runs = _runs(engine, key)
        return len(runs) >= count and all(r.status == "completed" for r in runs)

    harness.wait_until(
        lambda: done("bf-all", BUFFERED), "bf-all ran 4 times", alive=procs, timeout=60
    )
    harness.wait_until(
        lambda: done("bf-back", BACKFILLED + 1), "bf-back ran 13 times", alive=procs, timeout=60
    )
    harness.stop_cleanly(procs)

    buffered = _runs(engine, "bf-all")
    assert [r.scheduled_for for r in sorted(buffered, key=lambda r: r.id)] == [
        opening + k * SECOND for k in range(1, BUFFERED + 1)
    ]
    _one_at_a_time(harness, buffered)
    history = engine.schedule_history("bf-all", limit=1000)
    started = [h.occurrence for h in history if h.decision == "started"]
    assert sorted(started) == sorted(r.scheduled_for for r in buffered)  # type: ignore[type-var]
    assert "buffered" in {h.decision for h in history}

    backfilled = [r for r in _runs(engine, "bf-back") if r.scheduled_for < opening]  # type: ignore[operator]
    assert sorted(r.id for r in backfilled) == sorted(answers[0])
    assert len({r.scheduled_for for r in backfilled}) == BACKFILLED
    _one_at_a_time(harness, backfilled)


def test_three_sqlite_workers_start_each_backfilled_and_buffered_occurrence_once(harness):
    _fleet(harness, 3, _start_worker)


def test_four_postgres_workers_start_each_backfilled_and_buffered_occurrence_once(pg_harness):
    def start(harness: Any, name: str) -> Any:
        return harness.app_worker(APP, name=name)

    _fleet(pg_harness, 4, start)
