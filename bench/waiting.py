"""Runs waiting cost nothing: schedule start lateness and an idle worker's CPU with 0,
100,000 and 1,000,000 runs waiting (issue 29 item 1).

For each size, on a fresh store (a SQLite file, or a fresh PostgreSQL schema):

1. ``size`` runs of the worker's own workflow are put in the queue in bulk (one
   ``INSERT ... SELECT`` per table, not timed): half delayed (pending, due in a day), half
   sleeping (asleep for a day), as a backlog of ``start(delay=...)`` and ``ctx.sleep``
   leaves them. Then SQLite's log is checkpointed, PostgreSQL vacuumed, analyzed and
   checkpointed (autovacuum and the checkpointer would within minutes): a store at rest,
   so that no clean-up of the fill runs during the measures.
2. A real worker process (``python -m tickwork worker``, so that ``PYTHONPATH`` chooses
   the tree measured) serves that workflow. Once it is up, its CPU (user + system, from
   /proc; on PostgreSQL with the server processes of its connections, where its claims
   and wake-ups run: the server must be on this machine) is read over ``--idle``
   seconds: **idle CPU**, percent of one core.
3. Then ``--schedules`` schedules fire every second, aligned to the same whole second;
   over ``--seconds`` of real time (the first second left out), each run's
   ``started_at - scheduled_for`` is its **start lateness** (p50, p99, max in ms).

The figures are printed as JSON, then each size's ratio to the empty queue's (target:
within 1.2x). Each measure is a few tens of seconds; a million runs take ~10-30 s to
insert.

Usage (from the repository root)::

    .venv/bin/python bench/waiting.py --backend sqlite
    .venv/bin/python bench/waiting.py --backend postgres \
        --postgres postgresql://postgres@127.0.0.1:5432/test
    PYTHONPATH=/copy/of/another/tree/src .venv/bin/python bench/waiting.py ...  # its code
"""

from __future__ import annotations

import argparse
import json
import math
import os
import signal
import sqlite3
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any
from urllib.parse import quote

DAY_MS = 86_400_000
#: the worker's connections' name on PostgreSQL (backends)
APP_NAME = f"tickwork_waiting_{os.getpid()}"
APP = """
from tickwork import Engine

engine = Engine()


@engine.workflow("noop")
def noop(ctx, input=None):
    return None
"""
# The waiting runs, generated in the database: even numbers delayed, odd ones asleep.
# {numbers} yields n = 1..size; ? are now_ms (thrice) and the wake-up base.
RUNS = """
INSERT INTO tickwork_runs (id, workflow, version, status, input, attempt, priority, pool,
    created_at, started_at, attempt_started_at)
SELECT 'wait-' || n, 'noop', '1', CASE WHEN n % 2 = 0 THEN 'pending' ELSE 'sleeping' END,
    'null', 1, 0, 'default', ?, CASE WHEN n % 2 = 0 THEN NULL ELSE ? END,
    CASE WHEN n % 2 = 0 THEN NULL ELSE ? END
FROM {numbers}
"""
QUEUE = """
INSERT INTO tickwork_queue (id, workflow, pool, priority, status, available_at, created_at)
SELECT id, workflow, pool, priority, status, ? + CAST(substr(id, 6) AS BIGINT), created_at
FROM tickwork_runs WHERE id LIKE 'wait-%'
"""
COUNT = "SELECT COUNT(*) FROM tickwork_queue WHERE available_at > created_at"
SQLITE_NUMBERS = (
    "(WITH RECURSIVE c(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM c WHERE n < ?) SELECT n FROM c)"
)
PG_NUMBERS = "generate_series(1, %s) AS n"


