"""Several worker processes on one SQLite file share the runs: each step of each run is
executed exactly once, by whichever worker claimed it, and every run completes.
"""

from __future__ import annotations

import time
from collections import Counter

import pytest

pytestmark = pytest.mark.acceptance

RUNS = 200
WORKERS = 3
THREADS = 8


def test_three_workers_execute_every_step_of_200_runs_exactly_once(harness):
    """200 runs, 3 worker processes of 8 threads: no step of any attempt executes twice."""
    run_ids = [harness.start(n) for n in range(RUNS)]
    # Step one waits for the "go" file, so each worker fills its threads and the others
    # must claim too: all three are sure to take part, all at once.
    workers = [harness.worker(hold="in:one=file:go", threads=THREADS) for _ in range(WORKERS)]
    pids = {w.pid for w in workers}
    harness.wait_until(
        lambda: len(harness.executions()) == WORKERS * THREADS,
        f"every thread of the {WORKERS} workers holds a run",
        alive=workers,
    )
    assert {e.pid for e in harness.executions()} == pids
    harness.release("go")

    harness.wait_until(
        lambda: len(harness.engine.list_runs(status="completed", limit=RUNS)) == RUNS,
        f"all {RUNS} runs are completed",
        alive=workers,
    )

    for n, run_id in enumerate(run_ids):
        run = harness.run(run_id)
        assert run.result == harness.expected(n), run_id
        assert run.attempt == 1, run_id
        assert harness.completed_steps(run_id) == ["one", "nap", "two", "three"], run_id
    executions = harness.executions()
    twice = {k: c for k, c in Counter((e.run_id, e.attempt, e.step) for e in executions).items()
             if c > 1}  # fmt: skip
    assert twice == {}, f"executed more than once: {twice}"
    assert Counter((e.run_id, e.step) for e in executions) == {
        (run_id, step): 1 for run_id in run_ids for step in ("one", "two", "three")
    }
    assert {e.pid for e in executions} == pids


def test_a_step_outlasting_its_lease_is_not_taken_over_while_its_worker_lives(harness):
    """A live worker keeps renewing its lease: another worker polling past the first
    lease's expiry does not take the run, and no step runs twice."""
    first = harness.worker(lease="3s", hold="in:two=file:finish")
    run_id = harness.start(6)
    harness.wait_until(
        lambda: harness.counts(run_id)["two"] == 1, "step two has begun", alive=[first]
    )
    claimed = harness.raw_run(run_id)
    first_expiry_ms = claimed["available_at"]
    second = harness.worker(lease="3s")
    # Wait (not assert) until the first lease is 2 s past its expiry: `second`, which
    # looks for claimable runs every second, has had its chances to take the run.
    harness.wait_until(
        lambda: time.time() * 1000 > first_expiry_ms + 2000,
        "the first lease is long expired",
        alive=[first, second],
    )
    row = harness.raw_run(run_id)
    assert row["status"] == "running"
    assert row["available_at"] > first_expiry_ms, "the lease was not renewed"
    assert row["lease_token"] == claimed["lease_token"], "the run changed hands"
    harness.release("finish")
    run = harness.wait_for_status(run_id, "completed", alive=[first, second])

    assert run.result == harness.expected(6)
    assert harness.counts(run_id) == {"one": 1, "two": 1, "three": 1}
    assert {pid for _step, pid in harness.executed_by(run_id)} == {first.pid}
