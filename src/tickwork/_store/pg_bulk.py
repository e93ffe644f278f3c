"""PostgreSQL's writes of many rows: each as one statement over all its rows, never a
psycopg ``executemany``.

psycopg sends an ``executemany`` in pipeline mode, which it ends with a Sync followed by
a Flush. The server arms ``idle_in_transaction_session_timeout`` when it answers the Sync
and disarms it when it reads the Flush, and nothing arms it again until the next
statement (PostgreSQL 15, checked): a worker frozen right after one kept its
transaction, and the row locks of the 100 schedules it was firing, for as long as it
stayed frozen. A plain statement ends with a Sync alone, after which the timeout runs.

So each statement the store sends with many rows has a bulk form here: the rows go as
one parameter, a JSON array read with the table's row type (``json_populate_recordset``:
the column types are the table's own), in one round trip. Writes by key are split where a
key repeats, so each row sees the one before it as it would one at a time. A statement
without a bulk form is sent row by row: slower, never unbounded.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from .._values.records import NewRun
from .run_inserts import INSERT_RUN, QUEUE_INSERTED
from .run_rows import EVENT_MARK, NEW_RUN
from .schedule_rows import CHANGEABLE, FIRING
from .sql_firing import ADVANCE, INSERT_HISTORY
from .sql_schedules import SET_STATE, UPDATE_SCHEDULE
from .transaction import INDEXED, SOUGHT, Settings, Transaction

__all__ = ["PgTransaction", "insert_as_json", "insert_runs_returning", "select_among_array"]


@dataclass(frozen=True)
class Bulk:
    """A statement's form for many rows at once."""

    #: the statement, whose one placeholder takes the rows as a JSON array of objects
    sql: str
    #: the column each of the row statement's placeholders fills, in order
    columns: tuple[str, ...]
    #: the row's column that a write finds its row by, when two rows may name one row
    key: str | None = None
    #: the planner's settings: a join of the rows to a table seeks it by key; None: the
    #: statement reads no table (an insert), so whatever settings are in force may stay
    settings: Settings | None = None

    def rows_json(self, rows: Sequence[Sequence[Any]]) -> str:
        # A column named twice (a placeholder given twice) takes the same value both times.
        return json.dumps([dict(zip(self.columns, row, strict=True)) for row in rows])


def _rows(table: str) -> str:
    return f"json_populate_recordset(NULL::{table}, ?::json)"


def _set(columns: Sequence[str]) -> str:
    return ", ".join(f"{column} = n.{column}" for column in columns)


_HISTORY_COLUMNS = (
    "key", "occurrence", "last_occurrence", "decision", "reason", "run_id", "revision",
    "count", "decided_at",
)  # fmt: skip
_ADVANCED = ("next_fire_at", "due_at", "buffered_for", "waiting")
_UPDATED = (*CHANGEABLE.names, "anchor_at", *FIRING.names, "updated_at")

