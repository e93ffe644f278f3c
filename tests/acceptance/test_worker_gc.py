"""A ``tickwork worker`` process leaves the objects it holds once started (modules, the
app, the store: tens of thousands that live as long as it) out of the garbage
collector's full passes, which otherwise paused whichever thread allocated at that moment
(a firing pass, most often) for 13-22 ms about every 30 s (bench/README.md, "Session 23:
the 50-schedule lateness row was the garbage collector")."""

from __future__ import annotations

import gc

import pytest

pytestmark = pytest.mark.acceptance


def test_a_worker_process_freezes_what_it_holds_once_started(harness):
    worker = harness.worker()
    run_id = harness.engine.start("frozen-objects").id
    run = harness.wait_for_status(run_id, "completed", alive=[worker])
    assert run.result > 10_000, worker.log()  # the app and tickwork's modules at least
    harness.stop_cleanly([worker])


def test_an_embedded_worker_leaves_the_applications_heap_alone(harness):
    """``Engine.worker()`` runs inside someone else's process: no freeze there."""
    before = gc.get_freeze_count()
    with harness.engine.worker(threads=1):
        pass
    assert gc.get_freeze_count() == before
