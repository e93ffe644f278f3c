"""Real ``tickwork worker`` processes record themselves (DESIGN §8): a worker killed with
SIGKILL is shown not alive once it has missed three renewals (never before), and one
stopped with SIGTERM records its stop. SQLite and PostgreSQL.

The workers renew every 200 ms (``$TICKWORK_WORKER_HEARTBEAT``), so "three missed
renewals" comes within a second; the waits are bounds, never expectations of speed.
"""

from __future__ import annotations

from datetime import timedelta
from typing import TYPE_CHECKING

import pytest

from tickwork import WorkerInfo

if TYPE_CHECKING:
    from tests.acceptance.conftest import Harness, WorkerProcess

pytestmark = pytest.mark.acceptance

RENEW = timedelta(milliseconds=200)
HEARTBEAT = {"TICKWORK_WORKER_HEARTBEAT": "200ms"}


@pytest.fixture(params=["sqlite", "postgres"])
def any_harness(request: pytest.FixtureRequest) -> Harness:
    harness: Harness = request.getfixturevalue(
        "harness" if request.param == "sqlite" else "pg_harness"
    )
    return harness


def record_of(harness: Harness, worker: WorkerProcess) -> WorkerInfo | None:
    """The record the worker process wrote of itself, if any (found by its pid)."""
    found = [w for w in harness.engine.list_workers() if w.pid == worker.pid]
    return found[0] if found else None


def test_a_killed_worker_is_not_alive_after_three_missed_renewals(any_harness: Harness) -> None:
    harness = any_harness
    worker = harness.worker(env=HEARTBEAT)
    first = harness.wait_until(
        lambda: (r := record_of(harness, worker)) is not None and r.alive and r,
        "the worker recorded itself alive",
        alive=[worker],
    )
    assert first.workflows == tuple(harness.engine.workflows())
    assert first.pools == ("default",) and first.stopped_at is None
    harness.wait_until(
        lambda: (r := record_of(harness, worker)) is not None and r.last_seen > first.last_seen,
        "the worker renewed its record",
        alive=[worker],
    )

    worker.kill()
    gone = harness.wait_until(
        lambda: (r := record_of(harness, worker)) is not None and not r.alive and r,
        "the killed worker is shown not alive",
    )
    # Not alive because it missed three renewals (not because it said it stopped), and
    # not before: by the engine's clock, more than three intervals passed since its last.
    assert gone.stopped_at is None
    assert harness.engine.clock.now() - gone.last_seen > 3 * RENEW
    assert [w.id for w in harness.engine.list_workers()] == [first.id]  # listed still


def test_a_worker_stopped_with_sigterm_records_its_stop(any_harness: Harness) -> None:
    harness = any_harness
    worker = harness.worker(env=HEARTBEAT)
    harness.wait_until(
        lambda: (r := record_of(harness, worker)) is not None and r.alive,
        "the worker recorded itself alive",
        alive=[worker],
    )
    worker.terminate()
    assert worker.wait_exit() == 0
    stopped = record_of(harness, worker)
    assert stopped is not None and not stopped.alive and stopped.stopped_at is not None
