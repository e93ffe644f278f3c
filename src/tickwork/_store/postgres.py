"""The PostgreSQL dialect: a psycopg 3 connection pool, row locks that skip, LISTEN/NOTIFY.

Differences from SQLite stay small: ``%s`` placeholders, ``FOR UPDATE SKIP LOCKED`` on the
claim and firing queries (many workers take different rows at once instead of queueing;
the claim is one statement: ``pg_claim.py``), transaction-scoped advisory locks where a
count must not race (concurrency limits, migrations), ``NOTIFY`` on changes that make
work due, and the database's clock as the fleet's reference time (``database_now_ms``).

Advisory locks and notification channels belong to the whole database, not to a schema,
so both are scoped to the schema of the store's tables by its OID: two deployments in two
schemas of one database neither wake each other's workers nor wait on each other's
migrations. (Concurrency limits keep a database-wide lock: ``serialize``.)
"""

from __future__ import annotations

import contextlib
import logging
import os
import random
import re
import select
import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any, TypeVar

import psycopg
from psycopg import sql
from psycopg.conninfo import conninfo_to_dict, make_conninfo
from psycopg_pool import ConnectionPool, PoolTimeout

from .._values import clock as _clock
from .._values.records import NewRun, StepRecord
from ..errors import ConfigError, StoreError, StoreUnreachable
from . import counters, migrations, pg_claim
from .claim_records import ClaimRequest, LeaseLost
from .pg_bulk import PgTransaction, insert_as_json, insert_runs_returning, select_among_array
from .recent_runs import newest_runs_postgres
from .run_rows import TakenRun
from .sql import SqlStore
from .sql_storage import sizes_postgres
from .transaction import Transaction
from .write_combiner import WriteCombiner

__all__ = ["PostgresDatabase", "PostgresStore", "channel_of"]

T = TypeVar("T")

log = logging.getLogger("tickwork")

# Advisory lock names, hashed into the lock's second key (the first is the schema's OID);
# the prefix keeps a workflow's name from ever being the migrations' name.
MIGRATION_LOCK = "tickwork:migrate"
_LIMIT_LOCK_PREFIX = "tickwork:concurrency:"
#: seconds the LISTEN connection sleeps at most between looks at the stop event
_LISTEN_LOOK_S = 1.0
#: seconds a call waits for a pooled connection before failing with StoreError
_WAIT_S = 10.0
#: seconds the first connection may take (libpq's least) unless the URL says otherwise
_CONNECT_TIMEOUT_S = 2
#: libpq's keepalives on the worker's side: a vanished server is noticed in ~20 s
_CLIENT_KEEPALIVES = {
    "keepalives": 1, "keepalives_idle": 10, "keepalives_interval": 3, "keepalives_count": 3,
}  # fmt: skip
#: the server's keepalives on each session: a vanished worker is noticed in ~20 s
_SERVER_KEEPALIVES = (
    ("tcp_keepalives_idle", 10), ("tcp_keepalives_interval", 3), ("tcp_keepalives_count", 3),
)  # fmt: skip


# Hold a transaction lock on a name within the schema (its OID, the name's hash): for
# migrations, so ten workers starting at once take turns.
LOCK = "SELECT pg_advisory_xact_lock(?, hashtext(?))"
# Hold a concurrency-limited workflow's lock, database-wide (``serialize`` says why).
LOCK_LIMIT = "SELECT pg_advisory_xact_lock(hashtext(?))"
# Wake listening workers at commit (channel: ``channel_of``): payload "runs", "schedules"
# or "events" (a buffer due sooner).
NOTIFY = "SELECT pg_notify(?, ?)"
# A write and, for what it wrote, a NOTIFY (sent once at commit however many rows):
# one statement, a data-modifying WITH. {statement} is the write, without RETURNING.
NOTIFYING = "WITH written AS ({statement} RETURNING 1) SELECT pg_notify(?, ?) FROM written"
# The database server's clock, the fleet's reference time (ms since the epoch, UTC).
DATABASE_NOW_MS = "SELECT (extract(epoch FROM clock_timestamp()) * 1000)::bigint"
# Plan this transaction's statements for the values they are given: a prepared statement's
# generic plan assumes average selectivity and, for a rare workflow or schedule, would
# filter the newest runs of all of them instead of seeking that one's own.
PLAN_FOR_VALUES = "SET LOCAL plan_cache_mode = force_custom_plan"
# Set a setting for this session (SET takes no parameters; set_config does): _configure.
SET_SESSION = "SELECT set_config(%s, %s, false)"
# The schema's versions: one row per migration applied.
CREATE_SCHEMA_TABLE = "CREATE TABLE IF NOT EXISTS tickwork_schema (version BIGINT NOT NULL)"
# The version the schema is at (NULL before the first migration).
SELECT_SCHEMA_VERSION = "SELECT MAX(version) FROM tickwork_schema"
# Note a migration as applied.
INSERT_SCHEMA_VERSION = "INSERT INTO tickwork_schema (version) VALUES (?)"
# One round trip per checkpoint: the lease check-and-renew (in the queue's small row) and
# the step upsert in one statement (a data-modifying CTE, which SQLite lacks). No lease
# row, no step, no result.
RECORD_STEP = """
WITH lease AS (
    UPDATE tickwork_queue SET available_at = ?
    WHERE id = ? AND lease_token = ? AND status = 'running'
    RETURNING cancel_requested
)
INSERT INTO tickwork_steps (run_id, kind, name, seq, status, result, error, attempts,
    started_at, finished_at, tries)
SELECT ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ? FROM lease
ON CONFLICT (run_id, kind, name) DO UPDATE SET status = excluded.status,
    result = excluded.result, error = excluded.error, attempts = excluded.attempts,
    started_at = excluded.started_at, finished_at = excluded.finished_at,
    tries = excluded.tries
RETURNING (SELECT cancel_requested FROM lease)
"""