def cpu_seconds(pid: int) -> float:
    """User + system CPU time of a whole process (all threads) from /proc."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def cpu_of(pids: list[int]) -> dict[int, float]:
    """CPU seconds of each process of ``pids`` still there."""
    found = {}
    for pid in pids:
        with suppress(FileNotFoundError, ProcessLookupError):
            found[pid] = cpu_seconds(pid)
    return found


def backends(url: str) -> list[int]:
    """The PostgreSQL server processes serving the worker (none for SQLite): its idle
    claims and wake-ups run there. Found by the worker's application_name, on a server
    of this machine."""
    if url.startswith("sqlite:///"):
        return []
    import psycopg

    with psycopg.connect(url, autocommit=True) as conn:
        rows = conn.execute(
            "SELECT pid FROM pg_stat_activity WHERE application_name = %s", (APP_NAME,)
        ).fetchall()
    return [row[0] for row in rows]


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


@contextmanager
def fresh_store(backend: str, postgres: str | None) -> Iterator[str]:
    """A store URL on an empty database, removed afterwards."""
    if backend == "sqlite":
        with tempfile.TemporaryDirectory() as folder:
            yield f"sqlite:///{folder}/waiting.db"
        return
    import psycopg

    assert postgres, "--postgres URL is needed for --backend postgres"
    schema = f"bench_waiting_{uuid.uuid4().hex[:8]}"
    with psycopg.connect(postgres, autocommit=True) as conn:
        conn.execute(f"CREATE SCHEMA {schema}")
    separator = "&" if "?" in postgres else "?"
    try:
        yield f"{postgres}{separator}options={quote(f'-csearch_path={schema}')}"
    finally:
        with psycopg.connect(postgres, autocommit=True) as conn:
            conn.execute(f"DROP SCHEMA {schema} CASCADE")


def fill(url: str, size: int) -> float:
    """Put ``size`` runs waiting a day in the queue; returns the seconds it took."""
    if not size:
        return 0.0
    start = time.perf_counter()
    now_ms = int(time.time() * 1000)
    if url.startswith("sqlite:///"):
        with sqlite3.connect(url.removeprefix("sqlite:///")) as conn:
            conn.execute(RUNS.format(numbers=SQLITE_NUMBERS), (now_ms, now_ms, now_ms, size))
            conn.execute(QUEUE, (now_ms + DAY_MS,))
            queued = conn.execute(COUNT).fetchone()[0]
        # A store at rest: the log checkpointed, as it would be long since (not during
        # the measures, by the worker's checkpoints).
        with sqlite3.connect(url.removeprefix("sqlite:///")) as conn:
            conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    else:
        import psycopg

        with psycopg.connect(url) as conn:
            statement = RUNS.replace("%", "%%").format(numbers=PG_NUMBERS).replace("?", "%s")
            conn.execute(statement, (now_ms, now_ms, now_ms, size))  # type: ignore[arg-type]
            conn.execute(QUEUE.replace("%", "%%").replace("?", "%s"), (now_ms + DAY_MS,))  # type: ignore[arg-type]
            queued = conn.execute(COUNT).fetchone()[0]  # type: ignore[index]
        with psycopg.connect(url, autocommit=True) as conn:
            conn.execute("VACUUM ANALYZE")
            conn.execute("CHECKPOINT")  # the fill's pages written now, not during the measures
    assert queued == size, f"{queued} runs queued, not {size}"
    return time.perf_counter() - start


def start_worker(url: str, folder: Path, app_text: str = APP) -> subprocess.Popen[bytes]:
    """``python -m tickwork worker waiting_app:engine`` over ``url``, the app's code
    ``app_text`` (an ``engine``), its log in ``folder/worker.log``."""
    app = folder / "waiting_app.py"
    app.write_text(app_text)
    env = {k: v for k, v in os.environ.items() if not k.startswith("TICKWORK_")}
    if not url.startswith("sqlite:///"):
        url = f"{url}&application_name={APP_NAME}"
    env.update(TICKWORK_DATABASE_URL=url, PYTHONUNBUFFERED="1")
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(folder), env.get("PYTHONPATH")]))
    log = open(folder / "worker.log", "wb")  # noqa: SIM115 - closed with the process
    return subprocess.Popen(
        [sys.executable, "-m", "tickwork", "worker", "waiting_app:engine", "--log-level", "INFO"],
        env=env, cwd=folder, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
    )  # fmt: skip


def wait_started(folder: Path, proc: subprocess.Popen[bytes]) -> None:
    deadline = time.monotonic() + 120
    log = folder / "worker.log"
    while "started" not in log.read_text(errors="replace"):
        if proc.poll() is not None or time.monotonic() > deadline:
            raise RuntimeError(f"worker did not start:\n{log.read_text(errors='replace')}")
        time.sleep(0.05)


def stop(proc: subprocess.Popen[bytes]) -> None:
    proc.send_signal(signal.SIGTERM)
    try:
        proc.wait(60)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


def measure(url: str, size: int, args: argparse.Namespace) -> dict[str, Any]:
    from tickwork import Engine

    engine = Engine(url)

    @engine.workflow("noop")
    def _noop(ctx: Any, input: Any = None) -> None:
        return None

    engine.migrate()
    filled = fill(url, size)
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        proc = start_worker(url, folder)
        try:
            wait_started(folder, proc)
            time.sleep(2.0)  # start-up settles
            pids = [proc.pid, *backends(url)]
            before, t0 = cpu_of(pids), time.monotonic()
            time.sleep(args.idle)
            after = cpu_of(pids)
            idle = 100 * sum(after[pid] - before[pid] for pid in after) / (time.monotonic() - t0)
            # Every-second schedules, from a whole second past their registration.
            first = math.ceil(time.time() + 2 + args.schedules / 500)
            start_at = datetime.fromtimestamp(first, UTC)
            for i in range(args.schedules):
                engine.schedule("noop", every="1s", key=f"s{i}", start_at=start_at)
            window = (first + 1, first + 1 + args.seconds)  # the first second left out
            while time.time() < window[1] + 2:
                time.sleep(0.2)
        finally:
            stop(proc)
    late, fired = [], 0
    lo, hi = (datetime.fromtimestamp(edge, UTC) for edge in window)
    for i in range(args.schedules):
        for run in engine.list_runs(schedule_key=f"s{i}", limit=1000):
            if run.scheduled_for is None or not lo <= run.scheduled_for < hi:
                continue
            fired += 1
            if run.started_at is not None:
                late.append((run.started_at - run.scheduled_for) / timedelta(milliseconds=1))
    engine.close()
    return {
        "waiting": size, "fill_s": round(filled, 1), "idle_cpu_percent": round(idle, 2),
        "server_processes": len(pids) - 1,
        "late_p50_ms": round(percentile(late, 0.5), 1) if late else None,
        "late_p99_ms": round(percentile(late, 0.99), 1) if late else None,
        "late_max_ms": round(max(late), 1) if late else None,
        "started": len(late), "expected": args.schedules * args.seconds, "fired": fired,
    }  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--backend", choices=["sqlite", "postgres"], default="sqlite")
    parser.add_argument("--postgres", help="PostgreSQL URL (a schema is made and dropped)")
    parser.add_argument("--sizes", default="0,100000,1000000")
    parser.add_argument("--idle", type=float, default=10.0, help="idle CPU window, seconds")
    parser.add_argument("--seconds", type=int, default=15, help="lateness window, seconds")
    parser.add_argument("--schedules", type=int, default=10)
    args = parser.parse_args()
    import tickwork

    print(f"# {args.backend}, tickwork from {Path(tickwork.__file__).parent}", flush=True)
    results = []
    for size in (int(s) for s in args.sizes.split(",")):
        with fresh_store(args.backend, args.postgres) as url:
            results.append(measure(url, size, args))
        print(json.dumps(results[-1]), flush=True)
    empty = results[0]
    for result in results[1:]:
        ratios = {
            key: round(result[key] / empty[key], 2) if empty[key] else None
            for key in ("idle_cpu_percent", "late_p50_ms", "late_p99_ms")
        }
        print(f"# {result['waiting']:,} waiting / {empty['waiting']:,}: {json.dumps(ratios)}")


if __name__ == "__main__":
    main()
