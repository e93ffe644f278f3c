"""The SQLite dialect: one file, WAL, ``BEGIN IMMEDIATE`` for every write.

Several processes may share the file: ``BEGIN IMMEDIATE`` takes SQLite's single write lock
at the start of a transaction, so a claim reads and writes with no other writer in
between, and the others wait their turn instead of failing, up to the URL's timeout.

They wait by asking again every ``LOCK_POLL_S``, not in SQLite's own busy handler: that
one sleeps 1, 2, 5, 10, 15, 20, 25, 25, 25, 50, 50, then 100 ms between tries, so a
process that missed the lock a few times sleeps through the gaps another process leaves
between its transactions (a firing waited ~100 ms behind a pruner holding the lock two
thirds of the time). Rails 8 replaced that handler for the same reason (rails#51958).
Python's ``sqlite3`` cannot install a busy handler, so the writer connection has none
(``busy_timeout = 0``) and ``begin_write`` polls.

``sqlite://`` (or ``sqlite:///:memory:``) is a private database in memory, for tests: one
connection that every thread shares, its transactions taking turns. (Not a shared-cache
database with a connection per thread: shared cache locks table by table and answers a
conflicting reader or writer "database table is locked" at once, without the busy wait.)
"""

from __future__ import annotations

import contextlib
import sqlite3
import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any, TypeVar

from .._values import clock as _clock
from .._values.records import NewRun, StepRecord
from .._values.urls import parse_sqlite_url
from ..errors import StoreError, StoreUnreachable
from . import counters, migrations, run_inserts, sqlite_claim
from .claim_records import ClaimRequest
from .recent_runs import newest_runs_sqlite
from .run_rows import TakenRun
from .sql import SqlStore
from .sql_storage import has_dbstat, sizes_sqlite
from .sqlite_checkpoints import CHECKPOINT, Checkpointer, backstop
from .transaction import Transaction, insert_in_chunks, select_among_in_chunks
from .write_combiner import WriteCombiner

__all__ = ["SQLiteDatabase", "SQLiteStore", "is_transient"]

T = TypeVar("T")

# Take SQLite's write lock at once, so a transaction reads and writes with no other
# writer in between (other processes wait in the busy handler).
BEGIN_WRITE = "BEGIN IMMEDIATE"
# A read transaction: one consistent snapshot (WAL lets it run beside the writer).
BEGIN_READ = "BEGIN"
# The writer connection: no busy handler, BEGIN_WRITE is polled (see the module's docstring).
NO_BUSY_HANDLER = "PRAGMA busy_timeout = 0"
#: seconds between two tries of BEGIN_WRITE while another process holds the write lock
LOCK_POLL_S = 0.0005
# Every connection, first: pages of 1 KiB for a file it creates (an existing file keeps
# its own). Why: each commit writes one WAL frame per page it dirtied, checksummed whole;
# a run's transactions touch a page in each of ~13 B-trees and change a few bytes in each,
# so smaller pages write and checksum less for the same rows (bench/README.md, "Session
# 24: pages of 1 KiB": its SQL ~25 % cheaper, also at 384,000 runs; the file 2-6 % larger).
PAGE_SIZE = "PRAGMA page_size = 1024"
# The file's page size (the writer's backstop is counted in pages).
READ_PAGE_SIZE = "PRAGMA page_size"
# Every connection: write-ahead log, so readers never block the writer nor it them.
JOURNAL_WAL = "PRAGMA journal_mode=WAL"
# Every connection: the durability the URL chose ({level}: off, normal, full, extra).
SYNCHRONOUS = "PRAGMA synchronous={level}"
# Every connection: foreign keys enforced (SQLite's default is off).
FOREIGN_KEYS = "PRAGMA foreign_keys=ON"
# The schema's versions: one row per migration applied.
CREATE_SCHEMA_TABLE = "CREATE TABLE IF NOT EXISTS tickwork_schema (version INTEGER NOT NULL)"
# The version the schema is at (NULL before the first migration).
SELECT_SCHEMA_VERSION = "SELECT MAX(version) FROM tickwork_schema"
# Note a migration as applied.
INSERT_SCHEMA_VERSION = "INSERT INTO tickwork_schema (version) VALUES (?)"


def is_transient(exc: sqlite3.Error) -> bool:
    """Whether trying again may work: a locked or busy database, I/O trouble; not a value
    SQLite refused (a constraint, a number too large, an unencodable string)."""
    refused = sqlite3.DataError | sqlite3.IntegrityError | sqlite3.ProgrammingError
    return not isinstance(exc, refused)