# The schema tables are created in (None when no schema of the search_path exists), and
# its OID: unique in the database, it scopes advisory locks and the NOTIFY channel.
SELECT_SCHEMA = """
SELECT current_schema(), current_setting('search_path'),
    (SELECT oid::bigint FROM pg_namespace WHERE nspname = current_schema())
"""


def channel_of(schema_oid: int) -> str:
    """The NOTIFY channel of the store whose tables are in the schema ``schema_oid``
    (``SELECT <oid>::regnamespace`` names it): far under the 63 bytes a channel may have,
    which a schema's own name might not be."""
    return f"tickwork_{schema_oid}"


def _check_reachable(url: str) -> int:
    """One direct connection before the pool opens, so that a wrong host, port, database
    or password is answered at once with the server's own message (``StoreUnreachable``)
    rather than by the pool's attempts, logged one by one until its wait runs out. Once
    the pool is open, an outage is the pool's to ride out. Returns the OID of the schema
    the tables are (or will be) in."""
    if not _names_connect_timeout(url):
        url = make_conninfo(url, connect_timeout=_CONNECT_TIMEOUT_S)
    try:
        with psycopg.connect(url) as conn:
            row = conn.execute(SELECT_SCHEMA).fetchone()
            schema, search_path, oid = row or (None, "", None)
            where = _where(url, conn)
    except psycopg.Error as exc:
        raise StoreUnreachable(_where(url, exc), _server_message(exc)) from exc
    if schema is None or oid is None:  # else CREATE TABLE fails: "no schema ... selected"
        raise StoreUnreachable(
            where, f"no schema of its search_path ({search_path}) exists: create it, "
            "or name an existing one in the URL's options=-csearch_path=...",
        )  # fmt: skip
    return int(oid)


def _names_connect_timeout(url: str) -> bool:
    return "connect_timeout" in conninfo_to_dict(url) or bool(os.environ.get("PGCONNECT_TIMEOUT"))


def _where(url: str, failed: psycopg.Error | psycopg.Connection[Any]) -> str:
    """The database a connection (or a failed one) aimed at, as libpq resolved it
    (defaults and ``$PG*`` included), never its password."""
    pgconn = getattr(failed, "pgconn", None)
    if pgconn is not None:
        host, port = pgconn.host.decode(), pgconn.port.decode()
        database, user = pgconn.db.decode(), pgconn.user.decode()
    else:  # it failed before libpq had a connection (a host name that does not resolve)
        given = conninfo_to_dict(url)
        host, port = str(given.get("host", "")), str(given.get("port", "5432"))
        database, user = str(given.get("dbname", "")), str(given.get("user", ""))
    place = (
        f"{host}:{port}"
        if host and not host.startswith("/")
        else f"socket {host or '(default)'}:{port}"
    )
    who = f" as user {user!r}" if user else ""
    return f"PostgreSQL database {database!r} on {place}{who}"


# libpq's prefix to a server's message, which ``_where`` says already.
_SERVER_PREFIX = re.compile(
    r'connection to server (at "[^"]*"( \([^)]*\))?, port \d+|on socket "[^"]*") failed: '
)


