"""A worker's PostgreSQL connections terminated under it (``pg_terminate_backend``, as a
failover, a proxy or an administrator does): it listens again on a new connection and
misses nothing, since runs started while it was not listening are found by its poll.

A worker's backends are told apart by their ``application_name`` (``PgHarness``); its
listening connection is the one whose last statement is ``LISTEN`` on its schema's channel.
"""

from __future__ import annotations

import psycopg
import pytest
from psycopg import sql

from tickwork._store.postgres import channel_of

pytestmark = pytest.mark.acceptance

# The schema of the tables: its OID names the channel the workers listen on.
SCHEMA_OID = "SELECT oid FROM pg_namespace WHERE nspname = current_schema()"


def _listen(harness) -> str:
    """The statement a worker of ``harness``'s schema listens with, as the server logs it."""
    with psycopg.connect(harness.url, autocommit=True) as conn:
        (oid,) = conn.execute(SCHEMA_OID).fetchone()
        return sql.SQL("LISTEN {}").format(sql.Identifier(channel_of(oid))).as_string(conn)


def _terminate(harness, pids: list[int]) -> None:
    for pid in pids:
        harness.sql("SELECT pg_terminate_backend(%s)", pid)


def test_worker_listens_again_after_its_listen_connection_is_terminated(pg_harness):
    """Its LISTEN backend terminated: a new one appears, and the runs started right after
    the termination, before the worker could listen again, are all executed."""
    worker = pg_harness.worker(lease="5s")
    listen = _listen(pg_harness)
    (first,) = pg_harness.wait_until(
        lambda: pg_harness.backends(worker, listen), "the worker listens", alive=[worker]
    )
    _terminate(pg_harness, [first])
    runs = [pg_harness.start(n) for n in range(5)]

    second = pg_harness.wait_until(
        lambda: [pid for pid in pg_harness.backends(worker, listen) if pid != first],
        "the worker listens on a new connection",
        alive=[worker],
    )
    for n, run_id in enumerate(runs):
        run = pg_harness.wait_for_status(run_id, "completed", alive=[worker])
        assert run.result == pg_harness.expected(n)
    # And it hears notifications again: runs started now are executed as well.
    later = [pg_harness.start(n) for n in range(5, 10)]
    for n, run_id in enumerate(later, start=5):
        run = pg_harness.wait_for_status(run_id, "completed", alive=[worker])
        assert run.result == pg_harness.expected(n)

    assert first not in pg_harness.backends(worker)
    assert len(second) == 1
    for run_id in runs + later:
        assert pg_harness.counts(run_id) == {"one": 1, "two": 1, "three": 1}, run_id


def test_worker_goes_on_after_every_one_of_its_connections_is_terminated(pg_harness):
    """All its backends (pool and LISTEN) terminated while it executes runs: it reconnects
    by itself, and every run completes with each step executed once."""
    worker = pg_harness.worker(lease="5s", hold="in:two=file:go")
    listen = _listen(pg_harness)
    runs = [pg_harness.start(n) for n in range(4)]
    pg_harness.wait_until(
        lambda: all(pg_harness.counts(r)["two"] == 1 for r in runs),
        "every run is inside step two",
        alive=[worker],
    )
    pg_harness.wait_until(
        lambda: pg_harness.backends(worker, listen), "the worker listens", alive=[worker]
    )
    cut = pg_harness.backends(worker)
    _terminate(pg_harness, cut)
    pg_harness.release("go")  # step two returns: its checkpoint needs a new connection

    for n, run_id in enumerate(runs):
        run = pg_harness.wait_for_status(run_id, "completed", alive=[worker])
        assert run.result == pg_harness.expected(n)
        assert pg_harness.counts(run_id) == {"one": 1, "two": 1, "three": 1}, run_id
    pg_harness.wait_until(
        lambda: [p for p in pg_harness.backends(worker, listen) if p not in cut],
        "the worker listens on a new connection",
        alive=[worker],
    )
