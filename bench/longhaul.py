"""Long haul: what each operation costs with N ended runs kept, beside the same store
holding 10,000 (issue 12, DESIGN.md §7: "cost independent of history").

Two stores per backend, filled the same way: a small one (10,000 ended runs) and a big one
(N, default 10,000,000; ``--quick``: 500,000). The rows are written in bulk, not by
running N workflows, with the columns and value shapes the engine writes (the script
compares one engine-written run with its own before filling):

- 12 every-second schedules (``every-second-01`` ... ``-12``, four each of the workflows
  ``three-steps``, ``report`` and ``sync``) registered through the engine (paused, so they
  do not fire while timing), and for every second of history one run of each (run id
  ``key@occurrence``, created 0 to 6 ms late) plus one manually started ``adhoc`` run (a
  UUIDv7 id): 13 runs a second, N/13 seconds ending at the engine clock's "now".
- failures came in the older half of the history only (an incident long fixed): one run
  in 48 failed there (its third step failed), none since; one run in 1,009 cancelled
  while pending (no steps, never started) all along; the rest completed; 3 step rows per
  run that started.
- one schedule-history row ("started", "due") per scheduled run; each schedule's
  ``last_run_id`` is its newest run. The metrics counters (``tickwork_counters``) are not
  bumped for the bulk rows: that table holds aggregates, its size the same whatever the
  history.

SQLite: ``executemany`` in transactions of 50,000 runs with the secondary indexes dropped
and re-created from their own SQL afterwards (the result is the schema the migrations
make). PostgreSQL: ``COPY``, the same for indexes, then ``VACUUM ANALYZE`` (what
autovacuum does to a table that grew over days). No ``ANALYZE`` on SQLite: tickwork never
runs it.

What is timed, on both stores of a backend, interleaved (one call on the small store,
then one on the big, and so on), under a ``FakeClock``:

- *fire 1,000 due schedules*: 1,000 hourly schedules of ``three-steps`` are registered
  once; each repetition advances the clock an hour and times ``engine.tick()`` until it
  starts nothing (1,000 runs started).
- *drain 1,000 runs*: ``engine.run_until_idle()`` on those 1,000 runs (3 steps each):
  claiming, checkpoints, finishing.
- reads, each the median of ``--calls`` calls after one warm-up call (fewer when an
  operation's calls pass ``--budget`` seconds, at least 3): ``get_run`` of a run not
  read before (each call another id spread over the history: on a history larger than
  the page cache, a read from the disk, shown with no target), of 200 ids spread over
  the history read again (per run; the warm-up reads them first, as every other read
  repeats its query) and of each schedule's newest run (what a client waiting for a
  result and the dashboard read); ``list_runs`` with every filter combination the faces offer
  and ``before=`` pages (the second page, and a page from the middle of history), 100
  runs a page (the API's default), or as many as the small store has (the table says
  "[n runs]"), so that both stores return as many runs; ``schedule_history(key, 100)``;
  a ``/metrics`` scrape (``render_metrics(metrics_registry(engine))``); the dashboard's
  Schedules (``/``) and Runs (``/runs``, also filtered by status) pages through
  starlette's ``TestClient`` with an API-key session.
- the small store's backlog pruned alone (``engine.prune(older_than="1h")``): rows/s.
- *pruning under load* (``prune_under_load``), last: a worker process of its own
  (``spawn``; an ordinary ``engine.worker()`` with ``retention=None``, on the same SQLite
  file or PostgreSQL schema) registers 50 every-second schedules of a one-step workflow
  under new keys and fires and runs them; its clock is the real one moved to the big
  store's "now" (``ShiftedClock``), so its schedules have nothing to catch up and its
  runs are newer than the prune's cutoff (now minus an hour, fixed when the pass starts).
  Meanwhile ``engine.prune(older_than="1h")`` prunes the big store's backlog in this
  process, its batches let through (``PruneGate``) in periods of ``--period`` seconds
  alternating with as long without pruning, the baseline: both then see the same load
  from whatever else runs on the machine. The baseline goes on until it is as long as
  the pruning. Per firing, read from the store afterwards: the lateness the product
  counts (``created_at - scheduled_for``, ``tickwork_firing_lateness_seconds``); timed in
  the worker around ``Schedules.tick`` and ``Store.fire_due``: when the loop's tick began
  and when the firing transaction committed. Also checked: every run and history entry
  of the load is still there, and the occurrences skipped as missed (over a second late)
  are counted. ``--prune-for S`` stops pruning after S seconds (leaving the rest of the
  backlog for another run); ``--only prune-under-load --store FILE|SCHEMA`` runs this
  phase alone on a store a run with ``--keep`` left.

Targets (issue 12): every operation within 1.5x of the small store; a scrape at most
50 ms; pruning at least 20,000 rows/s while the 50 schedules' lateness p99 is at most
20 ms.

Usage (from the repository root)::

    bench/.venv/bin/pip install -e '.[postgres,server]'
    bench/.venv/bin/python bench/longhaul.py                   # 10M runs: hours, 11 GB + 20 GB
    bench/.venv/bin/python bench/longhaul.py --quick           # 500,000 runs
    bench/.venv/bin/python bench/longhaul.py --runs 1000000 --backend sqlite
    bench/.venv/bin/python bench/longhaul.py --backend sqlite --only prune-under-load \
        --store /tmp/tickwork-longhaul/big-10000000.db --prune-for 300 --period 30

PostgreSQL comes from ``--postgres``, ``TICKWORK_BENCH_POSTGRES_URL`` or
``TICKWORK_TEST_POSTGRES_URL`` (default ``postgresql://postgres@127.0.0.1:5432/test``);
each store is a schema of its own, dropped at the end (``--keep`` keeps the stores).
"""

from __future__ import annotations

import argparse
import inspect
import math
import os
import platform
import re
import shutil
import sqlite3
import statistics
import sys
import threading
import time
import uuid
import warnings
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any
from urllib.parse import quote

from floor import first, three_steps  # bench/floor.py, beside this script

INSTALL = "bench/.venv/bin/pip install -e '.[postgres,server]'"
EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
T_END = datetime(2030, 1, 1, tzinfo=UTC)  # the engine clock's "now" when timing starts
SCHEDULES = 12
SCHEDULED_WORKFLOWS = ("three-steps", "report", "sync")
MANUAL_WORKFLOW = "adhoc"
FAILED_EVERY = 48  # in the older half of the history
CANCELLED_EVERY = 1009
CHUNK = 50_000  # runs per transaction (SQLite) or COPY batch (PostgreSQL)
HOURLY = 1000  # schedules fired (and runs drained) per repetition
PAGE = 100
SMALL = 10_000