def _server_message(exc: psycopg.Error) -> str:
    """The server's (or libpq's) own words, on one line."""
    lines = [" ".join(line.split()) for line in str(exc).splitlines() if line.strip()]
    # libpq's hint goes on a line of its own ("Connection refused\n\tIs the server...?").
    text = " ".join(
        line if line[-1] in ".:;?!" or i == len(lines) - 1 else line + "."
        for i, line in enumerate(lines)
    ).removeprefix("connection failed: ")
    if len(_SERVER_PREFIX.findall(text)) == 1:  # one host tried: its name is in _where
        text = _SERVER_PREFIX.sub("", text)
    return text or type(exc).__name__


def _as_store_error(exc: BaseException) -> BaseException:
    """A driver's (or the pool's) error as the ``StoreError`` it means; others kept."""
    if not isinstance(exc, psycopg.Error | PoolTimeout):
        return exc
    # A refused value (DataError: a NUL, a number out of range...) is no outage.
    transient = not isinstance(exc, psycopg.DataError | psycopg.IntegrityError)
    wrapped = StoreError(f"PostgreSQL: {exc}".strip(), transient=transient)
    wrapped.__cause__ = exc
    return wrapped


class PostgresDatabase:
    """A psycopg 3 connection pool: each read or write is one pooled transaction."""

    lock_suffix = " FOR UPDATE SKIP LOCKED"
    no_index = ""
    lock_row = " FOR UPDATE"
    lock_shared = " FOR SHARE"
    plan_for_values = PLAN_FOR_VALUES

    def __init__(self, url: str, *, max_connections: int, idle_timeout_ms: int) -> None:
        self.url = url
        self._statements: dict[str, str] = {}
        self._notifying: dict[str, str] = {}  # execute_notifying's, by write
        self._idle_timeout_ms = idle_timeout_ms
        # A call waits up to _WAIT_S for a connection. While it waits, the pool keeps
        # trying to connect (with back-off) for as long: were it to give up at the first
        # refusal, a call that began during an outage would wait out its whole timeout
        # even after the database came back.
        self._pool = ConnectionPool(
            url, min_size=1, max_size=max_connections, open=False, timeout=_WAIT_S,
            reconnect_timeout=_WAIT_S, configure=self._configure,
            kwargs={"autocommit": True, **_CLIENT_KEEPALIVES},
        )  # fmt: skip
        self._opened = False
        self._open_lock = threading.Lock()
        self._schema_oid = 0  # read as the pool opens (_open)
        # Group commit: concurrent writes of this process's threads share a transaction
        # and one commit (each commit waits for its WAL flush: ~1 ms here, the floor of
        # one run's five transactions), as on SQLite.
        self._combiner = WriteCombiner(self.transaction, self.as_store_error)

    def _configure(self, conn: psycopg.Connection[Any]) -> None:
        """Bound what a frozen or cut-off worker can hold (SIGSTOP, a VM paused, a swap
        storm, a network partition): the server ends a transaction left idle longer than
        ``idle_timeout_ms`` (well under the lease), releasing its row locks, so the
        schedules it was firing and the run it was checkpointing go to other workers; TCP
        keepalives notice a vanished peer in ~20 s rather than the kernel's ~2 h.

        JIT is off: tickwork's statements are short index walks, but on a large table a
        plan's cost estimate passes ``jit_above_cost`` and each call then compiles for
        ~7 ms to save microseconds (measured at 10M runs: ``list_runs(status="pending")``
        6.5 ms with JIT, 0.59 ms without; bench/README.md "longhaul")."""
        settings = (
            ("idle_in_transaction_session_timeout", self._idle_timeout_ms),
            ("jit", "off"),
        )
        for name, value in (*settings, *_SERVER_KEEPALIVES):
            conn.execute(SET_SESSION, (name, str(value)))
        conn.commit()

    def _translate(self, statement: str) -> str:
        """The statement with psycopg's ``%s`` placeholders (cached: statements repeat)."""
        translated = self._statements.get(statement)
        if translated is None:
            translated = self._statements[statement] = statement.replace("?", "%s")
        return translated

    def _open(self) -> ConnectionPool:
        if not self._opened:
            with self._open_lock:
                if not self._opened:
                    self._schema_oid = _check_reachable(self.url)
                    self._pool.open(wait=False)
                    self._opened = True
        return self._pool

    @contextlib.contextmanager
    def transaction(self) -> Iterator[Transaction]:
        """One transaction on a pooled connection; driver errors become StoreError. Its
        metric increments are written last, to a shard picked at random (see counters)."""
        try:
            with self._open().connection() as conn, conn.transaction():
                tx = PgTransaction(conn.cursor(), self._translate, planner=True)
                yield tx
                if tx.counts:
                    counters.flush(tx, shard=random.randrange(counters.SHARDS))
        except (psycopg.Error, PoolTimeout) as exc:
            raise _as_store_error(exc) from exc

    def read(self) -> contextlib.AbstractContextManager[Transaction]:
        return self.transaction()

    def read_rows(self, statement: str, *params: Any) -> list[Any]:
        """One statement alone: the pool's connections are in autocommit, so no BEGIN
        and COMMIT go with it (an idle worker's poll reads this way)."""
        try:
            with self._open().connection() as conn:
                return conn.execute(self._translate(statement), params).fetchall()
        except (psycopg.Error, PoolTimeout) as exc:
            raise _as_store_error(exc) from exc

    def write(self, work: Callable[[Transaction], T]) -> T:
        return self._combiner.write(work)

    def write_alone(self, work: Callable[[Transaction], T]) -> T:
        """A transaction of its own on a pooled connection, beside the combined ones: a
        prune batch (1,000 rows, ~15 ms, hundreds on a cold or busy server) holding the
        combiner's turn made this process's firings and checkpoints wait for it, though
        they touch none of its rows."""
        with self.transaction() as tx:
            return work(tx)

    def channel(self) -> str:
        """The NOTIFY channel of this store's schema (``channel_of``)."""
        self._open()
        return channel_of(self._schema_oid)

    def notify(self, tx: Transaction, what: str) -> None:
        # a function call: no plan to choose
        tx.execute_by_key(NOTIFY, channel_of(self._schema_oid), what)

    def lock(self, tx: Transaction, name: str) -> None:
        """Hold the advisory lock ``name`` of this store's schema until ``tx`` ends: its
        first key is the schema's OID (as a signed int4, which the two-key form takes),
        so a deployment in another schema of the database never waits on it."""
        oid = self._schema_oid
        tx.execute(LOCK, oid - 2**32 if oid >= 2**31 else oid, name)

    def execute_notifying(self, tx: Transaction, what: str, statement: str, *params: Any) -> int:
        sql = self._notifying.get(statement)
        if sql is None:
            sql = self._notifying[statement] = NOTIFYING.format(statement=statement.strip())
        # a write through the primary key and a function call: no plan to choose
        written = tx.execute_by_key(sql, *params, channel_of(self._schema_oid), what)
        return len(written.fetchall())

    def serialize(self, tx: Transaction, names: Sequence[str]) -> None:
        """Hold a transaction lock per name, so counts and claims of one name never race.

        Not scoped to the schema: the key is the one workers took before locks were
        scoped, so that old and new workers of a fleet upgraded one by one still hold a
        workflow's limit between them. Deployments in two schemas with a limited
        workflow of the same name take turns at claiming it (a claim's few ms)."""
        for name in sorted(names):
            tx.execute(LOCK_LIMIT, _LIMIT_LOCK_PREFIX + name)

    def as_store_error(self, exc: BaseException) -> BaseException:
        return _as_store_error(exc)

    def migrate(self) -> int:
        # Ten workers starting at once: the advisory lock makes them take turns, and each
        # finds the work done by the first.
        with self.transaction() as tx:
            self.lock(tx, MIGRATION_LOCK)
            tx.execute(CREATE_SCHEMA_TABLE)
            current = tx.execute(SELECT_SCHEMA_VERSION).fetchone()[0] or 0
            for version, name in migrations.pending("postgres", current):
                for statement in migrations.statements("postgres", name):
                    tx.execute(statement.replace("%", "%%"))
                tx.execute(INSERT_SCHEMA_VERSION, version)
                current = version
        return int(current)

    # The claim: one statement per priority level (pg_claim.py).

    def take_runs(
        self,
        tx: Transaction,
        request: ClaimRequest,
        open_workflows: Sequence[str],
        room: Mapping[str, int],
    ) -> list[TakenRun]:
        if request.idle:  # a suspect first, alone (lost_workers.py)
            suspect = pg_claim.take_suspect(tx, request, open_workflows)
            if suspect is not None:
                return [suspect]
        return pg_claim.take_runs(tx, request, open_workflows, room)

    def claim_candidates(
        self,
        tx: Transaction,
        request: ClaimRequest,
        open_workflows: Sequence[str],
        room: Mapping[str, int],
    ) -> None:
        """None: the claim is one statement (``pg_claim.py``); a run started goes in
        pending and is claimed by it (``straight_claim.py``)."""
        return None

    def next_due_in(
        self,
        tx: Transaction,
        pools: Sequence[str],
        workflows: Sequence[str],
        *,
        suspects: bool = True,
    ) -> int | None:
        return pg_claim.next_due_in(tx, pools, workflows, suspects=suspects)

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
        """The lease renewed and the checkpoint written in one round trip (RECORD_STEP)."""
        row = tx.execute(
            RECORD_STEP, now_ms + lease_ms, run_id, token, run_id, step.kind, step.name,
            step.seq, step.status, step.result_json, step.error, step.attempts,
            step.started_ms, step.finished_ms, step.tries_json,
        ).fetchone()  # fmt: skip
        if row is None:
            raise LeaseLost(run_id)
        return bool(row[0])

    def insert_runs(self, tx: Transaction, runs: Sequence[NewRun]) -> set[str]:
        return insert_runs_returning(tx, runs)

    def select_among(self, tx: Transaction, statement: str, keys: Sequence[Any]) -> list[Any]:
        return select_among_array(tx, statement, keys)

    def insert_many(
        self,
        tx: Transaction,
        statement: str,
        table: str,
        columns: Sequence[str],
        rows: Sequence[Sequence[Any]],
    ) -> list[Any]:
        return insert_as_json(tx, statement, table, columns, rows)

    def recent_runs(self, tx: Transaction, keys: Sequence[str], limit: int) -> list[Any]:
        return newest_runs_postgres(tx, keys, limit)

    def table_bytes(self, tx: Transaction) -> tuple[dict[str, int | None], int, int | None]:
        return sizes_postgres(tx)

    def close(self) -> None:
        if self._opened:
            self._pool.close()
        self._opened = False


