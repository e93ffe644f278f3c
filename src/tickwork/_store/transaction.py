"""What the SQL parts of the store stand on: a dialect's transactions, and small helpers.

A dialect (``sqlite.py``, ``postgres.py``) provides a ``Database``: read transactions,
writes as functions of a transaction (so SQLite may run several threads' writes in one
transaction), change notifications, the few words of SQL that differ, and a method for
each thing the two dialects do differently (the claim, reads and writes of many rows,
the checkpoint, table sizes, migrating, their drivers' errors). The parts call those
methods and never ask which dialect they run on. Statements are written with ``?``
placeholders; ``Transaction`` translates them to the dialect's.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

if TYPE_CHECKING:
    from .._values.records import NewRun, StepRecord
    from .claim_records import ClaimRequest
    from .run_rows import TakenRun

__all__ = [
    "INDEXED",
    "SOUGHT",
    "UNSORTED",
    "WALKED",
    "Cursor",
    "Database",
    "Settings",
    "Transaction",
    "in_filters",
    "insert_in_chunks",
    "marks",
    "select_among_in_chunks",
]

T = TypeVar("T")

#: settings of a dialect's query planner, as (name, value) pairs (``execute_under``)
Settings = tuple[tuple[str, str], ...]

# The hot statements of claiming and firing have one good plan each: a walk of an index
# in its order that stops after the rows taken, or seeks by key. PostgreSQL's planner
# prefers to read every row that matches and sort them (or to scan the table) whenever
# its statistics say few rows match: always on a table not yet analyzed (autovacuum's
# first ANALYZE comes up to a minute after the rows), where each claim cost ~1.4 ms at a
# backlog of 2,000 runs and a firing batch of 100 schedules ~15 ms among 10,000, growing
# with them. These settings leave it the good plan only (bench/README.md "fleet").
#: no sort: the rows are read in an index's order
UNSORTED: Settings = (("enable_sort", "off"),)
#: no scan of the whole table: the rows are sought through an index
SOUGHT: Settings = (("enable_seqscan", "off"),)
#: the rows are read through an index, one at a time (no scan, no bitmap), and a sort of
#: the few rows so read stays priced as it is (a claim merging several workflows' walks)
WALKED: Settings = (("enable_seqscan", "off"), ("enable_bitmapscan", "off"))
#: both SOUGHT and UNSORTED: a firing pass's statements (its due schedules walked in
#: order, their runs and rows sought by key) run under one setting, set once a pass
INDEXED: Settings = (*SOUGHT, *UNSORTED)


class Cursor(Protocol):
    """The part of a DB-API cursor the store uses (sqlite3 and psycopg both fit)."""

    @property
    def rowcount(self) -> int: ...

    def execute(self, sql: str, params: Sequence[Any] = ..., /) -> Any: ...

    def executemany(self, sql: str, params: Sequence[Sequence[Any]], /) -> Any: ...

    def fetchone(self) -> Any: ...

    def fetchall(self) -> list[Any]: ...


class Transaction:
    """A cursor inside one transaction that translates ``?`` placeholders to the
    dialect's and takes parameters positionally: ``tx.execute(STATEMENT, a, b)``.

    ``counts`` collects the metric increments of the transaction's events, as
    ``(metric, labels, bucket, value, sum_ms)``; the dialect writes them, summed, just
    before the commit (``counters.flush``), so they land with the events or not at all.
    """

    __slots__ = ("_cursor", "_in_force", "_planner", "_translate", "counts")

    def __init__(
        self, cursor: Cursor, translate: Callable[[str], str] | None, *, planner: bool = False
    ) -> None:
        self._cursor = cursor
        self._translate = translate
        self._planner = planner  # the dialect's planner takes settings (PostgreSQL)
        self._in_force: Settings = ()  # the settings of execute_under not yet taken back
        self.counts: list[tuple[str, str, int, int, int]] = []

    def execute(self, statement: str, *params: Any) -> Cursor:
        if self._in_force:
            self._undo_settings()
        translate = self._translate  # None: the dialect takes "?" as written (SQLite)
        self._cursor.execute(statement if translate is None else translate(statement), params)
        return self._cursor

    def _sql(self, statement: str) -> str:
        return statement if self._translate is None else self._translate(statement)

    def executemany(self, statement: str, rows: Sequence[Sequence[Any]]) -> None:
        self._undo_settings()
        self._cursor.executemany(self._sql(statement), rows)

    def write_many(self, writes: Sequence[tuple[str, Sequence[Sequence[Any]]]]) -> None:
        """``executemany`` of each ``(statement, rows)`` in turn. The statements write
        different tables and none reads what another writes, so a dialect may send them
        as one statement (PostgreSQL: ``pg_bulk.py``)."""
        for statement, rows in writes:
            if rows:
                self.executemany(statement, rows)

    def execute_by_key(self, statement: str, *params: Any) -> Cursor:
        """A statement with no plan to choose (a write of rows through their primary key,
        a function call), so the settings of ``execute_under`` may stay
        (``counters.flush``, the last statement of most transactions, would otherwise pay
        a statement to take them back)."""
        translate = self._translate
        self._cursor.execute(statement if translate is None else translate(statement), params)
        return self._cursor

    def execute_under(self, settings: Settings, statement: str, *params: Any) -> Cursor:
        """``statement`` planned with ``settings`` of the planner (PostgreSQL's ``SET
        LOCAL``; a dialect without them runs it as it is). They are taken back before the
        transaction's next statement that could be planned differently (the commit ends
        them anyway), so they never leak into the other writes that share a transaction
        (``write_combiner.py``). Statements under the same settings one after the other
        set them once; a change of settings is one statement (the old ones taken back,
        the new ones set), not one per setting."""
        if self._planner and settings != self._in_force:
            undo = [f"SET LOCAL {name} TO DEFAULT" for name, _ in self._in_force]
            change = [*undo, *(f"SET LOCAL {name} = {value}" for name, value in settings)]
            self._cursor.execute("; ".join(change), ())  # no parameters: one simple query
            self._in_force = settings
        self._cursor.execute(self._sql(statement), params)
        return self._cursor

    def roll_back_to(self, savepoint: str) -> None:
        """``ROLLBACK TO SAVEPOINT``, accepted even after a failed statement. Settings of
        ``execute_under`` still in force were made since the savepoint (any statement,
        ``SAVEPOINT`` included, takes back the earlier ones first): the rollback undoes
        them too, and running anything else first would fail in the failed transaction."""
        self._in_force = ()
        self._cursor.execute(self._sql(savepoint), ())

    def _undo_settings(self) -> None:
        if self._in_force:
            undo = [f"SET LOCAL {name} TO DEFAULT" for name, _ in self._in_force]
            self._in_force = ()
            self._cursor.execute("; ".join(undo), ())

    @property
    def rowcount(self) -> int:
        return self._cursor.rowcount


class Database(Protocol):
    """The transaction helper a dialect provides to the SQL parts of the store."""

    #: appended to queries that claim rows (PostgreSQL: " FOR UPDATE SKIP LOCKED")
    lock_suffix: str
    #: put before a column to keep the query planner off its index ("+" in SQLite)
    no_index: str
    #: appended to a read of a row the transaction will write (PostgreSQL: " FOR UPDATE";
    #: SQLite needs none: its write transactions take turns)
    lock_row: str
    #: appended to a read of a row that must not change or vanish until the transaction
    #: ends, while others may read it so too (PostgreSQL: " FOR SHARE"; SQLite: "")
    lock_shared: str
    #: run first in a read whose best plan depends on the values it is given, such as a
    #: filter on a workflow that has few runs among millions (PostgreSQL: plan for those
    #: values, not a prepared statement's generic plan; SQLite: "", nothing to run)
    plan_for_values: str

    def read(self) -> contextlib.AbstractContextManager[Transaction]:
        """A read-only transaction."""
        ...

    def read_rows(self, statement: str, *params: Any) -> list[Any]:
        """The rows of one read-only statement, which needs no transaction around it
        (PostgreSQL: run alone in autocommit, one round trip instead of three with
        BEGIN and COMMIT; SQLite: a read transaction, as ``read``)."""
        ...

    def write(self, work: Callable[[Transaction], T]) -> T:
        """Run ``work`` in a write transaction, committed before this returns; return what
        ``work`` returns. ``work`` may be run again after a rollback: it must only read and
        write the database."""
        ...

    def write_alone(self, work: Callable[[Transaction], T]) -> T:
        """``write``, in a transaction of its own that no other write joins: for a long
        batch (pruning) that this process's other writes must not wait behind. Where
        writes take turns anyway (SQLite's one write lock) it is ``write``."""
        ...

    def notify(self, tx: Transaction, what: str) -> None:
        """Tell listening workers (other processes) that "runs" or "schedules" changed,
        at commit. A dialect without such a channel does nothing: workers poll."""
        ...

    def execute_notifying(self, tx: Transaction, what: str, statement: str, *params: Any) -> int:
        """Execute ``statement`` (a write with no ``RETURNING``) and, if it wrote a row,
        ``notify(tx, what)``; the rows it wrote. A dialect that notifies sends both as one
        statement (one round trip where there were two)."""
        ...

    def serialize(self, tx: Transaction, names: Sequence[str]) -> None:
        """Make transactions that count and claim runs of ``names`` take turns (a dialect
        whose write transactions already take turns does nothing)."""
        ...

    def migrate(self) -> int:
        """Apply the dialect's pending migrations; the schema's version after them."""
        ...

    def as_store_error(self, exc: BaseException) -> BaseException:
        """The driver's error ``exc`` as the ``StoreError`` it means (transient or not);
        any other error as it is. The write combiner reports a write's failure with it."""
        ...

    # -- the claim (sqlite_claim.py walks candidates then writes each; pg_claim.py: one
    # statement per level) -----------------------------------------------------------------

    def take_runs(
        self,
        tx: Transaction,
        request: ClaimRequest,
        open_workflows: Sequence[str],
        room: Mapping[str, int],
    ) -> list[TakenRun]:
        """Take the most urgent due runs of ``open_workflows`` under new leases, at most
        ``room[name]`` of each concurrency-limited workflow (``RunsSql.claim_in``). An
        ``idle`` request takes the most urgent suspect due, if any, first and alone
        (``lost_workers.py``); no other request takes a suspect."""
        ...

    def claim_candidates(
        self,
        tx: Transaction,
        request: ClaimRequest,
        open_workflows: Sequence[str],
        room: Mapping[str, int],
    ) -> list[Any] | None:
        """What ``take_runs`` would take from, read only, in the claim's order
        (``sql_runs.claim_candidates``); None where the claim reads and writes in one
        statement (``straight_claim.py``)."""
        ...

    def next_due_in(
        self,
        tx: Transaction,
        pools: Sequence[str],
        workflows: Sequence[str],
        *,
        suspects: bool = True,
    ) -> int | None:
        """When the earliest run of ``workflows`` in ``pools`` is due (``next_due_ms``)."""
        ...

    def record_step(
        self,
        tx: Transaction,
        *,
        run_id: str,
        token: str,
        step: StepRecord,
        now_ms: int,
        lease_ms: int,
    ) -> bool:
        """Write one checkpoint if ``token`` holds the run (raise ``LeaseLost`` if not);
        whether cancellation was asked for. PostgreSQL renews the lease in the same
        statement; SQLite leaves the lease to ``renew_leases`` (the contract allows both)."""
        ...

    # -- many rows at once -----------------------------------------------------------------

    def insert_runs(self, tx: Transaction, runs: Sequence[NewRun]) -> set[str]:
        """Insert ``runs`` with their queue rows, but those whose id exists (``ON
        CONFLICT (id) DO NOTHING``: an occurrence's run a trigger started first); the ids
        inserted (SQLite: ``run_inserts.insert_runs_checked``; PostgreSQL: one statement,
        ``pg_bulk.insert_runs_returning``)."""
        ...

    def select_among(self, tx: Transaction, statement: str, keys: Sequence[Any]) -> list[Any]:
        """The rows of ``statement`` whose key is among ``keys``: its ``{keys}`` becomes
        the key's condition (SQLite: ``IN (?, ...)`` in chunks; PostgreSQL: ``= ANY(?)``
        with one array)."""
        ...

    def insert_many(
        self,
        tx: Transaction,
        statement: str,
        table: str,
        columns: Sequence[str],
        rows: Sequence[Sequence[Any]],
    ) -> list[Any]:
        """Insert ``rows`` (values of ``columns`` of ``table``) by ``statement``, whose
        ``{rows}`` becomes the rows' source, and return what it returns (SQLite: ``VALUES``
        in chunks; PostgreSQL: one JSON parameter, ``pg_bulk.py``)."""
        ...

    # -- reads of the dashboard and of ``tickwork db stats`` -------------------------------

    def recent_runs(self, tx: Transaction, keys: Sequence[str], limit: int) -> list[Any]:
        """The newest ``limit`` runs' rows of each schedule of ``keys`` (recent_runs.py)."""
        ...

    def table_bytes(self, tx: Transaction) -> tuple[dict[str, int | None], int, int | None]:
        """Bytes of each tickwork table (None: unknown), the total, and the free bytes
        (None: unknown), for ``sql_storage.py``."""
        ...


def marks(count: int) -> str:
    """``count`` placeholders for an ``IN (...)`` list: ``"?, ?, ?"``."""
    return ", ".join("?" * count)


#: keys (or rows) per statement in the chunked helpers below
CHUNK = 500


def select_among_in_chunks(tx: Transaction, statement: str, keys: Sequence[Any]) -> list[Any]:
    """``Database.select_among`` with one placeholder per key, ``CHUNK`` keys at a time."""
    rows: list[Any] = []
    for start in range(0, len(keys), CHUNK):
        chunk = keys[start : start + CHUNK]
        rows += tx.execute(statement.format(keys=f"IN ({marks(len(chunk))})"), *chunk).fetchall()
    return rows


def insert_in_chunks(
    tx: Transaction, statement: str, columns: Sequence[str], rows: Sequence[Sequence[Any]]
) -> list[Any]:
    """``Database.insert_many`` as ``VALUES`` rows of placeholders, ``CHUNK`` rows per
    statement."""
    found: list[Any] = []
    for start in range(0, len(rows), CHUNK):
        chunk = rows[start : start + CHUNK]
        values = "VALUES " + ", ".join([f"({marks(len(columns))})"] * len(chunk))
        params = [value for row in chunk for value in row]
        found += tx.execute(statement.format(rows=values), *params).fetchall()
    return found


def in_filters(pools: Sequence[str], workflows: Sequence[str], alias: str = "") -> str:
    """SQL restricting rows to some pools and workflows, one placeholder per value (the
    pools' first, then the workflows'), of the table called ``alias`` ("q." for the
    queue's ``q``). The worker's filters read only tables with no index of pool or
    workflow (the queue, the schedules): the rows are walked in their due index's order
    and filtered on the way, whatever a planner's statistics say of a workflow (a runs
    table's index of workflows once made PostgreSQL read a new workflow's whole history at
    each wake-up: 30-60 ms twice a second, with 85,000 of its runs kept)."""
    pool, workflow = f"{alias}pool", f"{alias}workflow"
    return f"AND {pool} IN ({marks(len(pools))}) AND {workflow} IN ({marks(len(workflows))})"
