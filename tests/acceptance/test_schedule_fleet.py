"""Three worker processes on one SQLite file share 1-second interval schedules: every
occurrence starts exactly one run — none twice, none missed — and every run completes.

Each worker registers the same schedules when it imports the app (``schedule_app.py``),
so the test also proves that registration is idempotent across a fleet: revision 1 stays.
Firing lateness is printed (``pytest -s``), never asserted: machines are shared and noisy.
"""

from __future__ import annotations

import itertools
import os
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest

from tickwork import RunInfo

pytestmark = pytest.mark.acceptance

APP = f"{Path(__file__).parent / 'schedule_app.py'}:engine"
KEYS = [f"fleet-{name}" for name in ("a", "b", "c", "d", "e")]  # as in schedule_app
WORKERS = 3
#: occurrences per schedule to wait for: about 10 s of firing at one per second.
OCCURRENCES = 10
SECOND = timedelta(seconds=1)


def _conftest(harness: Any) -> dict[str, Any]:
    """The acceptance conftest's namespace (``WorkerProcess``, ``tickwork_command``).

    Not importable by name: pytest loads every ``conftest.py`` as a module named
    "conftest", so whichever came last owns ``sys.modules["conftest"]``.
    """
    return type(harness).worker.__globals__  # type: ignore[no-any-return]


def _start_worker(harness: Any, name: str) -> Any:
    """``tickwork worker schedule_app.py:engine`` on the harness's database; the harness
    kills it when the test ends."""
    ns = _conftest(harness)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ACCEPT_", "TICKWORK_"))}
    env.update(TICKWORK_DATABASE_URL=harness.url, PYTHONUNBUFFERED="1")
    args = [*ns["tickwork_command"](), "worker", APP, "--log-level", "INFO"]
    worker = ns["WorkerProcess"](name, args, env, harness.dir / f"{name}.log")
    harness.workers.append(worker)
    return worker


def _runs(harness: Any, key: str) -> list[RunInfo]:
    """The schedule's runs, oldest occurrence first."""
    runs = harness.engine.list_runs(schedule_key=key, limit=10_000)
    return sorted(runs, key=lambda run: (run.scheduled_for, run.id))


def _run_id(key: str, run: RunInfo) -> str:
    """DESIGN §3: key@<UTC ISO occurrence>, to the millisecond."""
    when = run.scheduled_for
    assert when is not None
    return f"{key}@{when:%Y-%m-%dT%H:%M:%S}.{when.microsecond // 1000:03d}Z"


def _percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def test_three_workers_fire_each_one_second_occurrence_exactly_once(harness):
    """5 schedules every 1 s, 3 workers for about 10 s: consecutive runs of each schedule
    are exactly 1 s apart from the first occurrence to the last decided one, with no gap
    and no duplicate, each id is key@occurrence, and every run completed."""
    workers = [_start_worker(harness, f"w{i + 1}") for i in range(WORKERS)]

    def fired_enough() -> bool:
        return all(len(_runs(harness, key)) >= OCCURRENCES for key in KEYS)

    # Polls the database (every 20 ms): about 10 s of firing, 60 s at most.
    harness.wait_until(fired_enough, f"each schedule has fired {OCCURRENCES} times", alive=workers)
    harness.stop_cleanly(workers)
    # Each drained what it held, the runs its last firing pass claimed for its threads
    # included (docs/behaviour.md, Workers): nothing was left running with no lease.
    for worker in workers:
        assert "stopped (0 run(s) left to other workers)" in worker.log(), worker.log()

    lateness_ms: list[float] = []
    for key in KEYS:
        schedule = harness.engine.get_schedule(key)
        assert schedule is not None, key
        assert schedule.revision == 1, f"{key}: re-registration by each worker changed it"
        assert schedule.every == SECOND
        runs = _runs(harness, key)
        occurrences = [run.scheduled_for for run in runs]
        assert len(set(occurrences)) == len(occurrences), f"{key}: an occurrence fired twice"
        # The first occurrence is one interval after the first registration's whole second
        # (its anchor).
        anchor = schedule.created_at.replace(microsecond=0)
        assert occurrences[0] == anchor + SECOND, key
        gaps = [b - a for a, b in itertools.pairwise(occurrences)]
        assert gaps == [SECOND] * len(gaps), f"{key}: not every 1 s: {gaps}"
        # Nothing after the last run was decided and dropped: the next one is still to come.
        assert schedule.next_fire_at == occurrences[-1] + SECOND, key
        for run in runs:
            assert run.id == _run_id(key, run)
            assert run.status == "completed", (run.id, run.status, run.error)
            assert run.attempt == 1, run.id
            assert run.schedule_revision == 1, run.id
            assert run.result["scheduled_for"] == run.scheduled_for.isoformat(), run.id
            lateness_ms.append((run.created_at - run.scheduled_for) / timedelta(milliseconds=1))
        history = harness.engine.schedule_history(key, limit=10_000)
        decisions = {entry.decision for entry in history}
        assert decisions == {"started"}, f"{key}: {[(h.decision, h.reason) for h in history]}"
        assert sorted(entry.run_id for entry in history) == sorted(run.id for run in runs)

    print(
        f"\nfiring lateness (created_at - scheduled_for) over {len(lateness_ms)} runs of "
        f"{len(KEYS)} schedules, {WORKERS} workers: p50 {_percentile(lateness_ms, 0.5):.0f} ms, "
        f"p99 {_percentile(lateness_ms, 0.99):.0f} ms, max {max(lateness_ms):.0f} ms"
    )