class PostgresStore(SqlStore):
    """The store on PostgreSQL; many processes on many machines share it."""

    dialect = "postgres"

    def __init__(
        self, url: str, *, max_connections: int = 20, idle_timeout_ms: int = 5_000
    ) -> None:
        self.url = url.replace("postgres://", "postgresql://", 1)
        try:
            psycopg.conninfo.conninfo_to_dict(self.url)
        except psycopg.ProgrammingError as exc:
            raise ConfigError(f"Bad PostgreSQL URL: {exc}") from exc
        self._pg = PostgresDatabase(
            self.url, max_connections=max_connections, idle_timeout_ms=idle_timeout_ms
        )
        super().__init__(self._pg)

    def database_now_ms(self) -> int:
        """The database server's clock, in UTC epoch milliseconds (``ReferenceTime``)."""
        return self.read_database_clock().ms

    def read_database_clock(self) -> _clock.Reading:
        """The database server's clock, with the round trip of the query that read it:
        timed once the connection is in hand, since after an outage the wait for one
        lasts seconds, and counting it made the fleet's clock run ahead (``Reading``)."""
        with self._pg.transaction() as tx:
            sent = _clock.steady_ns()
            row = tx.execute(DATABASE_NOW_MS).fetchone()
            received = _clock.steady_ns()
        return _clock.Reading(int(row[0]), sent, received)

    def listen(self, on_notify: Callable[[str], None], stop: threading.Event) -> None:
        """Call ``on_notify(payload)`` for each NOTIFY until ``stop`` is set; blocking
        (``Listening``).

        Reconnects with back-off when the connection drops. Notifications sent while it
        is down are lost: callers keep a fallback poll.
        """
        delay = 0.1
        while not stop.is_set():
            try:
                listen = sql.SQL("LISTEN {}").format(sql.Identifier(self._pg.channel()))
                with psycopg.connect(self.url, autocommit=True) as conn:
                    conn.execute(listen)
                    delay = 0.1
                    on_notify("listening")  # catch up with what happened while away
                    while not stop.is_set():
                        # Sleep in select() until the server sends something: psycopg's
                        # own wait wakes every 0.1 s (to notice Ctrl-C), which was most
                        # of an idle worker's CPU. Then take what came, without waiting.
                        ready, _, _ = select.select([conn.fileno()], [], [], _LISTEN_LOOK_S)
                        if ready:
                            for note in conn.notifies(timeout=0):
                                on_notify(note.payload)
            # OSError: select() on a socket gone; StoreError: the pool could not open
            except (psycopg.Error, OSError, StoreError) as exc:
                if not stop.is_set():
                    log.debug("LISTEN connection lost (%s); reconnecting", exc)
                    _clock.wait(stop, delay)
                    delay = min(delay * 2, 5.0)

    def close(self) -> None:
        self._pg.close()
