"""The SQLite dialect: one file, WAL, ``BEGIN IMMEDIATE`` for every write.

Several processes may share the file: ``BEGIN IMMEDIATE`` takes SQLite's single write lock
at the start of a transaction, so a claim reads and writes with no other writer in
between, and the busy timeout makes the others wait their turn instead of failing.
"""

from __future__ import annotations

import contextlib
import sqlite3
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, TypeVar
from urllib.parse import parse_qs, urlsplit

from ..errors import ConfigError, StoreError
from . import migrations
from .contract import LeaseLost
from .sql import Cursor, SqlStore, _Executor

__all__ = ["SQLiteStore", "parse_sqlite_url"]

T = TypeVar("T")

_SYNCHRONOUS = {"off", "normal", "full", "extra"}


def parse_sqlite_url(url: str) -> tuple[Path, str, float]:
    """``sqlite:///relative.db`` or ``sqlite:////abs/path.db`` -> (path, synchronous, timeout).

    ``?synchronous=full`` makes every commit survive a power cut (WAL with ``normal``, the
    default, survives any process crash, which is what tickwork promises).
    """
    parts = urlsplit(url)
    if parts.scheme != "sqlite" or parts.netloc or not parts.path.startswith("/"):
        raise ConfigError(f"Bad SQLite URL {url!r}: expected sqlite:///path/to/file.db")
    path = parts.path[1:]
    if not path or path == ":memory:":
        raise ConfigError(f"Bad SQLite URL {url!r}: name a file (several threads share it)")
    query = parse_qs(parts.query)
    unknown = set(query) - {"synchronous", "timeout"}
    if unknown:
        raise ConfigError(f"Bad SQLite URL {url!r}: unknown option(s) {sorted(unknown)}")
    synchronous = query.get("synchronous", ["normal"])[-1].lower()
    if synchronous not in _SYNCHRONOUS:
        raise ConfigError(f"Bad SQLite URL {url!r}: synchronous must be one of {_SYNCHRONOUS}")
    try:
        timeout = float(query.get("timeout", ["30"])[-1])
    except ValueError:
        raise ConfigError(f"Bad SQLite URL {url!r}: timeout must be seconds") from None
    return Path(path), synchronous, timeout


class _Write:
    """One thread's write waiting to be carried out, and its outcome.

    Its thread sleeps on its own lock (held from creation), released once: when the write
    is done, or when the thread's ``turn`` has come to carry out the queued writes.
    """

    __slots__ = ("_ready", "abandoned", "done", "error", "result", "turn", "work")

    def __init__(self, work: Callable[[Any], Any]) -> None:
        self.work = work
        self.done = False
        self.turn = False
        self.abandoned = False  # its thread was interrupted while waiting
        self.result: Any = None
        self.error: BaseException | None = None
        self._ready = threading.Lock()
        self._ready.acquire()

    def wake(self) -> None:
        self._ready.release()

    def wait(self) -> None:
        self._ready.acquire()


#: how many writes may join one transaction before it commits (bounds a write's wait)
_MOST_JOINED = 64


def _as_store_error(exc: BaseException) -> BaseException:
    if isinstance(exc, sqlite3.Error):
        wrapped = StoreError(f"SQLite: {exc}")
        wrapped.__cause__ = exc
        return wrapped
    return exc


def _run_in_savepoint(tx: _Executor, request: _Write) -> None:
    """Carry out one write of a combined batch; its failure undoes only itself."""
    tx.execute("SAVEPOINT tickwork_write")
    try:
        request.result = request.work(tx)
    except (Exception, LeaseLost) as exc:
        tx.execute("ROLLBACK TO SAVEPOINT tickwork_write")
        request.error = _as_store_error(exc)
    tx.execute("RELEASE SAVEPOINT tickwork_write")