def _as_store_error(exc: BaseException) -> BaseException:
    """A driver's error as the ``StoreError`` it means (``WriteCombiner``); others kept."""
    if isinstance(exc, sqlite3.Error):
        wrapped = StoreError(f"SQLite: {exc}", transient=is_transient(exc))
        wrapped.__cause__ = exc
        return wrapped
    return exc


class SQLiteDatabase:
    """One SQLite file: a reading connection per thread, one writer connection whose
    writes are combined (``write_combiner.py``). Several processes may share the file.

    Without a path, a private database in memory: one connection for every thread, one
    transaction at a time (it lives as long as that connection, until ``close``).
    """

    lock_suffix = ""
    no_index = "+"  # SQLite's unary plus keeps a column off its index
    lock_row = ""  # write transactions take turns already (BEGIN IMMEDIATE)
    lock_shared = ""
    plan_for_values = ""  # without statistics SQLite plans alike for any values

    def __init__(self, path: Path | None, synchronous: str, timeout: float) -> None:
        self.path, self._synchronous, self._timeout = path, synchronous, timeout
        self._local = threading.local()
        self._all: list[sqlite3.Connection] = []
        self._lock = threading.Lock()
        self._closed = False
        self._writer_conn: sqlite3.Connection | None = None
        self._combiner = WriteCombiner(self._write_transaction, self.as_store_error)
        self._dbstat: bool | None = None  # whether the build has dbstat, once asked
        # A file's log is copied back on a thread of its own (sqlite_checkpoints.py).
        self._checkpoints = None if path is None else Checkpointer(self._open_checkpointer)
        # In memory: the one connection's transactions take turns (held for each one).
        self._turns = threading.Lock() if path is None else None

    def connection(self) -> sqlite3.Connection:
        """This thread's connection, for reads."""
        if self.path is None:
            return self.writer()  # in memory: the one connection
        conn: sqlite3.Connection | None = getattr(self._local, "conn", None)
        if conn is None:
            conn = self._local.conn = self._open()
        return conn

    def writer(self) -> sqlite3.Connection:
        """The one connection every combined write runs on, used by the turn's holder.

        One connection, not each combining thread's own: a connection's page cache is
        dropped whenever another connection has written, so with a writer per thread
        every batch read its B-tree pages back from the WAL file.
        """
        if self._writer_conn is None:
            conn = self._open()
            if self.path is not None:
                conn.execute(NO_BUSY_HANDLER)
                page_size = conn.execute(READ_PAGE_SIZE).fetchone()[0]
                conn.execute(backstop(page_size))  # checkpoints run on a thread (Checkpointer)
            self._writer_conn = conn
        return self._writer_conn

    def _open(self) -> sqlite3.Connection:
        if self._closed:
            raise StoreError("The store is closed")
        conn = self._connect_memory() if self.path is None else self._connect_file(self.path)
        with self._lock:
            self._all.append(conn)
        return conn

    def _open_checkpointer(self) -> sqlite3.Connection:
        """The checkpoints' own connection (closed by their thread, not by ``close``)."""
        if self._closed or self.path is None:
            raise sqlite3.ProgrammingError("The store is closed")
        return self._connect_file(self.path)

    def _connect_file(self, path: Path) -> sqlite3.Connection:
        where = f"SQLite file {str(path)!r}"
        if not path.parent.is_dir():
            raise StoreUnreachable(where, f"its folder {str(path.parent)!r} does not exist")
        try:
            # check_same_thread=False so close() may run on any thread and the writer
            # connection pass from turn to turn; no connection is used by two threads at once.
            conn = sqlite3.connect(
                path, timeout=self._timeout, isolation_level=None, check_same_thread=False
            )
            conn.execute(PAGE_SIZE)
            conn.execute(JOURNAL_WAL)  # the first statement to read the file: "not a database"
            conn.execute(SYNCHRONOUS.format(level=self._synchronous))
            conn.execute(FOREIGN_KEYS)
        except sqlite3.Error as exc:
            raise StoreUnreachable(where, str(exc)) from exc
        return conn

    def _connect_memory(self) -> sqlite3.Connection:
        # No WAL nor synchronous: they concern a file. Shared by every thread, in turns.
        conn = sqlite3.connect(":memory:", isolation_level=None, check_same_thread=False)
        conn.execute(FOREIGN_KEYS)
        return conn

    def _write_transaction(self) -> contextlib.AbstractContextManager[Transaction]:
        """A combined write's transaction (``WriteCombiner``'s ``begin``)."""
        if self._turns is None:
            conn = self._writer_conn or self.writer()
            return _OnConnection(conn, True, False, self._timeout, self._checkpoints)
        return self._in_turn(write=True)

    def _transaction(self, *, write: bool) -> contextlib.AbstractContextManager[Transaction]:
        if self._turns is None:  # a file: every write runs in a turn of the combiner
            return self._on_connection(write=write)
        return self._in_turn(write=write)

    @contextlib.contextmanager
    def _in_turn(self, *, write: bool) -> Iterator[Transaction]:
        # In memory, the one connection's transactions take turns.
        assert self._turns is not None
        with self._turns, self._on_connection(write=write) as tx:
            yield tx

    def _on_connection(self, *, write: bool) -> _OnConnection:
        """The transaction on this thread's connection: ``_transaction``'s body."""
        # Writes run only in a turn (see WriteCombiner), on the writer connection.
        conn = self.writer() if write else self.connection()
        return _OnConnection(conn, write, self.path is None, self._timeout, self._checkpoints)

    def read(self) -> contextlib.AbstractContextManager[Transaction]:
        return self._transaction(write=False)

    def copy_log(self) -> None:
        """A passive checkpoint now, on this thread's connection (no-op in memory)."""
        if self.path is None:
            return
        try:
            self.connection().execute(CHECKPOINT).fetchall()
        except sqlite3.Error as exc:  # not busy (a passive checkpoint says so in its row)
            raise StoreError(f"SQLite checkpoint: {exc}", transient=is_transient(exc)) from exc

    def read_rows(self, statement: str, *params: Any) -> list[Any]:
        with self.read() as tx:
            return tx.execute(statement, *params).fetchall()

    def write(self, work: Callable[[Transaction], T]) -> T:
        return self._combiner.write(work)

    def write_alone(self, work: Callable[[Transaction], T]) -> T:
        """``write``: the file has one write lock, which every write waits for anyway."""
        return self._combiner.write(work)

    def notify(self, tx: Transaction, what: str) -> None:
        """No channel between processes: workers poll (and wake each other in-process)."""

    def execute_notifying(self, tx: Transaction, what: str, statement: str, *params: Any) -> int:
        """The statement alone: ``notify`` is nothing here."""
        return int(tx.execute(statement, *params).rowcount)

    def serialize(self, tx: Transaction, names: Sequence[str]) -> None:
        """Nothing to do: ``BEGIN IMMEDIATE`` already lets one writer in at a time."""

    def as_store_error(self, exc: BaseException) -> BaseException:
        return _as_store_error(exc)

    def migrate(self) -> int:
        def work(tx: Transaction) -> int:
            tx.execute(CREATE_SCHEMA_TABLE)
            current = tx.execute(SELECT_SCHEMA_VERSION).fetchone()[0] or 0
            for version, name in migrations.pending("sqlite", current):
                for statement in migrations.statements("sqlite", name):
                    tx.execute(statement)
                tx.execute(INSERT_SCHEMA_VERSION, version)
                current = version
            return int(current)

        try:
            return self.write(work)
        except StoreUnreachable:
            raise  # says what is wrong and where already
        except StoreError as exc:
            raise StoreError(f"SQLite migration failed: {exc}") from exc

    # The claim reads its candidates, then writes each run taken (sqlite_claim.py).

    def take_runs(
        self,
        tx: Transaction,
        request: ClaimRequest,
        open_workflows: Sequence[str],
        room: Mapping[str, int],
    ) -> list[TakenRun]:
        return sqlite_claim.take_runs(tx, request, open_workflows, room)

    def claim_candidates(
        self,
        tx: Transaction,
        request: ClaimRequest,
        open_workflows: Sequence[str],
        room: Mapping[str, int],
    ) -> list[Any]:
        return sqlite_claim.claim_candidates(tx, request, open_workflows, room)

    def next_due_in(
        self,
        tx: Transaction,
        pools: Sequence[str],
        workflows: Sequence[str],
        *,
        suspects: bool = True,
    ) -> int | None:
        return sqlite_claim.next_due_in(tx, pools, workflows, suspects=suspects)

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
        """The checkpoint alone: the lease is ``renew_leases``' (one more statement here
        would cost every checkpoint; SQLite has no data-modifying CTE to join them)."""
        return sqlite_claim.record_step(tx, run_id=run_id, token=token, step=step)

    def insert_runs(self, tx: Transaction, runs: Sequence[NewRun]) -> set[str]:
        return run_inserts.insert_runs_checked(tx, runs)

    def select_among(self, tx: Transaction, statement: str, keys: Sequence[Any]) -> list[Any]:
        return select_among_in_chunks(tx, statement, keys)

    def insert_many(
        self,
        tx: Transaction,
        statement: str,
        table: str,
        columns: Sequence[str],
        rows: Sequence[Sequence[Any]],
    ) -> list[Any]:
        return insert_in_chunks(tx, statement, columns, rows)

    def recent_runs(self, tx: Transaction, keys: Sequence[str], limit: int) -> list[Any]:
        return newest_runs_sqlite(tx, keys, limit)

    def table_bytes(self, tx: Transaction) -> tuple[dict[str, int | None], int, int | None]:
        if self._dbstat is None:
            self._dbstat = has_dbstat(tx)
        return sizes_sqlite(tx, dbstat=self._dbstat)

    def close(self) -> None:
        self._closed = True
        if self._checkpoints is not None:
            self._checkpoints.close()
        with self._lock:
            connections, self._all = self._all, []
        for conn in connections:
            with contextlib.suppress(sqlite3.Error):
                conn.close()
        self._local = threading.local()
        self._writer_conn = None


