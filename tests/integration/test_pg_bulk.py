"""PostgreSQL's writes of many rows (``_store/pg_bulk.py``): the server's idle timeout is
armed after them as after any statement, and rows are written as one at a time.

psycopg's ``executemany`` pipelines its rows, and after a pipeline the server leaves
``idle_in_transaction_session_timeout`` disarmed: a worker frozen right after one held its
transaction, and its row locks, for good.
"""

from __future__ import annotations

import time
from collections.abc import Iterator

import pytest
from tests.contract.test_schedules_contract import record
from tests.pg import fresh_schema

from tickwork._store.postgres import PostgresStore
from tickwork._store.sql_schedules import INSERT_HISTORY, SET_STATE
from tickwork.errors import StoreError

pytestmark = pytest.mark.postgres

IDLE_TIMEOUT_MS = 500


@pytest.fixture
def store() -> Iterator[PostgresStore]:
    with fresh_schema() as url:
        store = PostgresStore(url, idle_timeout_ms=IDLE_TIMEOUT_MS)
        store.migrate()
        try:
            yield store
        finally:
            store.close()


def _history(key: str, count: int) -> list[tuple[object, ...]]:
    return [(key, i, None, "started", "", f"{key}@{i}", 1, 1, i) for i in range(count)]


def test_a_transaction_left_idle_after_a_write_of_many_rows_is_ended_by_the_server(
    store: PostgresStore,
) -> None:
    """A transaction whose last statement wrote many rows, then left idle past the
    timeout (as by a frozen worker): the server has ended it, so its next statement
    fails and nothing it wrote is stored."""
    with pytest.raises(StoreError), store._pg.transaction() as tx:
        tx.executemany(INSERT_HISTORY, _history("k", 50))
        time.sleep(4 * IDLE_TIMEOUT_MS / 1000)  # idle, as a frozen worker would be
        tx.execute("SELECT 1")
    with store._pg.transaction() as tx:
        assert tx.execute("SELECT count(*) FROM tickwork_schedule_history").fetchone()[0] == 0


def test_rows_naming_one_row_twice_are_written_in_order(store: PostgresStore) -> None:
    """Two changes of one schedule's state in one write: the second is the one that
    stays, as when written one at a time (one UPDATE over both would apply one)."""
    store.upsert_schedule(record("s"), on_conflict="update", now_ms=0, paused=None)
    rows = [
        ("paused", None, None, None, 5, None, 5, "s"),
        ("active", 60_000, 60_000, None, 5, 6, 6, "s"),
    ]
    with store._pg.transaction() as tx:
        tx.executemany(SET_STATE, rows)
    with store._pg.transaction() as tx:
        row = tx.execute("SELECT state, resumed_at, updated_at FROM tickwork_schedules").fetchone()
    assert tuple(row) == ("active", 6, 6)
