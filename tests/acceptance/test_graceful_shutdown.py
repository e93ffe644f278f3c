"""SIGTERM stops a worker gracefully: it lets in-flight runs finish within the drain
timeout and exits 0; runs still in flight after it are released at once, so another
worker takes them over without waiting for their leases to expire.
"""

from __future__ import annotations

import signal
import time

import pytest

pytestmark = pytest.mark.acceptance


def test_sigterm_lets_in_flight_runs_finish_then_exits_zero(harness):
    """Runs inside a step when SIGTERM arrives finish on the same worker, which exits 0."""
    # Step two returns only once this process has received SIGTERM: whatever the run does
    # after it, it does while the worker is shutting down.
    worker = harness.worker(hold="in:two=sigterm", drain_timeout="60s")
    run_ids = [harness.start(n) for n in (1, 2)]
    harness.wait_until(
        lambda: all(harness.counts(r)["two"] == 1 for r in run_ids),
        "both runs are inside step two",
        alive=[worker],
    )
    worker.terminate()

    assert worker.wait_exit() == 0, worker.log()
    for n, run_id in zip((1, 2), run_ids, strict=True):
        run = harness.run(run_id)
        assert run.status == "completed", (run, worker.log())
        assert run.result == harness.expected(n)
        assert harness.counts(run_id) == {"one": 1, "two": 1, "three": 1}
        assert {pid for _step, pid in harness.executed_by(run_id)} == {worker.pid}


def test_sigterm_to_serve_with_a_worker_lets_in_flight_runs_finish_then_exits_zero(harness):
    """``tickwork serve --worker`` drains like ``tickwork worker``: uvicorn stops on the
    SIGTERM, then the runs in flight finish in the same process (it used to die with
    143 as uvicorn raised the signal again, cutting them off)."""
    server = harness.worker(hold="in:two=file:go", serve=True)
    run_ids = [harness.start(n, run_id=f"served-{n}") for n in (5, 6)]
    harness.wait_until(
        lambda: all(harness.counts(r)["two"] == 1 for r in run_ids),
        "both runs are inside step two",
        alive=[server],
    )
    server.terminate()
    harness.wait_until(
        lambda: "SIGTERM received, draining" in server.log(), "serve drains", alive=[server]
    )
    harness.release("go")

    assert server.wait_exit() == 0, server.log()
    for n, run_id in zip((5, 6), run_ids, strict=True):
        run = harness.run(run_id)
        assert run.status == "completed", (run, server.log())
        assert run.result == harness.expected(n)
        assert harness.counts(run_id) == {"one": 1, "two": 1, "three": 1}
        assert {pid for _step, pid in harness.executed_by(run_id)} == {server.pid}


def test_sigterm_past_the_drain_timeout_releases_leases_for_another_worker(harness):
    """Runs still in flight after the drain timeout are released: the next worker takes
    them at once, though their hour-long leases are far from expiring."""
    first = harness.worker(lease="1h", hold="in:two", drain_timeout="200ms")
    run_ids = [harness.start(n) for n in (3, 4)]
    harness.wait_until(
        lambda: all(harness.counts(r)["two"] == 1 for r in run_ids),
        "both runs are inside step two",
        alive=[first],
    )
    first.terminate()
    assert first.wait_exit() == 0, first.log()
    assert "stopped (2 run(s) left to other workers)" in first.log()
    for run_id in run_ids:
        row = harness.raw_run(run_id)
        assert (row["status"], row["lease_token"]) == ("running", None)

    second = harness.worker(lease="1h")
    for n, run_id in zip((3, 4), run_ids, strict=True):
        run = harness.wait_for_status(run_id, "completed", alive=[second])
        assert run.result == harness.expected(n)
        assert harness.counts(run_id) == {"one": 1, "two": 2, "three": 1}
        assert harness.executed_by(run_id) == [
            ("one", first.pid), ("two", first.pid), ("two", second.pid), ("three", second.pid),
        ]  # fmt: skip


class WorkerDeadlocked(AssertionError):
    """The worker's main thread waits for a lock it holds itself (see the xfail below)."""


def test_sigterm_arriving_while_the_loop_clears_its_wake_event_still_stops_the_worker(harness):
    """SIGTERM delivered while the worker loop is inside ``wake.clear()`` stops the worker."""
    # The app raises SIGTERM in the worker's main thread at that instant (see
    # acceptance_workflows.sigterm_inside_event_clear); status 3 means it hung there.
    worker = harness.worker(env={"ACCEPT_SIGTERM_INSIDE_EVENT_CLEAR": "1"})
    status = worker.wait_exit()
    if status == 3 and "DEADLOCK" in worker.log():
        raise WorkerDeadlocked(worker.log())
    assert status == 0, worker.log()


def test_stop_and_continue_leave_the_worker_running_and_a_later_sigterm_drains_it(harness):
    """SIGSTOP/SIGCONT (a VM pause, a debugger, ^Z) is not a request to stop: the worker
    goes on executing runs, and a later SIGTERM still drains it to exit 0."""
    worker = harness.worker()
    harness.wait_for_status(harness.start(5), "completed", alive=[worker])
    for _ in range(5):
        worker.proc.send_signal(signal.SIGSTOP)
        time.sleep(0.3)  # stopped across several of the loop's 0.25 s signal waits
        worker.proc.send_signal(signal.SIGCONT)
        time.sleep(0.1)
    run = harness.wait_for_status(harness.start(6), "completed", alive=[worker])
    assert run.result == harness.expected(6)
    worker.terminate()
    assert worker.wait_exit() == 0, worker.log()
    assert "draining" in worker.log()


def test_a_second_sigint_releases_the_abandoned_runs_and_records_the_worker_stopped(harness):
    """Ctrl-C twice: the first starts the drain, the second exits at once (status 1)
    without waiting for the run stuck in step two; yet its hour-long lease is released,
    so a second worker takes the run over at once, and ``list_workers`` shows the first
    worker stopped, not alive."""
    first = harness.worker(lease="1h", hold="in:two", drain_timeout="1h")
    run_id = harness.start(7)
    harness.wait_until(lambda: harness.counts(run_id)["two"] == 1, "the run is inside step two")
    first.proc.send_signal(signal.SIGINT)
    harness.wait_until(lambda: "draining" in first.log(), "the worker drains", alive=[first])
    first.proc.send_signal(signal.SIGINT)

    assert first.wait_exit() == 1, first.log()
    row = harness.raw_run(run_id)
    assert (row["status"], row["lease_token"]) == ("running", None), first.log()
    [gone] = [w for w in harness.engine.list_workers() if w.pid == first.pid]
    assert (gone.alive, gone.stopped_at is not None) == (False, True), first.log()

    second = harness.worker(lease="1h")
    run = harness.wait_for_status(run_id, "completed", alive=[second])
    assert run.result == harness.expected(7)
    assert harness.executed_by(run_id) == [
        ("one", first.pid), ("two", first.pid), ("two", second.pid), ("three", second.pid),
    ]  # fmt: skip
