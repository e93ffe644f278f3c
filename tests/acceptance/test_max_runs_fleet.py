"""A fleet (3 worker processes on one SQLite file, 4 on PostgreSQL) fires schedules with
``max_runs``: none ever starts more runs than its limit — the count is checked and
advanced in the transaction that inserts the runs — and each, having started exactly its
runs, deactivates itself once, with its note. A backfill asked twice at once from two
threads while the workers fire counts toward the same limit.

- "lim-0".."lim-5": every 1 s from a common opening, ``catchup="all"`` (so a stalled fleet
  starts late occurrences late rather than dropping them: exactly ``LIMIT`` runs each).
- "lim-back": the same, with ``BACKFILL_LIMIT`` runs shared between its own occurrences and
  a backfill of ``BACKFILLED`` past ones.
"""

from __future__ import annotations

import os
import time
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from tickwork import Context, Decision, Engine, ScheduleState

pytestmark = pytest.mark.acceptance

APP = f"{Path(__file__).parent / 'max_runs_fleet_app.py'}:engine"
SECOND = timedelta(seconds=1)
KEYS = [f"lim-{n}" for n in range(6)]
LIMIT = 4
BACKFILL_LIMIT = 8
BACKFILLED = 6


def _start_worker(harness: Any, name: str) -> Any:
    """``tickwork worker max_runs_fleet_app.py:engine``; the harness kills it at the end."""
    ns = type(harness).worker.__globals__  # the acceptance conftest (see test_schedule_fleet)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ACCEPT_", "TICKWORK_"))}
    env.update(TICKWORK_DATABASE_URL=harness.url, PYTHONUNBUFFERED="1")
    args = [*ns["tickwork_command"](), "worker", APP, "--log-level", "INFO"]
    worker = ns["WorkerProcess"](name, args, env, harness.dir / f"{name}.log")
    harness.workers.append(worker)
    return worker


def _fleet(harness: Any, workers: int, start_worker: Any) -> None:
    engine: Engine = harness.engine

    @engine.workflow("limited-job")  # as in the app: the test registers the schedules
    def limited_job(ctx: Context) -> str:
        raise AssertionError("run by the workers only")

    opening = datetime.fromtimestamp(int(time.time()) + 3, UTC)
    limits = {key: LIMIT for key in KEYS} | {"lim-back": BACKFILL_LIMIT}
    for key, limit in limits.items():
        engine.schedule(
            "limited-job", key=key, every="1s", start_at=opening, catchup="all", max_runs=limit
        )
    procs = [start_worker(harness, f"w{i + 1}") for i in range(workers)]
    span = (opening - BACKFILLED * SECOND, opening)
    with ThreadPoolExecutor(2) as pool:
        answers = list(pool.map(lambda _: engine.backfill("lim-back", *span), range(2)))
    assert answers[0] == answers[1]  # the same runs, whichever thread got there first

    def spent_and_done() -> bool:
        """Every schedule deactivated itself and every run it started completed (the
        last may still be pending when its schedule deactivates)."""
        return all(
            (info := engine.get_schedule(key)) is not None
            and info.state is ScheduleState.INACTIVE
            and all(r.status == "completed" for r in engine.list_runs(schedule_key=key))
            for key in limits
        )

    harness.wait_until(
        spent_and_done, "every schedule started its runs, all completed", alive=procs, timeout=60
    )
    harness.stop_cleanly(procs)

    for key, limit in limits.items():
        runs = engine.list_runs(schedule_key=key, limit=1000)
        assert len(runs) == limit, (key, sorted(r.id for r in runs))
        assert len({r.scheduled_for for r in runs}) == limit, key
        assert all(r.status == "completed" for r in runs), key
        info = engine.get_schedule(key)
        assert info is not None and info.runs_left == 0
        assert info.note == f"started its {limit} runs (max_runs={limit})"
        history = engine.schedule_history(key, limit=1000)
        deactivations = [h for h in history if h.reason == info.note]
        assert len(deactivations) == 1, key
        assert deactivations[0].decision is Decision.MAX_RUNS_REACHED
        started = [h for h in history if h.decision in (Decision.STARTED, Decision.BACKFILLED)]
        assert sorted(h.run_id for h in started) == sorted(r.id for r in runs), key  # type: ignore[type-var]
    backfilled = [r for r in engine.list_runs(schedule_key="lim-back") if r.scheduled_for < opening]  # type: ignore[operator]
    assert sorted(r.id for r in backfilled) == sorted(answers[0])


def test_three_sqlite_workers_never_start_more_than_max_runs(harness):
    _fleet(harness, 3, _start_worker)


def test_four_postgres_workers_never_start_more_than_max_runs(pg_harness):
    def start(harness: Any, name: str) -> Any:
        return harness.app_worker(APP, name=name)

    _fleet(pg_harness, 4, start)
