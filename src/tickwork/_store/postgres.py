"""The PostgreSQL dialect: a psycopg 3 connection pool, row locks that skip, LISTEN/NOTIFY.

Differences from SQLite stay small: ``%s`` placeholders, ``FOR UPDATE SKIP LOCKED`` on the
claim and firing queries (many workers take different rows at once instead of queueing),
transaction-scoped advisory locks where a count must not race (concurrency limits,
migrations), ``NOTIFY`` on changes that make work due, and the database's clock as the
fleet's reference time (``database_now_ms``).
"""

from __future__ import annotations

import contextlib
import logging
import threading
import zlib
from collections.abc import Callable, Iterator, Sequence

import psycopg
from psycopg_pool import ConnectionPool, PoolTimeout

from .. import _clock
from ..errors import ConfigError, StoreError
from . import migrations
from .contract import LeaseLost, StepRecord
from .sql import Cursor, SqlStore, _Executor

__all__ = ["CHANNEL", "PostgresStore"]

log = logging.getLogger("tickwork")

#: the NOTIFY channel: payload "runs" or "schedules"
CHANNEL = "tickwork"
# Advisory lock keys (any constants; the names only help people reading pg_locks).
_MIGRATION_LOCK = zlib.crc32(b"tickwork:migrate")
_LIMIT_LOCK_PREFIX = "tickwork:concurrency:"
#: seconds a call waits for a pooled connection before failing with StoreError
_WAIT_S = 10.0


# One round trip per checkpoint: the lease check-and-renew and the step upsert in one
# statement (a data-modifying CTE, which SQLite lacks). No lease row, no step, no result.
RECORD_STEP = """
WITH lease AS (
    UPDATE tickwork_runs SET available_at = ?
    WHERE id = ? AND lease_token = ? AND status = 'running'
    RETURNING cancel_requested
)
INSERT INTO tickwork_steps (run_id, kind, name, seq, status, result, error, attempts,
    started_at, finished_at)
SELECT ?, ?, ?, ?, ?, ?, ?, ?, ?, ? FROM lease
ON CONFLICT (run_id, kind, name) DO UPDATE SET status = excluded.status,
    result = excluded.result, error = excluded.error, attempts = excluded.attempts,
    started_at = excluded.started_at, finished_at = excluded.finished_at
RETURNING (SELECT cancel_requested FROM lease)
"""


class PostgresStore(SqlStore):
    """The store on PostgreSQL; many processes on many machines share it."""

    dialect = "postgres"
    lock_suffix = " FOR UPDATE SKIP LOCKED"

    def __init__(self, url: str, *, max_connections: int = 20) -> None:
        self.url = url.replace("postgres://", "postgresql://", 1)
        self._statements: dict[str, str] = {}
        try:
            psycopg.conninfo.conninfo_to_dict(self.url)
        except psycopg.ProgrammingError as exc:
            raise ConfigError(f"Bad PostgreSQL URL: {exc}") from exc
        # A call waits up to _WAIT_S for a connection. While it waits, the pool keeps
        # trying to connect (with back-off) for as long: were it to give up at the first
        # refusal, a call that began during an outage would wait out its whole timeout
        # even after the database came back.
        self._pool = ConnectionPool(
            self.url, min_size=1, max_size=max_connections, open=False, timeout=_WAIT_S,
            reconnect_timeout=_WAIT_S, kwargs={"autocommit": False},
        )  # fmt: skip
        self._opened = False
        self._open_lock = threading.Lock()

    def _sql(self, statement: str) -> str:
        translated = self._statements.get(statement)
        if translated is None:
            translated = self._statements[statement] = statement.replace("?", "%s")
        return translated

    def _open(self) -> ConnectionPool:
        if not self._opened:
            with self._open_lock:
                if not self._opened:
                    self._pool.open(wait=False)
                    self._opened = True
        return self._pool

    @contextlib.contextmanager
    def _transaction(self, *, write: bool) -> Iterator[Cursor]:
        try:
            with self._open().connection() as conn, conn.transaction():
                yield conn.cursor()
        except (psycopg.Error, PoolTimeout) as exc:
            raise StoreError(f"PostgreSQL: {exc}".strip()) from exc

    def record_step(
        self, *, run_id: str, token: str, step: StepRecord, now_ms: int, lease_ms: int
    ) -> bool:
        with self._tx(write=True) as tx:
            row = tx.execute(
                RECORD_STEP, now_ms + lease_ms, run_id, token, run_id, step.kind, step.name,
                step.seq, step.status, step.result_json, step.error, step.attempts,
                step.started_ms, step.finished_ms,
            ).fetchone()  # fmt: skip
            if row is None:
                raise LeaseLost(run_id)
        return bool(row[0])

    def _serialize(self, tx: _Executor, names: Sequence[str]) -> None:
        """Hold a transaction lock per name, so counts and claims of one name never race."""
        for name in sorted(names):
            tx.execute("SELECT pg_advisory_xact_lock(hashtext(?))", _LIMIT_LOCK_PREFIX + name)

    def _notify(self, tx: _Executor, what: str) -> None:
        tx.execute("SELECT pg_notify(?, ?)", CHANNEL, what)

    def database_now_ms(self) -> int:
        """The database server's clock, in UTC epoch milliseconds."""
        with self._tx(write=False) as tx:
            row = tx.execute(
                "SELECT (extract(epoch FROM clock_timestamp()) * 1000)::bigint"
            ).fetchone()
        return int(row[0])

    def migrate(self) -> int:
        # Ten workers starting at once: the advisory lock makes them take turns, and each
        # finds the work done by the first.
        with self._tx(write=True) as tx:
            tx.execute("SELECT pg_advisory_xact_lock(?)", _MIGRATION_LOCK)
            tx.execute("CREATE TABLE IF NOT EXISTS tickwork_schema (version BIGINT NOT NULL)")
            current = tx.execute("SELECT MAX(version) FROM tickwork_schema").fetchone()[0] or 0
            for version, name in migrations.pending(self.dialect, current):
                for statement in migrations.statements(self.dialect, name):
                    tx.execute(statement.replace("%", "%%"))
                tx.execute("INSERT INTO tickwork_schema (version) VALUES (?)", version)
                current = version
        return int(current)

    def listen(self, on_notify: Callable[[str], None], stop: threading.Event) -> None:
        """Call ``on_notify(payload)`` for each NOTIFY until ``stop`` is set; blocking.

        Reconnects with back-off when the connection drops. Notifications sent while it
        is down are lost: callers keep a fallback poll.
        """
        delay = 0.1
        while not stop.is_set():
            try:
                with psycopg.connect(self.url, autocommit=True) as conn:
                    conn.execute(f"LISTEN {CHANNEL}")
                    delay = 0.1
                    on_notify("listening")  # catch up with what happened while away
                    while not stop.is_set():
                        for note in conn.notifies(timeout=0.5):
                            on_notify(note.payload)
            except psycopg.Error as exc:
                if not stop.is_set():
                    log.debug("tickwork: LISTEN connection lost (%s); reconnecting", exc)
                    _clock.wait(stop, delay)
                    delay = min(delay * 2, 5.0)

    def close(self) -> None:
        if self._opened:
            self._pool.close()
        self._opened = False