class SQLiteStore(SqlStore):
    """The store on one SQLite file: a reading connection per thread, one writer at a time.

    SQLite has a single write lock per file. Threads of one process that contend for it
    through ``BEGIN IMMEDIATE`` sleep in SQLite's busy handler (1, 2, 5, 10 ms...) and,
    with ``synchronous=full``, each commit waits for its own fsync. Instead, writes are
    *combined*: a thread queues its write; the thread whose turn it is runs every queued
    write in one transaction on the store's one writer connection and commits once (if a
    write fails, a lost lease say, the batch is redone with each write in a savepoint so
    that it undoes only itself). Uncontended, that is just a transaction; contended, many
    checkpoints share one commit. Reads use a connection per thread. Other processes
    still meet at ``BEGIN IMMEDIATE``.
    """

    dialect = "sqlite"
    no_index = "+"  # SQLite's unary plus keeps a column off its index

    def __init__(self, url: str) -> None:
        self.path, self._synchronous, self._timeout = parse_sqlite_url(url)
        self.url = url
        self._local = threading.local()
        self._all: list[sqlite3.Connection] = []
        self._lock = threading.Lock()
        self._closed = False
        self._queue: list[_Write] = []
        self._queue_lock = threading.Lock()
        self._combining = False
        self._writer_conn: sqlite3.Connection | None = None

    def _connection(self) -> sqlite3.Connection:
        """This thread's connection, for reads (and for migrating)."""
        conn: sqlite3.Connection | None = getattr(self._local, "conn", None)
        if conn is None:
            conn = self._local.conn = self._open()
        return conn

    def _writer(self) -> sqlite3.Connection:
        """The one connection every combined write runs on, used by the turn's holder.

        One connection, not each combining thread's own: a connection's page cache is
        dropped whenever another connection has written, so with a writer per thread
        every batch read its B-tree pages back from the WAL file.
        """
        if self._writer_conn is None:
            self._writer_conn = self._open()
        return self._writer_conn

    def _open(self) -> sqlite3.Connection:
        if self._closed:
            raise StoreError("The store is closed")
        try:
            if not self.path.parent.exists():
                raise ConfigError(f"Folder {str(self.path.parent)!r} of the SQLite file is missing")
            # check_same_thread=False so close() may run on any thread and the writer
            # connection pass from turn to turn; no connection is used by two threads at once.
            conn = sqlite3.connect(
                self.path, timeout=self._timeout, isolation_level=None, check_same_thread=False
            )
            conn.execute("PRAGMA journal_mode=WAL")
            conn.execute(f"PRAGMA synchronous={self._synchronous}")
            conn.execute("PRAGMA foreign_keys=ON")
        except sqlite3.Error as exc:
            raise StoreError(f"Cannot open SQLite database {str(self.path)!r}: {exc}") from exc
        with self._lock:
            self._all.append(conn)
        return conn

    @contextlib.contextmanager
    def _transaction(self, *, write: bool) -> Iterator[Cursor]:
        # Writes run only in a turn (see _write), on the writer connection.
        conn = self._writer() if write else self._connection()
        try:
            if conn.in_transaction:  # left open by a turn cut short: its writes failed
                conn.rollback()
            cursor = conn.cursor()
            cursor.execute("BEGIN IMMEDIATE" if write else "BEGIN")
        except sqlite3.Error as exc:
            raise StoreError(f"SQLite: {exc}") from exc
        try:
            yield cursor
        except sqlite3.Error as exc:
            with contextlib.suppress(sqlite3.Error):
                conn.rollback()
            raise StoreError(f"SQLite: {exc}") from exc
        except BaseException:
            with contextlib.suppress(sqlite3.Error):
                conn.rollback()
            raise
        try:
            conn.commit()
        except sqlite3.Error as exc:
            with contextlib.suppress(sqlite3.Error):
                conn.rollback()
            raise StoreError(f"SQLite commit failed: {exc}") from exc

    def _write(self, work: Callable[[_Executor], T]) -> T:
        request = _Write(work)
        with self._queue_lock:
            self._queue.append(request)
            request.turn = not self._combining
            self._combining = True
        if not request.turn:
            try:
                request.wait()  # until done, or until our turn to combine
            except BaseException:
                with self._queue_lock:
                    request.abandoned = True
                if request.turn:  # handed the turn meanwhile: never leave the others stuck
                    self._combine()
                raise
        if request.turn:
            self._combine()
        if request.error is not None:
            raise request.error
        result: T = request.result
        return result

    def _combine(self) -> None:
        """Carry out the queued writes in one transaction, then hand the turn on.

        The turn goes to the first thread still waiting to write, so a thread whose write
        is done never waits for a commit that does not hold it. Writes whose threads
        stopped waiting (interrupted) are carried out by the next turn, like any other.
        """
        with self._queue_lock:
            batch, self._queue = self._queue, []
        try:
            self._run_batch(batch)
        finally:  # even if this thread is interrupted: never leave the others stuck
            for request in batch:
                if not request.turn:
                    request.wake()
            with self._queue_lock:
                waiting = [request for request in self._queue if not request.abandoned]
                if waiting:
                    waiting[0].turn = True
                self._combining = bool(waiting)
            if waiting:
                waiting[0].wake()

    def _run_batch(self, batch: list[_Write]) -> None:
        """Carry out ``batch`` and the writes that join it before its commit."""
        committed = False
        try:
            failure = self._run_unguarded(batch)
            if failure is None:
                committed = True
            elif len(batch) == 1:
                batch[0].error = failure
            else:  # everything was rolled back: again, each write in its own savepoint
                with self._tx(write=True) as tx:
                    for request in batch:
                        _run_in_savepoint(tx, request)
                committed = True
        except (Exception, LeaseLost) as exc:  # the transaction as a whole failed
            for request in batch:
                request.error = request.error or exc
        finally:
            for request in batch:
                if not committed and request.error is None:
                    request.error = StoreError("write abandoned: its writer was interrupted")
                request.done = True

    def _run_unguarded(self, batch: list[_Write]) -> BaseException | None:
        """Carry out the batch with no savepoints, the common case where no write fails.

        Writes queued while the batch runs join it (appended to ``batch``) until the
        commit begins: they share its commit instead of waiting for the next one. If a
        write fails, everything is rolled back and its error returned, for the caller to
        carry the writes out again (a write only reads and writes the database, so doing
        it again after a rollback is the same as doing it once).
        """
        failure: BaseException | None = None
        try:
            with self._tx(write=True) as tx:
                done = 0
                while done < len(batch):
                    try:
                        batch[done].result = batch[done].work(tx)
                    except BaseException as exc:
                        failure = exc
                        raise
                    done += 1
                    if done == len(batch) and done < _MOST_JOINED:
                        with self._queue_lock:
                            batch += self._queue
                            self._queue = []
        except (Exception, LeaseLost) as exc:
            if failure is not None and failure in (exc, exc.__cause__):
                return exc  # as the transaction raised it (a driver error made a StoreError)
            raise
        return None

    def migrate(self) -> int:
        def work(tx: _Executor) -> int:
            tx.execute("CREATE TABLE IF NOT EXISTS tickwork_schema (version INTEGER NOT NULL)")
            current = tx.execute("SELECT MAX(version) FROM tickwork_schema").fetchone()[0] or 0
            for version, name in migrations.pending(self.dialect, current):
                for statement in migrations.statements(self.dialect, name):
                    tx.execute(statement)
                tx.execute("INSERT INTO tickwork_schema (version) VALUES (?)", version)
                current = version
            return int(current)

        try:
            return self._write(work)
        except StoreError as exc:
            raise StoreError(f"SQLite migration failed: {exc}") from exc

    def close(self) -> None:
        self._closed = True
        with self._lock:
            connections, self._all = self._all, []
        for conn in connections:
            with contextlib.suppress(sqlite3.Error):
                conn.close()
        self._local = threading.local()
        self._writer_conn = None