#: tickwork_runs as the engine writes it (INSERT_RUN, START_RUN, FINISH_RUN ...); an ended
#: run has no row in tickwork_queue (UNQUEUE_HELD deletes it when the run ends)
RUN_COLUMNS = (
    "id", "workflow", "version", "status", "input", "result", "error", "attempt", "priority",
    "pool", "schedule_key", "schedule_revision", "scheduled_for", "retry", "created_at",
    "started_at", "finished_at", "attempt_started_at",
)  # fmt: skip
STEP_COLUMNS = (
    "run_id", "kind", "name", "seq", "status", "result", "error", "attempts", "started_at",
    "finished_at",
)  # fmt: skip
HISTORY_COLUMNS = (
    "key", "occurrence", "last_occurrence", "decision", "reason", "run_id", "revision",
    "count", "decided_at",
)  # fmt: skip
TABLES = ("tickwork_runs", "tickwork_steps", "tickwork_schedule_history")


def schedule_keys() -> list[str]:
    return [f"every-second-{i + 1:02d}" for i in range(SCHEDULES)]


def schedule_workflow(index: int) -> str:
    return SCHEDULED_WORKFLOWS[index % len(SCHEDULED_WORKFLOWS)]


def make_engine(url: str, clock: Any, **options: Any) -> Any:
    from tickwork import Engine

    engine = Engine(url, clock=clock, **options)

    for name in (*SCHEDULED_WORKFLOWS, MANUAL_WORKFLOW):
        engine.workflow(name)(three_steps)
    return engine


# -- the rows -------------------------------------------------------------------------


@dataclass
class Filled:
    """What a fill wrote, for the timed part to pick ids from."""

    runs: int = 0
    steps: int = 0
    history: int = 0
    sample_ids: list[str] = field(default_factory=list)  # spread over the whole history
    middle_id: str = ""  # a run in the middle of history (a deep before= page)
    newest: dict[str, tuple[str, int]] = field(default_factory=dict)  # key: (run id, occ)