def begin_write(cursor: sqlite3.Cursor, timeout: float) -> None:
    """``BEGIN IMMEDIATE``, asked again every ``LOCK_POLL_S`` while another process holds
    the write lock, for at most ``timeout`` seconds (then SQLite's "database is locked")."""
    deadline = None  # read the clock only when the lock is taken: the common case is free
    while True:
        try:
            cursor.execute(BEGIN_WRITE)
            return
        except sqlite3.OperationalError as exc:
            code = getattr(exc, "sqlite_errorcode", None) or 0  # extended codes too
            if code & 0xFF != sqlite3.SQLITE_BUSY:
                raise
            now = _clock.monotonic()
            deadline = now + timeout if deadline is None else deadline
            if now >= deadline:
                raise
        _clock.sleep(LOCK_POLL_S)


class SQLiteStore(SqlStore):
    """The store on one SQLite file (see ``SQLiteDatabase``)."""

    dialect = "sqlite"

    def __init__(self, url: str) -> None:
        self.path, synchronous, timeout = parse_sqlite_url(url)
        self.url = url
        self._sqlite = SQLiteDatabase(self.path, synchronous, timeout)
        super().__init__(self._sqlite)

    def close(self) -> None:
        self._sqlite.close()

    def writes_take_turns(self) -> bool:
        """``ExclusiveWrites``: one write lock per file, so every write waits its turn."""
        return True

    def copy_log(self) -> None:
        """``ExclusiveWrites``: a passive checkpoint on this thread's connection."""
        self._sqlite.copy_log()

    # -- for tests and tools ---------------------------------------------------------------

    def _connection(self) -> sqlite3.Connection:
        """This thread's reading connection."""
        return self._sqlite.connection()

    def _writer(self) -> sqlite3.Connection:
        """The connection combined writes run on."""
        return self._sqlite.writer()


