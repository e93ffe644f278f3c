"""A user's cancel and another worker's firing pass that cancels the same run
(``cancel_previous``) take their rows in the same order, so they never deadlock on
PostgreSQL: the pass holds the schedule's row and then the run's; a cancel waits for the
schedule's row before it touches the run's.

Found by reading the lock order: a cancel took the run's rows first, then its schedule's
(to wake an occurrence buffered behind the run); meeting a pass that held the schedule
and went for the run, PostgreSQL broke the cycle by failing one of the two.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from datetime import timedelta
from typing import Any

import psycopg
import pytest
from tests.pg import fresh_schema
from tests.timeline import START

from tickwork import Context, Engine, RunStatus
from tickwork._store import open_store
from tickwork._store.sql_runs import cancel_idle_run
from tickwork._values.clock import to_ms
from tickwork.testing import FakeClock

RUN = "k@2026-03-01T12:10:00.000Z"  # the occurrence of 12:10


@pytest.fixture
def url() -> Iterator[str]:
    with fresh_schema() as url:
        yield url


def blocked_by(watcher: psycopg.Connection[Any], pid: int) -> bool:
    """Whether some session waits for a lock that backend ``pid`` holds."""
    row = watcher.execute(
        "SELECT count(*) FROM pg_stat_activity WHERE %s = ANY(pg_blocking_pids(pid))", (pid,)
    ).fetchone()
    return row is not None and row[0] > 0


def test_a_cancel_waits_for_a_pass_that_holds_the_schedule_and_cancels_the_run(
    url: str,
) -> None:
    clock = FakeClock(START)
    engine = Engine(url, clock=clock)
    other = open_store(url)  # another worker's
    try:

        @engine.workflow("job")
        def job(ctx: Context) -> None:
            return None

        engine.schedule("job", None, key="k", every="10m", overlap="buffer_one")
        clock.set(START + timedelta(minutes=10))
        assert engine.tick() == [RUN]
        clock.set(START + timedelta(minutes=20))
        assert engine.tick() == []  # 12:20 is buffered behind the pending run of 12:10

        outcome: list[Any] = []

        def cancel() -> None:
            try:
                outcome.append(engine.cancel(RUN))
            except Exception as exc:  # the failure this test looks for
                outcome.append(exc)

        cancelling = threading.Thread(target=cancel)

        def firing_pass(tx: Any) -> bool:
            # What a pass deciding "k" with cancel_previous does: hold the schedule's row,
            # then cancel its run in flight.
            tx.execute("SELECT key FROM tickwork_schedules WHERE key = ? FOR UPDATE", "k")
            (pid,) = tx.execute("SELECT pg_backend_pid()").fetchone()
            cancelling.start()
            with psycopg.connect(url, autocommit=True) as watcher:
                for _ in range(3000):  # until the cancel waits on this transaction
                    if blocked_by(watcher, pid):
                        break
                    threading.Event().wait(0.01)
                else:
                    pytest.fail("the cancel never waited for the pass's lock")
            return cancel_idle_run(other._db, tx, RUN, to_ms(clock.now()))[0]  # type: ignore[attr-defined]

        assert other._db.write(firing_pass) is True  # type: ignore[attr-defined]
        cancelling.join(30)
        assert outcome == [False]  # no deadlock error: the pass had cancelled it already
        run = engine.get_run(RUN)
        assert run is not None and run.status is RunStatus.CANCELLED
    finally:
        engine.close()
        other.close()
