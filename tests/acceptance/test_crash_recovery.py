"""A worker SIGKILLed at any point of a run: another worker finishes the run, and no step
whose checkpoint was stored is executed again.

The run is ``three-steps``: step one, a durable sleep, steps two and three. Each step logs
every execution (``run_id attempt step pid``), so "executed once" is counted, not assumed.
Workers hold 1-second leases, so the survivor takes a dead worker's run soon.
"""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.acceptance


def test_killed_inside_step_resumes_without_rerunning_completed_steps(harness):
    """SIGKILL inside step two: the next worker re-runs only step two, then finishes."""
    first = harness.worker(lease="1s", hold="in:two")
    run_id = harness.start(7)
    harness.wait_until(
        lambda: harness.counts(run_id)["two"] == 1, "step two has begun", alive=[first]
    )
    first.kill()
    assert harness.completed_steps(run_id) == ["one", "nap"]

    second = harness.worker(lease="1s")
    run = harness.wait_for_status(run_id, "completed", alive=[second])

    assert run.result == harness.expected(7)
    assert harness.counts(run_id) == {"one": 1, "two": 2, "three": 1}
    assert harness.executed_by(run_id) == [
        ("one", first.pid), ("two", first.pid), ("two", second.pid), ("three", second.pid),
    ]  # fmt: skip
    assert harness.completed_steps(run_id) == ["one", "nap", "two", "three"]


def test_killed_right_after_a_checkpoint_resumes_from_it(harness):
    """SIGKILL just after step one's checkpoint is stored: step one is never run again."""
    first = harness.worker(lease="1s", hold="after:one")
    run_id = harness.start(8)
    harness.wait_until(
        lambda: harness.completed_steps(run_id) == ["one"],
        "step one's checkpoint is stored",
        alive=[first],
    )
    first.kill()

    second = harness.worker(lease="1s")
    run = harness.wait_for_status(run_id, "completed", alive=[second])

    assert run.result == harness.expected(8)
    assert harness.counts(run_id) == {"one": 1, "two": 1, "three": 1}
    assert harness.executed_by(run_id) == [
        ("one", first.pid), ("two", second.pid), ("three", second.pid),
    ]  # fmt: skip


def test_killed_while_sleeping_wakes_on_another_worker_without_rerunning_steps(harness):
    """SIGKILL while the run sleeps durably: a later worker wakes it and runs only the rest."""
    first = harness.worker(lease="1s")
    run_id = harness.start(9, nap="1h")
    harness.wait_until(
        lambda: harness.status(run_id) == "sleeping", "the run sleeps", alive=[first]
    )
    first.kill()
    assert harness.completed_steps(run_id) == ["one", "nap"]

    # An hour ahead: the worker that comes back once the nap is over.
    second = harness.worker(lease="1s", clock_offset="1h")
    run = harness.wait_for_status(run_id, "completed", alive=[second])

    assert run.result == harness.expected(9)
    assert harness.counts(run_id) == {"one": 1, "two": 1, "three": 1}
    assert harness.executed_by(run_id) == [
        ("one", first.pid), ("two", second.pid), ("three", second.pid),
    ]  # fmt: skip


def test_worker_whose_lease_ran_out_is_fenced_off_after_takeover(harness):
    """A worker still inside step two when another took its run over (its lease looked
    expired) can store nothing: the new owner alone runs step three and ends the run."""
    first = harness.worker(lease="1s", hold="in:two=file:thaw")
    run_id = harness.start(5)
    harness.wait_until(
        lambda: harness.counts(run_id)["two"] == 1, "step two has begun", alive=[first]
    )
    # An hour ahead, `second` sees the lease `first` keeps renewing as long expired: the
    # stale owner of a paused VM or a skewed clock, without freezing a process (which
    # could freeze it holding SQLite's write lock). `second` takes the run, re-runs the
    # unfinished step two and waits inside step three.
    second = harness.worker(lease="1s", clock_offset="1h", hold="in:three=file:finish")
    harness.wait_until(
        lambda: harness.counts(run_id)["three"] == 1,
        "the run was taken over",
        alive=[first, second],
    )
    harness.release("thaw")
    # `first`'s step two now returns. SIGTERM drains, so once `first` has exited, whatever
    # its stale execution was going to do is done.
    first.terminate()
    assert first.wait_exit() == 0, first.log()
    harness.release("finish")
    run = harness.wait_for_status(run_id, "completed", alive=[second])

    assert run.result == harness.expected(5)
    assert harness.counts(run_id) == {"one": 1, "two": 2, "three": 1}
    assert harness.executed_by(run_id) == [
        ("one", first.pid), ("two", first.pid), ("two", second.pid), ("three", second.pid),
    ]  # fmt: skip


def test_run_killed_at_every_point_in_turn_completes_with_each_step_done_once(harness):
    """One run, its worker SIGKILLed three times (after a checkpoint, asleep, inside a
    step): the fourth worker finishes it, and only the interrupted step ran twice."""
    w1 = harness.worker(lease="1s", hold="after:one")
    run_id = harness.start(11, nap="1h")
    harness.wait_until(
        lambda: harness.completed_steps(run_id) == ["one"], "step one is stored", alive=[w1]
    )
    w1.kill()

    w2 = harness.worker(lease="1s")
    harness.wait_until(lambda: harness.status(run_id) == "sleeping", "the run sleeps", alive=[w2])
    w2.kill()

    # The nap is over for workers an hour ahead.
    w3 = harness.worker(lease="1s", clock_offset="1h", hold="in:three")
    harness.wait_until(
        lambda: harness.counts(run_id)["three"] == 1, "step three has begun", alive=[w3]
    )
    w3.kill()

    w4 = harness.worker(lease="1s", clock_offset="1h")
    run = harness.wait_for_status(run_id, "completed", alive=[w4])

    assert run.result == harness.expected(11)
    assert harness.counts(run_id) == {"one": 1, "two": 1, "three": 2}
    assert harness.executed_by(run_id) == [
        ("one", w1.pid), ("two", w3.pid), ("three", w3.pid), ("three", w4.pid),
    ]  # fmt: skip
    assert harness.completed_steps(run_id) == ["one", "nap", "two", "three"]
