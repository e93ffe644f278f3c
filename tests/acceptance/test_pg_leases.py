"""On PostgreSQL, with real worker processes: a worker whose lease ran out while it was
still inside a step cannot record that step, nor a result, once another worker has taken
the run over; the new owner alone finishes it.

The store contract proves the fencing on both backends call by call
(``tests/contract/test_runs_contract.py``); this is the same story end to end on
PostgreSQL, as ``test_crash_recovery`` tells it on SQLite.
"""

from __future__ import annotations

from datetime import timedelta

import pytest

pytestmark = pytest.mark.acceptance


def test_stale_lease_owner_records_nothing_after_another_worker_took_the_run(pg_harness):
    """`first` is inside step two when `second`, its clock an hour ahead, sees the lease as
    long expired and takes the run; when `first`'s step two returns, its checkpoint is
    refused, and `second` runs step two again, then step three, and ends the run."""
    first = pg_harness.worker(lease="2s", hold="in:two=file:thaw")
    run_id = pg_harness.start(5)
    pg_harness.wait_until(
        lambda: pg_harness.counts(run_id)["two"] == 1, "step two has begun", alive=[first]
    )
    token = pg_harness.raw_run(run_id)["lease_token"]

    second = pg_harness.worker(lease="2s", clock_offset="1h", hold="in:three=file:finish")
    pg_harness.wait_until(
        lambda: pg_harness.counts(run_id)["three"] == 1,
        "the run was taken over",
        alive=[first, second],
    )
    assert pg_harness.raw_run(run_id)["lease_token"] != token
    pg_harness.release("thaw")  # `first`'s stale step two returns and tries to record it
    pg_harness.wait_until(
        lambda: f"run {run_id} lost its lease" in first.log(),
        "the stale worker was refused",
        alive=[first, second],
    )
    # Step two's checkpoint is `second`'s: stamped by its clock, an hour ahead.
    assert pg_harness.completed_steps(run_id) == ["one", "nap", "two"]
    steps = {s.name: s for s in pg_harness.engine.list_steps(run_id)}
    assert steps["two"].started_at - steps["one"].finished_at > timedelta(minutes=59)
    first.terminate()
    assert first.wait_exit() == 0, first.log()
    pg_harness.release("finish")
    run = pg_harness.wait_for_status(run_id, "completed", alive=[second])

    assert run.result == pg_harness.expected(5)
    assert run.attempt == 1
    assert pg_harness.counts(run_id) == {"one": 1, "two": 2, "three": 1}
    assert pg_harness.executed_by(run_id) == [
        ("one", first.pid), ("two", first.pid), ("two", second.pid), ("three", second.pid),
    ]  # fmt: skip
    assert pg_harness.completed_steps(run_id) == ["one", "nap", "two", "three"]
    assert run.finished_at - steps["one"].finished_at > timedelta(minutes=59)  # `second`'s
