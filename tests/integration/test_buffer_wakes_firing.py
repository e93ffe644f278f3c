"""A debounce or batch buffer's due time reaches the firing loops at once (issue 31): the
emit that opens a buffer tells this process's loop, and on PostgreSQL every worker's
(NOTIFY "events"), so a window's end fires on time rather than at the next poll.

The workers here poll once an hour: a run that starts within the test's wait was started
by the wake-up, never by a poll. (On a PostgreSQL database shared with other test runs,
their NOTIFYs wake the worker too, so there a broken wake-up may go unseen; on a
database of its own each test fails without it.)"""

from __future__ import annotations

import os
import time
from typing import Any

import pytest
from tests.pg import ENV

from tickwork import Context, Engine, On, RunStatus
from tickwork.testing import FakeClock

#: how long (real seconds) a test waits for a run the wake-up should start: far below the
#: hour of the workers' poll, far above anything a loaded machine takes
PATIENCE_S = 30.0


def debounced(engine: Engine) -> None:
    @engine.workflow("sync", on=On("profile.changed", debounce="5m", key="user_id"))
    def sync(ctx: Context, input: Any) -> Any:
        return input


def settle() -> None:
    """Let a new worker's first looks pass (on PostgreSQL its LISTEN connection's
    catch-up pass), so that what wakes it afterwards is the emit."""
    time.sleep(1.0)


def started_runs(engine: Engine) -> list[str]:
    """The runs of ``sync``, once one completed (or [] after PATIENCE_S)."""
    deadline = time.monotonic() + PATIENCE_S
    while time.monotonic() < deadline:
        runs = engine.list_runs(workflow="sync")
        if runs and all(r.status is RunStatus.COMPLETED for r in runs):
            return [r.id for r in runs]
        time.sleep(0.02)
    return []


def test_an_emit_that_opens_a_buffer_tells_this_processs_firing_loop(engine: Engine) -> None:
    debounced(engine)
    engine.sync_subscriptions()
    changed = engine._runtime.schedules_changed
    changed.clear()
    engine.emit("profile.changed", {"user_id": 1})
    assert changed.is_set()  # a new buffer: the loop reads when it is due
    changed.clear()
    engine.emit("profile.changed", {"user_id": 1})
    assert not changed.is_set()  # extended: due later, a loop waking early reads again
    engine.emit("profile.changed", {"user_id": 2})
    assert changed.is_set()  # another key's buffer


def test_a_debounce_window_ends_on_time_in_a_worker_that_polls_hourly(
    engine: Engine, clock: FakeClock
) -> None:
    debounced(engine)
    with engine.worker(poll_interval="1h"):
        settle()
        engine.emit("profile.changed", {"user_id": 1, "v": 1}, id="v1")
        clock.advance("5m")
        assert started_runs(engine) == [f"{engine.list_subscriptions()[0].key}@debounce:v1"]


@pytest.mark.skipif(not os.environ.get(ENV), reason=f"set {ENV} to run PostgreSQL tests")
def test_a_buffer_opened_by_another_process_wakes_the_worker_by_notify(
    clock: FakeClock,
) -> None:
    """Two engines on one PostgreSQL schema stand for two processes: nothing of the
    emitting one's reaches the worker's but the database (its NOTIFY)."""
    from tests.pg import fresh_schema

    with fresh_schema() as url, Engine(url, clock=clock) as worker_side:
        debounced(worker_side)
        with worker_side.worker(poll_interval="1h"), Engine(url, clock=clock) as emitter:
            settle()
            emitter.emit("profile.changed", {"user_id": 1}, id="far")  # no code: routed by rows
            time.sleep(0.5)  # the NOTIFY's way to the worker (without it, the hour's poll)
            clock.advance("5m")
            assert len(started_runs(worker_side)) == 1
