"""The latest runs of many schedules in one read (``store.runs.recent_runs``): the dashboard's
run strips, one statement for a page of schedules instead of one ``list_runs`` each.

Each schedule's runs are read from ``tickwork_runs_schedule`` (schedule_key, created_at,
id; PostgreSQL's descending, SQLite's read backwards since migration 0021), newest first,
stopping at the limit: what a schedule costs does not grow with the history it keeps
(DESIGN §7). A ``ROW_NUMBER()`` window over the schedules' runs
would read every schedule's whole history to number it, so each dialect says "the first
N of each" in its own words (its ``Database.recent_runs`` calls one of the functions
below):

- PostgreSQL: the keys as one array, each joined LATERAL to its own ``LIMIT``ed seek;
- SQLite (no LATERAL): a ``UNION ALL`` of one ``LIMIT``ed sub-select per key, run as
  co-routines, in chunks of ``SQLITE_CHUNK`` keys (SQLite caps a compound select at 500
  terms); the chunks are read in one transaction.

``tests/contract/test_query_plans_contract.py`` checks both plans: a seek per key, no sort.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from .._values.models import RunInfo
from .run_rows import COL_SCHEDULE_KEY, RUN_COLUMNS, run_from_row
from .transaction import Database, Transaction

__all__ = [
    "RECENT_RUNS_POSTGRES",
    "SQLITE_CHUNK",
    "RecentRunsSql",
    "newest_runs_postgres",
    "newest_runs_sqlite",
    "recent_runs_sqlite",
]

_RUN_LIST = ", ".join(RUN_COLUMNS)
# The newest runs of one schedule, up to a limit (a seek on tickwork_runs_schedule).
_NEWEST_OF_KEY = f"""
SELECT {_RUN_LIST} FROM tickwork_runs WHERE schedule_key = {{key}}
ORDER BY created_at DESC, id DESC LIMIT ?
"""
# PostgreSQL: the newest runs of each key of an array, each key's read on its own.
RECENT_RUNS_POSTGRES = f"""
SELECT r.* FROM unnest(?::text[]) AS k(key)
CROSS JOIN LATERAL ({_NEWEST_OF_KEY.format(key="k.key")}) AS r
"""
#: SQLite: keys per statement (a compound select has at most 500 terms)
SQLITE_CHUNK = 100


def recent_runs_sqlite(count: int) -> str:
    """SQLite: the newest runs of ``count`` keys, one sub-select each (parameters: a key,
    then the limit, for each); a sub-select with its own LIMIT must be wrapped to be a
    term of a compound select."""
    term = f"SELECT * FROM ({_NEWEST_OF_KEY.format(key='?')})"
    return "\nUNION ALL\n".join([term] * count)


def newest_runs_postgres(tx: Transaction, keys: Sequence[str], limit: int) -> list[Any]:
    """PostgreSQL's ``Database.recent_runs``: one statement, the keys as an array."""
    return tx.execute(RECENT_RUNS_POSTGRES, list(keys), limit).fetchall()


def newest_runs_sqlite(tx: Transaction, keys: Sequence[str], limit: int) -> list[Any]:
    """SQLite's ``Database.recent_runs``: a statement per ``SQLITE_CHUNK`` keys."""
    rows: list[Any] = []
    for start in range(0, len(keys), SQLITE_CHUNK):
        chunk = keys[start : start + SQLITE_CHUNK]
        params = [p for key in chunk for p in (key, limit)]
        rows += tx.execute(recent_runs_sqlite(len(chunk)), *params).fetchall()
    return rows


class RecentRunsSql:
    """``recent_runs`` in the dialect's words (``Database.recent_runs``)."""

    __slots__ = ("_db",)

    def __init__(self, db: Database) -> None:
        self._db = db

    def recent_runs(self, keys: Sequence[str], *, limit: int) -> dict[str, list[RunInfo]]:
        unique = list(dict.fromkeys(keys))
        found: dict[str, list[RunInfo]] = {key: [] for key in unique}
        if not unique:
            return found
        with self._db.read() as tx:
            rows = self._db.recent_runs(tx, unique, limit)
        for row in rows:
            found[row[COL_SCHEDULE_KEY]].append(run_from_row(row))
        for runs in found.values():  # each key's come in order; SQL does not promise it
            runs.sort(key=lambda run: (run.created_at, run.id), reverse=True)
        return found
