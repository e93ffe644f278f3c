"""PostgreSQL's writes of many rows (``_store/pg_bulk.py``): the server's idle timeout is
armed after them as after any statement, and rows are written as one at a time.

psycopg's ``executemany`` pipelines its rows, and after a pipeline the server leaves
``idle_in_transaction_session_timeout`` disarmed: a worker frozen right after one held its
transaction, and its row locks, for good.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from typing import Any

import psycopg
import pytest
from tests.contract.test_schedules_contract import HOUR, T0, fire, record
from tests.pg import fresh_schema

from tickwork._store import NewRun
from tickwork._store.postgres import PostgresStore
from tickwork._store.sql_firing import ADVANCE, INSERT_HISTORY
from tickwork._store.sql_schedules import SET_STATE
from tickwork._store.transaction import INDEXED
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
    store.schedules.upsert_schedule(record("s"), on_conflict="update", now_ms=0, paused=None)
    rows = [
        ("paused", None, None, None, 5, None, 5, "s"),
        ("active", 60_000, 60_000, None, 5, 6, 6, "s"),
    ]
    with store._pg.transaction() as tx:
        tx.executemany(SET_STATE, rows)
    with store._pg.transaction() as tx:
        row = tx.execute("SELECT state, resumed_at, updated_at FROM tickwork_schedules").fetchone()
    assert tuple(row) == ("active", 6, 6)


class Statements:
    """The statements psycopg is handed on this thread while counting (BEGIN and COMMIT
    are not): a store another test left closing on a thread of its own is not counted."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.sent: list[str] = []
        real = psycopg.Cursor.execute
        counting = threading.get_ident()

        def counted(cursor: Any, query: Any, *args: Any, **kwargs: Any) -> Any:
            if threading.get_ident() == counting:
                self.sent.append(" ".join(str(query).split()))
            return real(cursor, query, *args, **kwargs)

        monkeypatch.setattr(psycopg.Cursor, "execute", counted)


def _advance(key: str, runs: int) -> tuple[object, ...]:
    """``ADVANCE``'s values for a schedule that started ``runs`` runs."""
    return (HOUR, HOUR, None, 0, 5, f"{key}@run", 7, 7, runs, key)


def _runs_counted(store: PostgresStore, key: str) -> int:
    with store._pg.transaction() as tx:
        row = tx.execute("SELECT runs_counted FROM tickwork_schedules WHERE key = ?", key)
        return int(row.fetchone()[0])


def test_writes_of_two_tables_go_as_one_statement_and_both_land(
    store: PostgresStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A firing pass's history and advance (``write_many``): one statement, one round
    trip, and every row of both written."""
    store.schedules.upsert_schedule(record("s"), on_conflict="update", now_ms=0, paused=None)
    statements = Statements(monkeypatch)
    with store._pg.transaction() as tx:
        tx.write_many(((INSERT_HISTORY, _history("s", 3)), (ADVANCE, [_advance("s", 2)])))
    assert len(statements.sent) == 2  # the planner's settings, then the one write
    assert statements.sent[1].startswith("WITH w0 AS (INSERT INTO tickwork_schedule_history")
    with store._pg.transaction() as tx:
        count = tx.execute("SELECT count(*) FROM tickwork_schedule_history").fetchone()[0]
    assert (count, _runs_counted(store, "s")) == (3, 2)


def test_writes_naming_one_row_twice_are_written_in_order_not_as_one_statement(
    store: PostgresStore,
) -> None:
    """Two advances of one schedule in one ``write_many``: both count, as one at a time
    (one UPDATE over both would apply one of them)."""
    store.schedules.upsert_schedule(record("s"), on_conflict="update", now_ms=0, paused=None)
    with store._pg.transaction() as tx:
        rows = [_advance("s", 2), _advance("s", 3)]
        tx.write_many(((INSERT_HISTORY, _history("s", 1)), (ADVANCE, rows)))
    assert _runs_counted(store, "s") == 5


def test_settings_are_set_once_for_statements_that_share_them_and_end_with_them(
    store: PostgresStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two statements under the same settings: one statement sets them; the next statement
    that asks for none runs under the defaults again (a write combined into the same
    transaction is never planned under a firing pass's settings)."""
    statements = Statements(monkeypatch)
    with store._pg.transaction() as tx:
        for _ in range(2):
            assert tx.execute_under(INDEXED, "SHOW enable_seqscan").fetchone()[0] == "off"
        assert tx.execute("SHOW enable_seqscan").fetchone()[0] == "on"
        assert tx.execute("SHOW enable_sort").fetchone()[0] == "on"
    assert sum(sent.startswith("SET LOCAL") for sent in statements.sent) == 2  # set, undo


def test_runs_inserted_in_one_statement_are_queued_and_reported_but_not_those_that_existed(
    store: PostgresStore,
) -> None:
    """``insert_runs``: a run whose id exists (a trigger got there first) is neither
    inserted again nor queued again, and is not among the ids returned."""
    first = NewRun("a", "wf", "1", None, 0, "default", 5, 7, schedule_key="s")
    store.runs.insert_run(first)
    runs = [first, NewRun("b", "wf", "1", None, 0, "default", 5, 9, schedule_key="s")]
    with store._pg.transaction() as tx:
        assert store._pg.insert_runs(tx, runs) == {"b"}
    with store._pg.transaction() as tx:
        queued = tx.execute("SELECT id, available_at FROM tickwork_queue ORDER BY id").fetchall()
    assert [tuple(row) for row in queued] == [("a", 7), ("b", 9)]


def test_a_firing_pass_of_a_hundred_schedules_is_seven_statements(
    store: PostgresStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Firing 100 due schedules: the settings, the due rows, their runs in flight, the
    runs with their queue rows, the history with the advance, the NOTIFY and the
    counters, whatever the number of schedules (BEGIN and COMMIT besides)."""
    for i in range(100):
        store.schedules.upsert_schedule(
            record(f"s{i}"), on_conflict="update", now_ms=T0, paused=None
        )
    statements = Statements(monkeypatch)
    result = fire(store, T0 + HOUR)
    assert (result.fired, len(result.run_ids)) == (100, 100)
    assert len(statements.sent) == 7, statements.sent