class _OnConnection:
    """One transaction on a connection, as a context manager: begun on entry (a write
    with ``BEGIN IMMEDIATE``), its counters flushed and committed on a clean exit, rolled
    back otherwise, a driver's error made a ``StoreError``. A class, not a generator:
    every checkpoint goes through it, and ``contextlib``'s wrapper cost five Python calls
    a transaction."""

    __slots__ = ("_checkpoints", "_conn", "_memory", "_timeout", "_tx", "_write")

    def __init__(
        self,
        conn: sqlite3.Connection,
        write: bool,
        memory: bool,
        timeout: float,
        checkpoints: Checkpointer | None,
    ) -> None:
        self._conn, self._write, self._memory = conn, write, memory
        self._timeout, self._checkpoints = timeout, checkpoints

    def __enter__(self) -> Transaction:
        conn = self._conn
        try:
            if conn.in_transaction:  # left open by a turn cut short: its writes failed
                conn.rollback()
            cursor = conn.cursor()
            if not self._write:
                cursor.execute(BEGIN_READ)
            elif self._memory:  # in memory: nobody else to wait for
                cursor.execute(BEGIN_WRITE)
            else:
                try:
                    cursor.execute(BEGIN_WRITE)
                except sqlite3.OperationalError:  # another process holds the lock?
                    begin_write(cursor, self._timeout)
        except sqlite3.Error as exc:
            raise StoreError(f"SQLite: {exc}") from exc
        self._tx = Transaction(cursor, None)
        return self._tx

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, _tb: Any
    ) -> None:
        conn = self._conn
        if kind is None:
            try:
                counters.flush(self._tx, shard=0)  # its writes take turns: one shard is enough
            except BaseException as failed:
                self._rollback()
                if isinstance(failed, sqlite3.Error):
                    raise _as_store_error(failed) from failed
                raise
            try:
                conn.commit()
            except sqlite3.Error as failed:
                self._rollback()
                raise StoreError(f"SQLite commit failed: {failed}") from failed
            if self._write and self._checkpoints is not None:
                self._checkpoints.wrote()
            return
        self._rollback()
        if isinstance(exc, sqlite3.Error):
            raise _as_store_error(exc) from exc

    def _rollback(self) -> None:
        with contextlib.suppress(sqlite3.Error):
            self._conn.rollback()