#: the bulk form of each statement the store writes many rows with (``executemany``)
BULK: dict[str, Bulk] = {
    INSERT_RUN: Bulk(
        f"""
INSERT INTO tickwork_runs ({NEW_RUN.select()}, status, attempt, event_mark)
SELECT {NEW_RUN.select()}, 'pending', 1, {EVENT_MARK} FROM {_rows("tickwork_runs")}
ON CONFLICT (id) DO NOTHING
""",
        NEW_RUN.names,
    ),
    QUEUE_INSERTED: Bulk(
        f"""
INSERT INTO tickwork_queue (id, workflow, pool, priority, status, available_at, schedule_key,
    created_at)
SELECT r.id, r.workflow, r.pool, r.priority, r.status, n.available_at, r.schedule_key,
    r.created_at
FROM {_rows("tickwork_queue")} n JOIN tickwork_runs r ON r.id = n.id
WHERE r.status = 'pending'
ON CONFLICT (id) DO NOTHING
""",
        ("available_at", "id"),
        settings=SOUGHT,
    ),
    INSERT_HISTORY: Bulk(
        f"""
INSERT INTO tickwork_schedule_history ({", ".join(_HISTORY_COLUMNS)})
SELECT {", ".join(_HISTORY_COLUMNS)} FROM {_rows("tickwork_schedule_history")}
""",
        _HISTORY_COLUMNS,
    ),
    ADVANCE: Bulk(
        f"""
UPDATE tickwork_schedules s SET {_set(_ADVANCED)}, paused_at = NULL, resumed_at = NULL,
    last_fire_at = COALESCE(n.last_fire_at, s.last_fire_at),
    last_run_id = COALESCE(n.last_run_id, s.last_run_id),
    last_occurrence_at = CASE
        WHEN COALESCE(n.last_occurrence_at, -1) > COALESCE(s.last_occurrence_at, -1)
        THEN n.last_occurrence_at ELSE s.last_occurrence_at END,
    runs_counted = s.runs_counted + n.runs_counted
FROM {_rows("tickwork_schedules")} n WHERE s.key = n.key
""",
        # sql_firing.LAST_OCCURRENCE takes the occurrence twice: both fill one column.
        (
            *_ADVANCED,
            "last_fire_at",
            "last_run_id",
            "last_occurrence_at",
            "last_occurrence_at",
            "runs_counted",
            "key",
        ),
        key="key",
        # a firing pass's statement: under the settings its other statements have
        # (sql_firing.fire_due), so that none of them is a statement to change them
        settings=INDEXED,
    ),
    UPDATE_SCHEDULE: Bulk(
        f"""
UPDATE tickwork_schedules s SET {_set(_UPDATED)}, revision = s.revision + 1
FROM {_rows("tickwork_schedules")} n WHERE s.key = n.key
""",
        (*_UPDATED, "key"),
        key="key",
        settings=SOUGHT,
    ),
    SET_STATE: Bulk(
        f"""
UPDATE tickwork_schedules s SET {_set((*FIRING.names, "updated_at"))}
FROM {_rows("tickwork_schedules")} n WHERE s.key = n.key
""",
        (*FIRING.names, "updated_at", "key"),
        key="key",
        settings=SOUGHT,
    ),
}


def _distinct_runs(rows: Sequence[Sequence[Any]], at: int) -> list[Sequence[Sequence[Any]]]:
    """``rows`` cut where the value at ``at`` repeats one already in the current batch, so
    no batch names a row twice (an UPDATE ... FROM would apply only one of the two)."""
    batches: list[Sequence[Sequence[Any]]] = []
    start, seen = 0, set[Any]()
    for index, row in enumerate(rows):
        if row[at] in seen:
            batches.append(rows[start:index])
            start, seen = index, set()
        seen.add(row[at])
    batches.append(rows[start:])
    return batches


class PgTransaction(Transaction):
    """``Transaction`` whose ``executemany`` is one plain statement (see above)."""

    __slots__ = ()

    def executemany(self, statement: str, rows: Sequence[Sequence[Any]]) -> None:
        bulk = BULK.get(statement)
        if bulk is None:
            for row in rows:
                self.execute(statement, *row)
            return
        if not rows:
            return
        batches = [rows] if bulk.key is None else _distinct_runs(rows, bulk.columns.index(bulk.key))
        for batch in batches:
            self._bulk(bulk.settings, bulk.sql, bulk.rows_json(batch))

    def write_many(self, writes: Sequence[tuple[str, Sequence[Sequence[Any]]]]) -> None:
        """The bulk forms of ``writes`` as one statement: the first ones as data-modifying
        ``WITH`` queries of the last, all on one snapshot (which is why the statements must
        write different tables and none read what another writes). One round trip where
        there were as many as statements; a statement without a bulk form, or whose rows
        name one row twice, and the rest go one after the other."""
        writes = [(statement, rows) for statement, rows in writes if rows]
        bulks = [(BULK.get(statement), rows) for statement, rows in writes]
        known = [(bulk, rows) for bulk, rows in bulks if bulk is not None]
        settings = {bulk.settings for bulk, _ in known if bulk.settings is not None}
        if len(writes) < 2 or len(known) < len(writes) or len(settings) > 1 or _repeats(known):
            super().write_many(writes)
            return
        parts = [bulk.sql.strip() for bulk, _ in known]
        ahead = ", ".join(f"w{i} AS ({sql})" for i, sql in enumerate(parts[:-1]))
        params = [bulk.rows_json(rows) for bulk, rows in known]
        self._bulk(settings.pop() if settings else None, f"WITH {ahead} {parts[-1]}", *params)

    def _bulk(self, settings: Settings | None, sql: str, *params: Any) -> None:
        if settings is None:
            self.execute_by_key(sql, *params)
        else:
            self.execute_under(settings, sql, *params)


