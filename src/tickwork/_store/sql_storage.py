"""What the database holds, for ``tickwork db stats``: rows and bytes per table, the oldest
ended run, and the backlog retention will prune (``store.storage.storage_stats``).

Rows are counted exactly (a full count per table: a diagnostic command's cost, not the
hot path's). Bytes are the one part that differs by dialect: SQLite reads the ``dbstat``
virtual table when the build has it (each table with its indexes) and the file's pages
otherwise; PostgreSQL asks ``pg_total_relation_size`` (table, indexes and TOAST).
"""

from __future__ import annotations

from .._rules.retention import KEEP_HISTORY, Cutoffs
from .._values.clock import from_ms
from .._values.models import StorageStats, TableStats
from .statuses import ENDED
from .transaction import Database, Transaction

__all__ = ["StorageSql", "has_dbstat", "sizes_postgres", "sizes_sqlite"]

# SQLite: tickwork's tables.
SQLITE_TABLES = """
SELECT name FROM sqlite_master
WHERE type = 'table' AND substr(name, 1, 9) = 'tickwork_' ORDER BY name
"""
# SQLite: whether this build has the dbstat virtual table.
SQLITE_HAS_DBSTAT = "SELECT COUNT(*) FROM pragma_module_list WHERE name = 'dbstat'"
# SQLite: bytes of each table with its indexes (dbstat: every page of the file, by owner).
SQLITE_TABLE_BYTES = """
SELECT m.tbl_name, SUM(d.pgsize) FROM dbstat AS d JOIN sqlite_master AS m ON m.name = d.name
GROUP BY m.tbl_name
"""
# SQLite: the file's size, and how much of it is free pages waiting for reuse.
SQLITE_FILE_BYTES = """
SELECT page_count * page_size, freelist_count * page_size
FROM pragma_page_count(), pragma_page_size(), pragma_freelist_count()
"""
# PostgreSQL: tickwork's tables in the current schema, each with its indexes and TOAST.
POSTGRES_TABLE_BYTES = """
SELECT tablename,
    pg_total_relation_size((quote_ident(schemaname) || '.' || quote_ident(tablename))::regclass)
FROM pg_tables
WHERE schemaname = current_schema() AND substr(tablename, 1, 9) = 'tickwork_'
ORDER BY tablename
"""
# Rows of one table; {table} is a name read from the catalog above.
COUNT_ROWS = "SELECT COUNT(*) FROM {table}"
# The first workflow with ended runs whose name is after the given one (a seek on
# tickwork_runs_ended, as pruning walks them).
NEXT_ENDED_WORKFLOW = f"""
SELECT workflow FROM tickwork_runs
WHERE {ENDED} AND workflow > ?
ORDER BY workflow LIMIT 1
"""
# When a workflow's oldest ended run ended (a waiting run passes ENDED's words but has no
# end yet, and SQLite sorts NULL first).
OLDEST_ENDED = f"""
SELECT finished_at FROM tickwork_runs
WHERE workflow = ? AND {ENDED} AND finished_at IS NOT NULL
ORDER BY finished_at LIMIT 1
"""
# A workflow's ended runs that ended before the cutoff.
COUNT_PAST = f"""
SELECT COUNT(*) FROM tickwork_runs
WHERE workflow = ? AND {ENDED} AND finished_at < ?
"""
# Each schedule's history entries: all of them, and those decided before the cutoff.
HISTORY_PAST = """
SELECT COUNT(*), SUM(CASE WHEN decided_at < ? THEN 1 ELSE 0 END)
FROM tickwork_schedule_history GROUP BY key
"""


def has_dbstat(tx: Transaction) -> bool:
    """SQLite: whether this build has the ``dbstat`` virtual table."""
    try:
        return bool(tx.execute(SQLITE_HAS_DBSTAT).fetchone()[0])
    except Exception:  # no pragma_module_list in this build either
        return False


def sizes_sqlite(tx: Transaction, *, dbstat: bool) -> tuple[dict[str, int | None], int, int | None]:
    """SQLite's ``Database.table_bytes``: per table from ``dbstat`` (if ``dbstat``, else
    unknown), the file's pages in all and free."""
    names = [row[0] for row in tx.execute(SQLITE_TABLES).fetchall()]
    known: dict[str, int] = {}
    if dbstat:
        known = {name: int(size) for name, size in tx.execute(SQLITE_TABLE_BYTES).fetchall()}
    total, free = tx.execute(SQLITE_FILE_BYTES).fetchone()
    return {name: known.get(name) for name in names}, int(total), int(free)


def sizes_postgres(tx: Transaction) -> tuple[dict[str, int | None], int, int | None]:
    """PostgreSQL's ``Database.table_bytes``: each table with its indexes and TOAST; the
    free space inside them is not known."""
    sizes = {name: int(size) for name, size in tx.execute(POSTGRES_TABLE_BYTES).fetchall()}
    return dict(sizes), sum(sizes.values()), None


class StorageSql:
    """``storage_stats`` over a dialect's ``Database`` (bytes: ``Database.table_bytes``)."""

    __slots__ = ("_db",)

    def __init__(self, db: Database) -> None:
        self._db = db

    def storage_stats(self, *, cutoffs: Cutoffs) -> StorageStats:
        with self._db.read() as tx:
            sizes, total, free = self._db.table_bytes(tx)
            tables = tuple(
                TableStats(name, int(tx.execute(COUNT_ROWS.format(table=name)).fetchone()[0]), size)
                for name, size in sizes.items()
            )
            oldest, runs = _ended_runs(tx, cutoffs)
            history = _history_backlog(tx, cutoffs.history_ms)
        return StorageStats(
            tables=tables,
            total_bytes=total,
            free_bytes=free,
            oldest_ended_at=None if oldest is None else from_ms(oldest),
            prunable_runs=runs,
            prunable_history=history,
        )


def _ended_runs(tx: Transaction, cutoffs: Cutoffs) -> tuple[int | None, int]:
    """The oldest ended run's end, and how many ended runs are past their cutoff: one
    workflow at a time, each served by ``tickwork_runs_ended``."""
    oldest: int | None = None
    past = 0
    workflow = ""
    while (row := tx.execute(NEXT_ENDED_WORKFLOW, workflow).fetchone()) is not None:
        workflow = row[0]
        row = tx.execute(OLDEST_ENDED, workflow).fetchone()
        if row is None:  # only waiting runs
            continue
        first = int(row[0])
        oldest = first if oldest is None else min(oldest, first)
        cutoff = cutoffs.for_workflow(workflow)
        if cutoff is not None:
            past += int(tx.execute(COUNT_PAST, workflow, cutoff).fetchone()[0])
    return oldest, past


def _history_backlog(tx: Transaction, cutoff: int | None) -> int:
    """History entries past the cutoff, less each schedule's ``KEEP_HISTORY`` newest."""
    if cutoff is None:
        return 0
    backlog = 0
    for total, past in tx.execute(HISTORY_PAST, cutoff).fetchall():
        backlog += min(int(past or 0), max(0, int(total) - KEEP_HISTORY))
    return backlog