def generate(n: int, end_ms: int, filled: Filled) -> Iterator[tuple[list[Any], ...]]:
    """Chunks of (runs, steps, history) rows: 13 runs a second for n/13 seconds up to
    ``end_ms``, oldest first (the order the engine would have written them)."""
    from tickwork._values.ids import new_run_id, occurrence_run_id

    keys = schedule_keys()
    per_second = SCHEDULES + 1
    seconds = -(-n // per_second)
    start_ms = end_ms - seconds * 1000
    sample_every = max(1, n // 200)
    runs: list[Any] = []
    steps: list[Any] = []
    history: list[Any] = []
    k = 0
    for second in range(seconds):
        occurrence = start_ms + second * 1000
        for slot in range(per_second):
            if k == n:
                break
            if slot < SCHEDULES:
                key = keys[slot]
                workflow = schedule_workflow(slot)
                run_id = occurrence_run_id(key, occurrence)
                created = occurrence + k % 7
                scheduled: tuple[Any, Any, Any] = (key, 1, occurrence)
                history.append(
                    (key, occurrence, None, "started", "due", run_id, 1, 1, created)
                )  # fmt: skip
                filled.newest[key] = (run_id, occurrence)
            else:
                workflow = MANUAL_WORKFLOW
                created = occurrence + 500
                run_id = new_run_id(created)
                scheduled = (None, None, None)
            if k % CANCELLED_EVERY == CANCELLED_EVERY - 1:
                ended = created + 5
                runs.append(
                    (run_id, workflow, "1", "cancelled", None, None, None, 1, 0, "default",
                     *scheduled, None, created, None, ended, None)
                )  # fmt: skip
            else:
                started = created + 1
                ended = started + 3 + k % 5
                failed = k < n // 2 and k % FAILED_EVERY == FAILED_EVERY - 1
                status, result, error = (
                    ("failed", None, "RuntimeError: boom")
                    if failed
                    else ("completed", '{"n":3}', None)
                )
                runs.append(
                    (run_id, workflow, "1", status, None, result, error, 1, 0, "default",
                     *scheduled, None, created, started, ended, started)
                )  # fmt: skip
                for seq, name in enumerate(("one", "two", "three"), start=1):
                    at = started + seq
                    if failed and seq == 3:
                        steps.append(
                            (run_id, "step", name, seq, "failed", None, error, 1, at, at)
                        )  # fmt: skip
                    else:
                        steps.append(
                            (run_id, "step", name, seq, "completed", f'{{"n":{seq}}}', None,
                             1, at, at)
                        )  # fmt: skip
            if k % sample_every == 0:
                filled.sample_ids.append(run_id)
            if k == n // 2:
                filled.middle_id = run_id
            k += 1
            if len(runs) == CHUNK:
                yield runs, steps, history
                runs, steps, history = [], [], []
    if runs:
        yield runs, steps, history


# -- the stores -----------------------------------------------------------------------


class Store:
    """One store of one backend: a SQLite file or a PostgreSQL schema."""

    backend = ""

    def __init__(self, label: str) -> None:
        self.label = label
        self.url = ""
        self.filled = Filled()

    def fill(self, n: int) -> None:
        """Register the 12 schedules through the engine, then write n ended runs."""
        from tickwork.testing import FakeClock

        engine = make_engine(self.url, FakeClock(T_END))
        engine.migrate()
        for index, key in enumerate(schedule_keys()):
            engine.schedule(schedule_workflow(index), every="1s", key=key, paused=True)
        check_shapes(self, engine)
        engine.close()
        end_ms = int(T_END.timestamp() * 1000) - 60_000  # the newest ended a minute ago
        self.bulk(generate(n, end_ms, self.filled))

    def bulk(self, chunks: Iterator[tuple[list[Any], ...]]) -> None:
        raise NotImplementedError

    def query(self, sql: str, *params: Any) -> tuple[list[str], list[tuple[Any, ...]]]:
        """Column names and rows of a query (``?`` placeholders)."""
        raise NotImplementedError

    def size(self) -> int:
        raise NotImplementedError

    def drop(self) -> None:
        raise NotImplementedError

    @property
    def locator(self) -> str:
        """What ``--store`` takes to find this store again (a file, a schema)."""
        raise NotImplementedError


def check_shapes(store: Store, engine: Any) -> None:
    """One run through the engine; its stored rows must have generate()'s shape: the same
    columns NULL and the same types in the others."""
    from tickwork._values.ids import new_run_id

    run_id = engine.start(MANUAL_WORKFLOW).id
    engine.run_until_idle()
    made = Filled()
    runs, steps, _ = next(generate(SCHEDULES + 1, 1_000_000, made))
    checks = (("tickwork_runs", "id", runs[-1]), ("tickwork_steps", "run_id", steps[-1]))
    for table, column, ours in checks:
        columns, rows = store.query(f"SELECT * FROM {table} WHERE {column} = ?", run_id)
        names = RUN_COLUMNS if table == "tickwork_runs" else STEP_COLUMNS
        theirs = dict(zip(columns, rows[-1], strict=True))
        for name, value in zip(names, ours, strict=True):
            assert type(theirs[name]) is type(value), (table, name, theirs[name], value)
    # An ended run left the queue: generate() writes no queue rows.
    _, queued = store.query("SELECT COUNT(*) FROM tickwork_queue WHERE id = ?", run_id)
    assert queued[0][0] == 0, ("tickwork_queue", run_id)
    assert len(new_run_id(0)) == len(run_id)


_LAST_RUN = "UPDATE tickwork_schedules SET last_fire_at = ?, last_run_id = ? WHERE key = ?"


class SQLiteStore(Store):
    backend = "sqlite"

    def __init__(self, label: str, folder: Path, *, existing: bool = False) -> None:
        super().__init__(label)
        self.path = folder / f"{label}.db"
        if existing and not self.path.exists():
            raise SystemExit(f"no store at {self.path}")
        for suffix in ("", "-wal", "-shm") if not existing else ():
            Path(f"{self.path}{suffix}").unlink(missing_ok=True)
        self.url = f"sqlite:///{self.path}"

    @property
    def locator(self) -> str:
        return str(self.path)

    def bulk(self, chunks: Iterator[tuple[list[Any], ...]]) -> None:
        conn = sqlite3.connect(self.path, isolation_level=None)
        conn.execute("PRAGMA synchronous=OFF")
        conn.execute("PRAGMA cache_size=-1000000")
        marks = ", ".join("?" * len(TABLES))
        indexes = conn.execute(
            f"SELECT name, sql FROM sqlite_master WHERE type = 'index' AND sql IS NOT NULL"
            f" AND tbl_name IN ({marks})",
            TABLES,
        ).fetchall()
        for name, _ in indexes:
            conn.execute(f"DROP INDEX {name}")
        runs_sql = _insert("tickwork_runs", RUN_COLUMNS)
        steps_sql = _insert("tickwork_steps", STEP_COLUMNS)
        history_sql = _insert("tickwork_schedule_history", HISTORY_COLUMNS)
        for runs, steps, history in chunks:
            conn.execute("BEGIN")
            conn.executemany(runs_sql, runs)
            conn.executemany(steps_sql, steps)
            conn.executemany(history_sql, history)
            conn.execute("COMMIT")
            self._count(runs, steps, history)
        for _, sql in indexes:
            conn.execute(sql)
        for key, (run_id, occurrence) in self.filled.newest.items():
            conn.execute(_LAST_RUN, (occurrence, run_id, key))
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        conn.close()

    def query(self, sql: str, *params: Any) -> tuple[list[str], list[tuple[Any, ...]]]:
        with sqlite3.connect(self.path) as conn:
            cursor = conn.execute(sql, params)
            return [d[0] for d in cursor.description], cursor.fetchall()

    def _count(self, runs: list[Any], steps: list[Any], history: list[Any]) -> None:
        self.filled.runs += len(runs)
        self.filled.steps += len(steps)
        self.filled.history += len(history)
        print(f"\r  {self.label}: {self.filled.runs:,} runs", end="", file=sys.stderr)

    def size(self) -> int:
        return sum(
            Path(f"{self.path}{suffix}").stat().st_size
            for suffix in ("", "-wal")
            if Path(f"{self.path}{suffix}").exists()
        )

    def drop(self) -> None:
        for suffix in ("", "-wal", "-shm"):
            Path(f"{self.path}{suffix}").unlink(missing_ok=True)


def _insert(table: str, columns: tuple[str, ...]) -> str:
    return f"INSERT INTO {table} ({', '.join(columns)}) VALUES ({', '.join('?' * len(columns))})"


class PostgresStore(Store):
    backend = "postgres"

    def __init__(self, label: str, base_url: str, *, schema: str | None = None) -> None:
        import psycopg

        super().__init__(label)
        self.base_url = base_url
        self.schema = schema or f"longhaul_{label.replace('-', '_')}_{uuid.uuid4().hex[:6]}"
        with psycopg.connect(base_url, autocommit=True) as conn:
            if schema is None:
                conn.execute(f"CREATE SCHEMA {self.schema}")
            elif not conn.execute(
                "SELECT 1 FROM pg_namespace WHERE nspname = %s", (schema,)
            ).fetchone():
                raise SystemExit(f"no schema {schema}")
        separator = "&" if "?" in base_url else "?"
        self.url = f"{base_url}{separator}options={quote(f'-csearch_path={self.schema}')}"

    @property
    def locator(self) -> str:
        return self.schema

    def bulk(self, chunks: Iterator[tuple[list[Any], ...]]) -> None:
        import psycopg

        with psycopg.connect(self.url, autocommit=True) as conn:
            conn.execute("SET session_replication_role = replica")  # no FK checks
            conn.execute("SET maintenance_work_mem = '512MB'")
            conn.execute("SET synchronous_commit = off")
            indexes = conn.execute(
                "SELECT indexname, indexdef FROM pg_indexes WHERE schemaname = %s"
                " AND tablename = ANY(%s) AND indexname NOT IN"
                " (SELECT conname FROM pg_constraint)",
                (self.schema, list(TABLES)),
            ).fetchall()
            for name, _ in indexes:
                conn.execute(f"DROP INDEX {name}")
            for runs, steps, history in chunks:
                with conn.transaction():
                    _copy(conn, "tickwork_runs", RUN_COLUMNS, runs)
                    _copy(conn, "tickwork_steps", STEP_COLUMNS, steps)
                    _copy(conn, "tickwork_schedule_history", HISTORY_COLUMNS, history)
                self._count(runs, steps, history)
            for _, sql in indexes:
                conn.execute(sql)
            for key, (run_id, occurrence) in self.filled.newest.items():
                conn.execute(_LAST_RUN.replace("?", "%s"), (occurrence, run_id, key))
            for table in TABLES:
                conn.execute(f"VACUUM ANALYZE {table}")

    _count = SQLiteStore._count

    def query(self, sql: str, *params: Any) -> tuple[list[str], list[tuple[Any, ...]]]:
        import psycopg

        with psycopg.connect(self.url, autocommit=True) as conn:
            cursor = conn.execute(sql.replace("?", "%s"), params)
            assert cursor.description is not None
            return [d.name for d in cursor.description], cursor.fetchall()

    def size(self) -> int:
        import psycopg

        with psycopg.connect(self.url, autocommit=True) as conn:
            row = conn.execute(
                "SELECT SUM(pg_total_relation_size(c.oid)) FROM pg_class c"
                " JOIN pg_namespace n ON n.oid = c.relnamespace"
                " WHERE n.nspname = %s AND c.relkind = 'r'",
                (self.schema,),
            ).fetchone()
        return int(row[0] or 0) if row else 0

    def drop(self) -> None:
        import psycopg

        with psycopg.connect(self.base_url, autocommit=True) as conn:
            conn.execute(f"DROP SCHEMA IF EXISTS {self.schema} CASCADE")


def _copy(conn: Any, table: str, columns: tuple[str, ...], rows: list[Any]) -> None:
    if not rows:
        return
    text = "".join("\t".join("\\N" if v is None else str(v) for v in row) + "\n" for row in rows)
    with conn.cursor().copy(f"COPY {table} ({', '.join(columns)}) FROM STDIN") as copy:
        copy.write(text)


# -- the timed part -------------------------------------------------------------------


@dataclass
class Side:
    """One store as the timed part sees it: its engine, clock and dashboard client."""

    store: Store
    engine: Any
    clock: Any
    client: Any = None


def open_side(store: Store) -> Side:
    from tickwork.testing import FakeClock

    clock = FakeClock(T_END)
    engine = make_engine(store.url, clock)
    for i in range(HOURLY):
        engine.schedule("three-steps", every="1h", key=f"hourly-{i:04d}")
    return Side(store, engine, clock)


def login(side: Side) -> None:
    from starlette.testclient import TestClient

    from tickwork.server import create_app

    key = side.engine.create_api_key(f"bench-{uuid.uuid4().hex[:6]}")
    client = TestClient(create_app(side.engine), base_url="http://localhost")
    page = client.get("/login").text
    csrf = re.findall(r'name="csrf" value="([^"]*)"', page)[0]
    answer = client.post(
        "/login", data={"key": key, "csrf": csrf, "next": "/"}, follow_redirects=False
    )
    assert answer.status_code == 303, answer.text
    side.client = client


def page(side: Side, path: str) -> Callable[[], Any]:
    def get() -> None:
        answer = side.client.get(path)
        assert answer.status_code == 200, (path, answer.status_code)

    return get


def fire_and_drain(sides: list[Side], repeat: int) -> dict[str, list[list[float]]]:
    """Seconds to fire 1,000 due schedules and to drain their runs, per repetition."""
    times: dict[str, list[list[float]]] = {
        "fire": [[] for _ in sides],
        "drain": [[] for _ in sides],
    }
    for _ in range(repeat):
        for index, side in enumerate(sides):
            side.clock.advance(timedelta(hours=1))
            began = time.perf_counter()
            fired = 0
            while started := side.engine.tick():
                fired += len(started)
            fire_s = time.perf_counter() - began
            began = time.perf_counter()
            drained = side.engine.run_until_idle()
            drain_s = time.perf_counter() - began
            assert fired == HOURLY and drained == HOURLY, (fired, drained)
            times["fire"][index].append(fire_s)
            times["drain"][index].append(drain_s)
    return times


def reads(sides: list[Side]) -> list[tuple[str, list[Callable[[], Any]]]]:
    """(label, one call per side) for every read operation."""
    from tickwork.server.metrics import metrics_registry, render_metrics

    key = schedule_keys()[4]  # a "report" schedule
    ops: list[tuple[str, list[Callable[[], Any]]]] = []

    def each(label: str, make: Callable[[Side], Callable[[], Any]]) -> None:
        ops.append((label, [make(side) for side in sides]))

    def rotating(side: Side) -> Callable[[], Any]:
        """Each call a run not read before: its pages come from the disk (or the OS's
        cache), not the database's."""
        ids = side.store.filled.sample_ids
        position = [0]

        def call() -> None:
            position[0] = (position[0] + 1) % len(ids)
            assert side.engine.get_run(ids[position[0]]) is not None

        return call

    def read_again(ids_of: Callable[[Side], list[str]]) -> Callable[[Side], Callable[[], Any]]:
        """Each call reads the same runs (the warm-up reads them first), as the other
        reads repeat their query; timed per run."""

        def make(side: Side) -> Callable[[], Any]:
            ids = ids_of(side)

            def call() -> None:
                for run_id in ids:
                    assert side.engine.get_run(run_id) is not None

            return PerItem(call, len(ids))

        return make

    def page_size(paged: bool, **filters: Any) -> int:
        """A page the small store fills too (twice over for a second page), at most 100:
        both stores then return as many runs, and only the history kept differs."""
        found = len(sides[0].engine.list_runs(limit=2 * PAGE, **filters))
        return max(1, min(PAGE, found // 2 if paged else found))

    def listing(label: str, **filters: Any) -> None:
        size = page_size(False, **filters)

        def make(side: Side) -> Callable[[], Any]:
            return lambda: side.engine.list_runs(limit=size, **filters)

        each(f"list_runs({label}){_rows(size)}", make)

    def second_page(label: str, **filters: Any) -> None:
        size = page_size(True, **filters)

        def make(side: Side) -> Callable[[], Any]:
            before = side.engine.list_runs(limit=size, **filters)[-1].id
            return lambda: side.engine.list_runs(limit=size, before=before, **filters)

        each(f"list_runs({label}before=) 2nd page{_rows(size)}", make)

    each(COLD_GET_RUN, rotating)
    each("get_run (200 ids across history, read before)", read_again(sample_ids))
    each("get_run (each schedule's newest run)", read_again(newest_ids))
    listing("")
    for status in ("completed", "failed", "cancelled", "pending", "running"):
        listing(f"status={status}", status=status)
    listing("workflow", workflow="report")
    listing("workflow, status=failed", workflow="report", status="failed")
    listing("workflow, status=pending", workflow="report", status="pending")
    listing("schedule_key", schedule_key=key)
    listing("schedule_key, status=failed", schedule_key=key, status="failed")
    listing("schedule_key, status=sleeping", schedule_key=key, status="sleeping")
    listing("workflow, schedule_key", workflow="report", schedule_key=key)
    listing(
        "workflow, schedule_key, status=failed",
        workflow="report",
        schedule_key=key,
        status="failed",
    )
    second_page("")
    second_page("status=failed, ", status="failed")
    second_page("schedule_key, ", schedule_key=key)
    second_page("workflow, ", workflow="adhoc")
    each(
        "list_runs(before=middle of history)",
        lambda side: lambda: side.engine.list_runs(limit=PAGE, before=side.store.filled.middle_id),
    )
    each("list_steps", lambda side: lambda: side.engine.list_steps(side.store.filled.middle_id))
    each("schedule_history(key, 100)", lambda side: lambda: side.engine.schedule_history(key))
    each("list_schedules (1,012)", lambda side: side.engine.list_schedules)
    each("/metrics scrape", lambda side: lambda: render_metrics(metrics_registry(side.engine)))
    each("dashboard Schedules page /", lambda side: page(side, "/"))
    each("dashboard Runs page /runs", lambda side: page(side, "/runs"))
    each("dashboard /runs?status=failed", lambda side: page(side, "/runs?status=failed"))
    each("dashboard /schedule?key=", lambda side: page(side, f"/schedule?key={key}"))
    return ops


#: a row shown for what it costs, with no target: the first read of an old run is a read
#: from the disk once the history outgrows the page cache, which no index avoids
COLD_GET_RUN = "get_run (a run not read before: disk)"


@dataclass(frozen=True)
class PerItem:
    """A call that does ``items`` operations; its time is reported per operation."""

    call: Callable[[], Any]
    items: int

    def __call__(self) -> Any:
        return self.call()


def sample_ids(side: Side) -> list[str]:
    return side.store.filled.sample_ids


def newest_ids(side: Side) -> list[str]:
    return [run_id for run_id, _ in side.store.filled.newest.values()]


def _rows(size: int) -> str:
    return "" if size == PAGE else f" [{size} run{'s' if size > 1 else ''}]"


def time_reads(
    ops: list[tuple[str, list[Callable[[], Any]]]], calls: int, budget: float
) -> list[tuple[str, list[float]]]:
    """Median seconds per call of each operation on each side, calls interleaved."""
    results = []
    for label, per_side in ops:
        for call in per_side:
            call()  # warm-up
        times: list[list[float]] = [[] for _ in per_side]
        spent = time.perf_counter()
        for done in range(calls):
            for index, call in enumerate(per_side):
                began = time.perf_counter()
                call()
                times[index].append(time.perf_counter() - began)
            if done >= 2 and time.perf_counter() - spent > budget:
                break
        per = [getattr(call, "items", 1) for call in per_side]
        results.append((label, [statistics.median(t) / n for t, n in zip(times, per, strict=True)]))
        print(f"  {label}", file=sys.stderr)
    return results


def prune_rates(sides: list[Side]) -> list[float] | None:
    """Rows removed per second by one ``engine.prune()`` pass that keeps the last hour."""
    from tickwork import Engine

    if not hasattr(Engine, "prune"):
        return None
    takes_older_than = "older_than" in inspect.signature(Engine.prune).parameters
    options = {} if takes_older_than else {"retention": "1h"}
    rates = []
    for side in sides:
        engine = make_engine(side.store.url, side.clock, **options)
        began = time.perf_counter()
        removed = engine.prune(older_than="1h") if takes_older_than else engine.prune()
        elapsed = time.perf_counter() - began
        engine.close()
        print(f"  prune {side.store.label}: {removed:,} rows in {elapsed:.1f} s", file=sys.stderr)
        rates.append(removed / elapsed if elapsed else 0.0)
    return rates


# -- pruning under load ---------------------------------------------------------------

LOAD_SCHEDULES = 50
LOAD_WORKFLOW = "heartbeat"
LOAD_THREADS = 8  # the worker's default
WARM_UP_S = 5.0  # the load's first firings are left out (connections, caches)


class ShiftedClock:
    """The machine's clock moved by a constant: time passes as on the wall, and "now" is
    the big store's (whose history ends at ``T_END``), so the load's runs are newer than
    anything the prune removes and its schedules have nothing to catch up."""

    def __init__(self, offset_ms: int) -> None:
        from tickwork._values.clock import SystemClock

        self._system = SystemClock()
        self._offset = timedelta(milliseconds=offset_ms)

    def now(self) -> datetime:
        return self._system.now() + self._offset


def beat(ctx: Any, input: Any = None) -> dict[str, int]:
    return ctx.step("beat", first)  # type: ignore[no-any-return]


def load_worker(url: str, keys: list[str], offset_ms: int, ready: Any, stop: Any, out: str) -> None:
    """The load, in a process of its own: ``len(keys)`` every-second schedules of a one-step
    workflow, fired and executed by an ordinary worker (no pruning of its own:
    ``retention=None``). Each firing transaction is timed around ``fire_due``; at the end
    ``out`` gets, per run fired, (run id, ms when the loop's tick began, ms when its firing
    transaction began, ms when it committed), on the shifted clock."""
    import json

    from tickwork import Engine

    clock = ShiftedClock(offset_ms)
    engine = Engine(url, clock=clock, retention=None)
    engine.workflow(LOAD_WORKFLOW)(beat)
    for key in keys:
        engine.schedule(LOAD_WORKFLOW, every="1s", key=key)
    store = engine._runtime.store
    fire_due = store.firing.fire_due
    firing = engine._firing
    tick = firing.tick
    fired: list[tuple[str, float, float, float]] = []
    woke = [0.0]

    def ms() -> float:
        return (clock.now() - EPOCH) / timedelta(milliseconds=1)

    def timed_tick() -> Any:
        woke[0] = ms()
        return tick()

    def timed_fire_due(**kwargs: Any) -> Any:
        began = ms()
        result = fire_due(**kwargs)
        done = ms()
        fired.extend((run_id, woke[0], began, done) for run_id in result.run_ids)
        return result

    firing.tick = timed_tick  # type: ignore[method-assign]
    store.firing = Overridden(store.firing, fire_due=timed_fire_due)
    parent, orphaned = os.getppid(), False
    with engine.worker(threads=LOAD_THREADS):
        ready.set()
        # A benchmark killed before it sets ``stop`` must not leave its load firing on
        # the same file (a ``spawn`` child outlives its parent): ask every second.
        while not orphaned and not stop.wait(1.0):
            orphaned = os.getppid() != parent
    engine.close()
    if not orphaned:
        Path(out).write_text(json.dumps(fired))


class Overridden:
    """A store's part with some of its methods replaced (the parts have ``__slots__``:
    a method cannot be set on one)."""

    def __init__(self, part: Any, **methods: Any) -> None:
        self._part = part
        self.__dict__.update(methods)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._part, name)


class PruneGate:
    """Lets the prune's batches through only while open, so that pruning and not pruning
    alternate within one pass: ``close`` returns once the batch in flight (if any) is
    done; ``finish`` makes the next batch end the pass (``--prune-for``)."""

    def __init__(self, engine: Any) -> None:
        store = engine._runtime.store
        self._batch = store.pruning.prune_batch
        self._open = threading.Event()
        self._busy = threading.Lock()
        self._finish = False
        store.pruning = Overridden(store.pruning, prune_batch=self._gated)

    def _gated(self, **kwargs: Any) -> Any:
        from tickwork._rules.retention import PruneBatch, PrunePosition

        while True:
            self._open.wait()
            with self._busy:
                if self._finish:
                    return PruneBatch(0, PrunePosition(phase="done"))
                if self._open.is_set():
                    return self._batch(**kwargs)

    def open(self) -> None:
        self._open.set()

    def close(self) -> None:
        self._open.clear()
        with self._busy:
            pass

    def finish(self) -> None:
        self._finish = True
        self._open.set()


@dataclass
class Period:
    pruning: bool
    start_ms: float  # wall clock
    end_ms: float
    load: float  # the 1-minute load average at its end


@dataclass
class UnderLoad:
    """What ``prune_under_load`` measured."""

    removed: int
    prune_s: float
    periods: list[Period]
    #: per firing: (occurrence ms, created_at - occurrence, commit - occurrence, the firing
    #: transaction's ms, the loop's tick began - occurrence),
    #: split by whether the prune was running at the occurrence
    firings: dict[bool, list[tuple[int, float, float, float, float]]]
    missed: dict[bool, int]  # occurrences a schedule decided not to start (late)
    kept: bool  # every run and history entry the load made is still there
    size_before: int
    size_after: int


def phase_now_ms(store: Store) -> int:
    """The big store's "now" for the phase: its schedules' latest firing, to the next
    second (``T_END`` after the fill; later once hourly schedules fired)."""
    _, rows = store.query("SELECT MAX(last_fire_at) FROM tickwork_schedules")
    latest = max(int(rows[0][0] or 0), int(T_END.timestamp() * 1000))
    return (latest // 1000 + 1) * 1000


def prune_under_load(store: Store, args: argparse.Namespace) -> UnderLoad:
    """Prune the store's backlog (``engine.prune(older_than="1h")``) while a worker process
    fires and runs 50 every-second schedules on the same store; the prune runs in periods
    of ``--period`` seconds alternating with as long without it (the baseline), until the
    pass is over and the baseline as long as the pruning."""
    import json
    import multiprocessing
    import tempfile

    from tickwork._values.clock import from_ms
    from tickwork.testing import FakeClock

    size_before = store.size()
    now_ms = phase_now_ms(store)
    tag = uuid.uuid4().hex[:6]
    keys = [f"load-{tag}-{i + 1:02d}" for i in range(LOAD_SCHEDULES)]
    offset_ms = now_ms - time.time_ns() // 1_000_000
    spawn = multiprocessing.get_context("spawn")
    ready, stop = spawn.Event(), spawn.Event()
    out = Path(tempfile.mkstemp(prefix="longhaul-load-", suffix=".json")[1])
    worker = spawn.Process(
        target=load_worker, args=(store.url, keys, offset_ms, ready, stop, str(out))
    )
    worker.start()
    engine = make_engine(store.url, FakeClock(from_ms(now_ms)))
    gate = PruneGate(engine)
    outcome: dict[str, Any] = {}

    def prune() -> None:
        try:
            outcome["removed"] = engine.prune(older_than="1h")
        except BaseException as exc:  # reported by the main thread
            outcome["error"] = exc

    pruner = threading.Thread(target=prune, name="longhaul-prune")
    periods: list[Period] = []
    try:
        if not ready.wait(120):
            raise RuntimeError("the load's worker did not start")
        time.sleep(WARM_UP_S)
        pruner.start()
        spent = {True: 0.0, False: 0.0}
        pruning = False
        while pruner.is_alive() or spent[False] < spent[True]:
            began = time.time()
            if pruning:
                cap = args.prune_for - spent[True] if args.prune_for else args.period
                gate.open()
                pruner.join(min(args.period, max(0.0, cap)))
                gate.close()
                if args.prune_for and spent[True] + time.time() - began >= args.prune_for:
                    gate.finish()
                    pruner.join()
            else:
                length = args.period if pruner.is_alive() else spent[True] - spent[False]
                time.sleep(min(args.period, length))
            ended = time.time()
            spent[pruning] += ended - began
            periods.append(Period(pruning, began * 1000, ended * 1000, os.getloadavg()[0]))
            print(
                f"\r  {'pruning' if pruning else 'baseline'} period {len(periods)}: "
                f"{spent[True]:,.0f} s pruning, {spent[False]:,.0f} s without, "
                f"load {periods[-1].load:.2f}",
                file=sys.stderr,
            )
            pruning = not pruning and pruner.is_alive()
        if "error" in outcome:
            raise outcome["error"]
    finally:
        gate.finish()
        stop.set()
        worker.join(120)
        engine.close()
    fired = {run_id: tuple(times) for run_id, *times in json.loads(out.read_text())}
    out.unlink()
    return UnderLoad(
        removed=outcome["removed"],
        prune_s=spent[True],
        periods=periods,
        size_before=size_before,
        size_after=store.size(),
        **load_firings(store, keys, offset_ms, periods, fired),
    )


def load_firings(
    store: Store,
    keys: list[str],
    offset_ms: int,
    periods: list[Period],
    fired: dict[str, tuple[float, ...]],
) -> dict[str, Any]:
    """The load's firings and misses, by the periods their occurrences fell in, read from
    the store after the phase; and whether the prune left all of them."""
    from tickwork import Engine
    from tickwork.testing import FakeClock

    marks = ", ".join("?" * len(keys))
    _, runs = store.query(
        f"SELECT id, scheduled_for, created_at FROM tickwork_runs WHERE schedule_key IN ({marks})",
        *keys,
    )
    _, history = store.query(
        "SELECT key, occurrence, decision, count, run_id FROM tickwork_schedule_history"
        f" WHERE key IN ({marks})",
        *keys,
    )

    def within(occurrence: float) -> int | None:
        """The index of the period the occurrence fell in."""
        for index, period in enumerate(periods):
            if period.start_ms + offset_ms <= occurrence < period.end_ms + offset_ms:
                return index
        return None  # the warm-up, or after the last period

    each: list[list[tuple[int, float, float, float, float]]] = [[] for _ in periods]
    unreported: list[str] = []
    for run_id, occurrence, created in runs:
        index = within(occurrence)
        if index is not None:
            if run_id not in fired:  # the worker did not time it (said below)
                unreported.append(run_id)
                continue
            woke, began, done = fired[run_id]
            late = int(created) - int(occurrence)
            each[index].append(
                (int(occurrence), late, done - occurrence, done - began, woke - occurrence)
            )
    missed_in = [0 for _ in periods]
    started = 0
    for _key, occurrence, decision, count, _run_id in history:
        if decision == "started":
            started += 1
        index = within(occurrence)
        if index is not None and decision != "started":
            missed_in[index] += int(count)
    kept = started == len(runs) and set(fired) <= {run[0] for run in runs}
    if unreported:
        print(
            f"  {len(unreported)} run(s) in the periods were not timed by the load's worker"
            f" (left out of the table), e.g. {unreported[0]}",
            file=sys.stderr,
        )
    firings: dict[bool, list[tuple[int, float, float, float, float]]] = {True: [], False: []}
    missed = {True: 0, False: 0}
    for index, period in enumerate(periods):
        firings[period.pruning] += each[index]
        missed[period.pruning] += missed_in[index]
        if not each[index] and not missed_in[index]:
            continue  # the last baseline period can be a moment long
        lateness = [f[1] for f in each[index]]
        committed = [f[2] for f in each[index]]
        print(
            f"  period {index + 1:>3} {'pruning ' if period.pruning else 'baseline'} "
            f"load {period.load:5.2f}: {len(lateness):>5} firings, lateness p99 "
            f"{_quantile(lateness, 0.99):7.1f} ms, committed p99 {_quantile(committed, 0.99):7.1f}"
            f" ms, missed {missed_in[index]}",
            file=sys.stderr,
        )
    engine = Engine(store.url, clock=FakeClock(T_END), retention=None)
    for key in keys:  # they are no one's any more (their runs stay)
        engine.unschedule(key)
    engine.close()
    return {"firings": firings, "missed": missed, "kept": kept}


def _quantile(values: list[float], q: float) -> float:
    """The nearest-rank quantile (0 < q <= 1)."""
    ordered = sorted(values)
    return ordered[max(0, math.ceil(q * len(ordered)) - 1)] if ordered else float("nan")


def report_under_load(backend: str, store: Store, phase: UnderLoad) -> None:
    rate = phase.removed / phase.prune_s if phase.prune_s else 0.0
    loads = [p.load for p in phase.periods]
    mark = "✔" if rate >= 20_000 else "✘"
    print()
    print(
        f"{backend}: prune under load, big store {store.locator}: {phase.removed:,} rows in "
        f"{phase.prune_s:,.0f} s of pruning = {rate:,.0f} rows/s {mark} ≥20,000/s; "
        f"{len(phase.periods)} periods alternating; load average {min(loads):.2f} to "
        f"{max(loads):.2f}; "
        f"size {phase.size_before / 1e6:,.0f} MB → {phase.size_after / 1e6:,.0f} MB; "
        f"the load's runs and history all kept: {'yes' if phase.kept else 'NO'}"
    )
    if backend == "postgres":
        # A server with autovacuum off (some CI set-ups) measures pruning with no vacuum:
        # dead rows pile up in the tables the load updates. Say so beside the figures.
        _, rows = store.query("SHOW autovacuum")
        print(f"PostgreSQL autovacuum: {rows[0][0]}")
    header = "| 50 every-second schedules | during the prune | without (baseline) | target |"
    print(header)
    print("| --- | ---: | ---: | --- |")
    counts = [len(phase.firings[side]) for side in (True, False)]
    print(f"| firings (occurrences) | {counts[0]:,} | {counts[1]:,} | |")
    print(f"| occurrences missed | {phase.missed[True]:,} | {phase.missed[False]:,} | 0 |")
    measures = (
        ("lateness (created_at - occurrence)", 1),
        ("committed - occurrence", 2),
        ("firing transaction (fire_due)", 3),
        ("the loop's tick began - occurrence", 4),
    )
    for label, index in measures:
        for name, q in (("p50", 0.5), ("p99", 0.99), ("max", 1.0)):
            during, base = (
                _quantile([f[index] for f in phase.firings[side]], q) for side in (True, False)
            )
            target = ""
            if index == 1 and name == "p99" and phase.firings[True]:
                target = f"{'✔' if during <= 20 else '✘'} ≤20 ms"
            print(f"| {label} {name} | {during:,.1f} ms | {base:,.1f} ms | {target} |")


# -- the report -----------------------------------------------------------------------


def _ms(seconds: float) -> str:
    ms = seconds * 1000
    return f"{ms:,.0f} ms" if ms >= 100 else f"{ms:.2f} ms" if ms < 10 else f"{ms:.1f} ms"


def report(
    backend: str,
    stores: list[Store],
    rows: list[tuple[str, list[float]]],
) -> None:
    small, big = stores
    print()
    print(
        f"{backend}: small store {small.filled.runs:,} runs ({small.size() / 1e6:,.0f} MB), "
        f"big store {big.filled.runs:,} runs ({big.size() / 1e6:,.0f} MB)"
    )
    header = f"| {'operation':<50} | {'small':>10} | {'big':>10} | {'ratio':>6} | target |"
    print(header)
    print("| " + " | ".join(["---"] * 5) + " |")
    for label, (a, b) in rows:
        ratio = b / a if a else float("inf")
        ok = ratio <= 1.5
        if label.startswith("/metrics"):
            ok = ok and b <= 0.050
            target = "≤1.5x, ≤50 ms"
        else:
            target = "≤1.5x"
        mark = "✔" if ok else "✘"
        if label == COLD_GET_RUN:
            mark, target = "·", "none (disk)"
        print(f"| {label:<50} | {_ms(a):>10} | {_ms(b):>10} | {ratio:>5.2f}x | {mark} {target} |")


def run_backend(backend: str, args: argparse.Namespace) -> None:
    stores: list[Store]
    if backend == "sqlite":
        folder = Path(args.dir)
        folder.mkdir(parents=True, exist_ok=True)
        stores = [SQLiteStore("small", folder), SQLiteStore(f"big-{args.runs}", folder)]
    else:
        stores = [PostgresStore("small", args.postgres), PostgresStore("big", args.postgres)]
    try:
        for store, n in zip(stores, (args.small, args.runs), strict=True):
            began = time.perf_counter()
            store.fill(n)
            print(
                f"\r  {backend} {store.label}: {n:,} runs written in "
                f"{time.perf_counter() - began:,.0f} s",
                file=sys.stderr,
            )
        sides = [open_side(store) for store in stores]
        for side in sides:
            login(side)
        print(f"  {backend}: firing and draining", file=sys.stderr)
        loop = fire_and_drain(sides, args.repeat)
        rows: list[tuple[str, list[float]]] = [
            (f"fire {HOURLY:,} due schedules", [statistics.median(t) for t in loop["fire"]]),
            (
                f"drain {HOURLY:,} runs (3 steps each)",
                [statistics.median(t) for t in loop["drain"]],
            ),
        ]
        rows += time_reads(reads(sides), args.calls, args.budget)
        for side in sides:
            side.client.close()
            side.engine.close()
        report(backend, stores, rows)  # now: the prune phase can take hours
        if not args.no_prune:
            small_rate = prune_rates(sides[:1])
            print(f"  {backend}: pruning the big store under load", file=sys.stderr)
            phase = prune_under_load(stores[1], args)
            if small_rate is not None:
                print(
                    f"\n{backend}: pruning the small store's backlog: {small_rate[0]:,.0f} rows/s"
                )
            report_under_load(backend, stores[1], phase)
    finally:
        if not args.keep:
            for store in stores:
                store.drop()
        else:
            print(
                f"kept: {', '.join(store.locator for store in stores)}; the prune phase again:"
                f" --backend {backend} --only prune-under-load --store {stores[1].locator}",
                file=sys.stderr,
            )


def run_phase(backend: str, args: argparse.Namespace) -> None:
    """``--only prune-under-load``: the phase alone, on a store a run with ``--keep`` left
    (what it prunes is what is left of its backlog: see ``--prune-for``)."""
    store: Store
    if backend == "sqlite":
        path = Path(args.store)
        store = SQLiteStore(path.stem, path.parent, existing=True)
    else:
        store = PostgresStore("big", args.postgres, schema=args.store)
    report_under_load(backend, store, prune_under_load(store, args))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=10_000_000, help="ended runs in the big store")
    parser.add_argument("--small", type=int, default=SMALL, help="ended runs in the small store")
    parser.add_argument("--quick", action="store_true", help="500,000 runs in the big store")
    parser.add_argument("--backend", choices=("sqlite", "postgres", "both"), default="both")
    parser.add_argument("--postgres", default=None, help="PostgreSQL URL (a schema per store)")
    parser.add_argument("--dir", default="/tmp/tickwork-longhaul", help="SQLite files here")
    parser.add_argument("--repeat", type=int, default=3, help="fire/drain repetitions")
    parser.add_argument("--calls", type=int, default=15, help="calls per read (median)")
    parser.add_argument("--budget", type=float, default=20.0, help="seconds per read, at most")
    parser.add_argument("--no-prune", action="store_true", help="skip the prune row")
    parser.add_argument("--keep", action="store_true", help="keep the stores afterwards")
    parser.add_argument(
        "--period", type=float, default=60.0, help="seconds of each pruning/baseline period"
    )
    parser.add_argument(
        "--prune-for", type=float, default=0.0, help="stop pruning after this many seconds"
    )
    parser.add_argument(
        "--only", choices=("prune-under-load",), help="only this phase, on a kept --store"
    )
    parser.add_argument("--store", help="with --only: the SQLite file or PostgreSQL schema")
    args = parser.parse_args()
    if args.only and (not args.store or args.backend == "both"):
        parser.error("--only needs --store and --backend sqlite or postgres")
    if args.quick:
        args.runs = 500_000
    args.postgres = (
        args.postgres
        or os.environ.get("TICKWORK_BENCH_POSTGRES_URL")
        or os.environ.get("TICKWORK_TEST_POSTGRES_URL")
        or "postgresql://postgres@127.0.0.1:5432/test"
    )
    # starlette 1.x asks for httpx2 under its TestClient; httpx works the same here.
    warnings.filterwarnings("ignore", message=".*httpx2.*")
    try:
        import starlette.testclient  # noqa: F401

        import tickwork  # noqa: F401
    except ImportError as exc:
        print(f"bench/longhaul.py needs tickwork with its server extras ({exc.name} is "
              f"missing). From the repository root:\n    {INSTALL}", file=sys.stderr)  # fmt: skip
        return 2
    free = shutil.disk_usage(Path(args.dir).parent if not Path(args.dir).exists() else args.dir)
    what = (
        f"{args.only} on {args.store}"
        if args.only
        else (f"big store {args.runs:,} ended runs, small {args.small:,}")
    )
    print(f"long haul: {what}; "
          f"python {platform.python_version()}, {os.cpu_count()} CPUs, sqlite "
          f"{sqlite3.sqlite_version}, {free.free / 1e9:,.0f} GB free in {args.dir}")  # fmt: skip
    if args.only:
        run_phase(args.backend, args)
        return 0
    backends = ("sqlite", "postgres") if args.backend == "both" else (args.backend,)
    for backend in backends:
        run_backend(backend, args)
    return 0


if __name__ == "__main__":
    sys.exit(main())