def _repeats(writes: Sequence[tuple[Bulk, Sequence[Sequence[Any]]]]) -> bool:
    """Whether the rows of a write by key name one row twice (it needs several
    statements, ``_distinct_runs``)."""
    return any(
        bulk.key is not None and len(_distinct_runs(rows, bulk.columns.index(bulk.key))) > 1
        for bulk, rows in writes
    )


def select_among_array(tx: Transaction, statement: str, keys: Sequence[Any]) -> list[Any]:
    """``Database.select_among``: the keys as one array parameter, so that psycopg converts
    the statement once whatever their count."""
    return tx.execute(statement.format(keys="= ANY(?)"), list(keys)).fetchall()


def insert_as_json(
    tx: Transaction,
    statement: str,
    table: str,
    columns: Sequence[str],
    rows: Sequence[Sequence[Any]],
) -> list[Any]:
    """``Database.insert_many``: the rows as one JSON array of objects read with the
    table's row type (one parameter, which psycopg neither splits nor escapes value by
    value, as it does thousands of placeholders or arrays)."""
    source = f"SELECT {', '.join(columns)} FROM {_rows(table)}"
    objects = json.dumps([dict(zip(columns, row, strict=True)) for row in rows])
    return tx.execute(statement.format(rows=source), objects).fetchall()


# New runs and their queue rows in one statement: the runs inserted (not those whose id
# exists: ON CONFLICT) are returned and queued from what the insert returns, so no read
# of the runs table says which were new. The one parameter is a JSON array of the runs'
# NEW_RUN columns and their queue row's available_at, read once as each table's rows.
INSERT_RUNS = f"""
WITH given AS (SELECT ?::json AS rows),
runs AS (
    INSERT INTO tickwork_runs ({NEW_RUN.select()}, status, attempt, event_mark)
    SELECT {NEW_RUN.select("n")}, 'pending', 1, {EVENT_MARK}
    FROM given, json_populate_recordset(NULL::tickwork_runs, given.rows) n
    ON CONFLICT (id) DO NOTHING
    RETURNING id, workflow, pool, priority, schedule_key, created_at
),
queued AS (
    INSERT INTO tickwork_queue (id, workflow, pool, priority, status, available_at,
        schedule_key, created_at)
    SELECT r.id, r.workflow, r.pool, r.priority, 'pending', q.available_at, r.schedule_key,
        r.created_at
    FROM runs r JOIN (
        SELECT q.id, q.available_at
        FROM given, json_populate_recordset(NULL::tickwork_queue, given.rows) q
    ) q ON q.id = r.id
    ON CONFLICT (id) DO NOTHING
)
SELECT id FROM runs
"""
_INSERTED_RUN = (*NEW_RUN.names, "available_at")


def insert_runs_returning(tx: Transaction, runs: Sequence[NewRun]) -> set[str]:
    """``Database.insert_runs`` in one round trip (``INSERT_RUNS``): where writers run at
    once, the ids that ``ON CONFLICT`` let in are the ones a concurrent trigger did not."""
    rows = json.dumps([
        dict(zip(_INSERTED_RUN, (*NEW_RUN.values(run), run.available_ms), strict=True))
        for run in runs
    ])  # fmt: skip
    return {row[0] for row in tx.execute_by_key(INSERT_RUNS, rows).fetchall()}
