"""The worker's reads while runs keep ending, between vacuums (PostgreSQL).

The measurement behind docs/architecture.md "The queue". A store is filled with FILL
ended runs (bulk-written, then vacuumed and analyzed, as a store in use some days), then
runs go through it at RATE a second the way a worker takes them (``insert_run``,
``claim_runs``, ``finish_run``, through the store), while a probe times, twice a second,
the two reads every worker makes at every wake-up: "when is the next run due"
(``next_due_ms``) and a claim that finds nothing due, each for a workflow with no runs, so
that each walks everything the index of runs in flight holds. Every WINDOW seconds it
prints their median and p99, and the dead rows PostgreSQL counts in the tables and when
autovacuum last visited them. With ``--backlog N``, N runs are started at once first (a
fan-out, a backfill) and drained as fast as one thread can, before the steady rate.

A run that ends leaves its old versions behind until its table is vacuumed; what matters
is whether the worker's reads walk them. Run it with autovacuum on (PostgreSQL's
default; the script says what the server has): the runs table is vacuumed only when its
dead rows pass 20 % of its rows, so the bigger the history kept, the longer between.

    bench/.venv/bin/python bench/churn.py --fill 2000000 --rate 300 --minutes 10
    bench/.venv/bin/python bench/churn.py --backlog 50000 --minutes 6 --window 30

It works in a schema of its own, dropped at the end.
"""

from __future__ import annotations

import argparse
import statistics
import threading
import time
import uuid
from urllib.parse import quote

import psycopg

from tickwork import RunStatus
from tickwork._store import ClaimRequest, NewRun, open_store

DEFAULT_PG = "postgresql://postgres@127.0.0.1:5432/test"
LEASE_MS = 30_000
PROBES_PER_S = 2
# FILL ended runs (three per second of history, ending before now), in bulk.
FILL = """
INSERT INTO tickwork_runs (id, workflow, version, status, input, result, attempt, priority,
    pool, schedule_key, created_at, started_at, finished_at{extra_columns})
SELECT 'old-' || g, 'wf', '1', 'completed', '{{"n":1}}', '"ok"', 1, 0, 'default', 'k',
    %(start)s + g * 333, %(start)s + g * 333 + 1, %(start)s + g * 333 + 5{extra_values}
FROM generate_series(1, %(n)s) g
"""
DEAD_ROWS = """
SELECT relname, n_dead_tup, n_live_tup,
    EXTRACT(EPOCH FROM clock_timestamp() - GREATEST(last_autovacuum, last_vacuum))
FROM pg_stat_user_tables WHERE schemaname = current_schema() AND relname = ANY(%s)
ORDER BY relname
"""


def fill(conn: psycopg.Connection, n: int) -> None:
    """``n`` ended runs; a schema whose runs keep their due time gets it too (the bench
    then runs against code from before migration 0011)."""
    columns = {
        row[0]
        for row in conn.execute(
            "SELECT column_name FROM information_schema.columns"
            " WHERE table_schema = current_schema() AND table_name = 'tickwork_runs'"
        ).fetchall()
    }
    old = "available_at" in columns
    statement = FILL.format(
        extra_columns=", available_at" if old else "",
        extra_values=", %(start)s + g * 333 + 5" if old else "",
    )
    start = int(time.time() * 1000) - n * 333 - 60_000
    for first in range(0, n, 500_000):
        count = min(500_000, n - first)
        conn.execute(statement.replace("'old-' || g", f"'old-' || (g + {first})"),
                     {"start": start + first * 333, "n": count})  # fmt: skip
    conn.execute("VACUUM ANALYZE tickwork_runs")


def start(store, count: int, now_ms: int) -> None:
    """``count`` new runs of the workflow, due now."""
    for _ in range(count):
        store.runs.insert_run(
            NewRun(uuid.uuid4().hex, "wf", "1", None, 0, "default", now_ms, now_ms)
        )


def take_and_end(store, limit: int, now_ms: int) -> int:
    """Claim up to ``limit`` due runs and end each, as a worker would; how many."""
    taken = store.runs.claim_runs(
        ClaimRequest(
            now_ms=now_ms,
            lease_ms=LEASE_MS,
            worker="churn",
            pools=["default"],
            limits={"wf": None},
            limit=limit,
            idle=True,
        )
    )
    for run in taken:
        store.runs.finish_run(
            run_id=run.info.id, token=run.lease_token, status=RunStatus.COMPLETED,
            result_json='"ok"', error=None, now_ms=now_ms, running=run.info,
        )  # fmt: skip
    return len(taken)


def churn(store, rate: float, backlog: int, stop: threading.Event, done: list[int]) -> None:
    """A backlog of ``backlog`` runs started at once first, if any (a fan-out, a
    backfill), drained as fast as one thread can; then runs through the store as a worker
    takes them, ``rate`` a second."""
    start(store, backlog, int(time.time() * 1000))
    while ended := take_and_end(store, 50, int(time.time() * 1000)):
        done[0] += ended
    batch = max(1, int(rate / 10))
    next_at = time.monotonic()
    while not stop.is_set():
        now_ms = int(time.time() * 1000)
        start(store, batch, now_ms)
        done[0] += take_and_end(store, batch, now_ms)
        next_at += batch / rate
        time.sleep(max(0.0, next_at - time.monotonic()))


def probe(store) -> tuple[float, float]:
    """One "when is the next run due" and one claim that finds nothing, in ms."""
    started = time.perf_counter()
    store.runs.next_due_ms(pools=["default"], workflows=["idle"])
    between = time.perf_counter()
    store.runs.claim_runs(
        ClaimRequest(
            now_ms=int(time.time() * 1000),
            lease_ms=LEASE_MS,
            worker="probe",
            pools=["default"],
            limits={"idle": None},
            limit=8,
            idle=True,
        )
    )
    return (between - started) * 1000, (time.perf_counter() - between) * 1000


def p99(values: list[float]) -> float:
    return sorted(values)[min(len(values) - 1, int(len(values) * 0.99))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--postgres", default=DEFAULT_PG, help="PostgreSQL URL")
    parser.add_argument("--fill", type=int, default=2_000_000, help="ended runs kept")
    parser.add_argument("--rate", type=float, default=300.0, help="runs a second")
    parser.add_argument("--minutes", type=float, default=10.0, help="how long")
    parser.add_argument("--window", type=float, default=60.0, help="seconds per line")
    parser.add_argument("--backlog", type=int, default=0, help="runs started at once first")
    args = parser.parse_args()

    schema = f"churn_{uuid.uuid4().hex[:6]}"
    with psycopg.connect(args.postgres, autocommit=True) as conn:
        conn.execute(f"CREATE SCHEMA {schema}")
        autovacuum = conn.execute("SHOW autovacuum").fetchone()[0]
        naptime = conn.execute("SHOW autovacuum_naptime").fetchone()[0]
    separator = "&" if "?" in args.postgres else "?"
    url = f"{args.postgres}{separator}options={quote(f'-csearch_path={schema}')}"
    store = open_store(url)
    store.migrate()
    conn = psycopg.connect(url, autocommit=True)
    try:
        tables = [
            row[0]
            for row in conn.execute(
                "SELECT tablename FROM pg_tables WHERE schemaname = current_schema()"
                " AND tablename IN ('tickwork_runs', 'tickwork_queue')"
            ).fetchall()
        ]
        print(f"autovacuum {autovacuum} (naptime {naptime}); filling {args.fill:,} ended runs")
        fill(conn, args.fill)
        first = f"a backlog of {args.backlog:,} runs drained, then " if args.backlog else ""
        print(f"{first}{args.rate:g} runs/s for {args.minutes:g} min in all; probes of a"
              " workflow with no runs")  # fmt: skip
        print(f"{'min':>5} {'runs':>8}  {'next_due p50/p99 ms':>20}  {'claim p50/p99 ms':>17}  "
              "dead rows (last vacuum s ago)")  # fmt: skip
        stop, done = threading.Event(), [0]
        worker = threading.Thread(target=churn, args=(store, args.rate, args.backlog, stop, done))
        worker.start()
        began = time.monotonic()
        try:
            while time.monotonic() - began < args.minutes * 60:
                due_ms: list[float] = []
                claim_ms: list[float] = []
                window_end = time.monotonic() + args.window
                while time.monotonic() < window_end:
                    due, claim = probe(store)
                    due_ms.append(due)
                    claim_ms.append(claim)
                    time.sleep(1 / PROBES_PER_S)
                dead = [
                    f"{name[9:]} {n_dead:,}" + (f" ({ago:.0f})" if ago is not None else " (never)")
                    for name, n_dead, _, ago in conn.execute(DEAD_ROWS, (tables,)).fetchall()
                ]
                elapsed = (time.monotonic() - began) / 60
                print(
                    f"{elapsed:5.1f} {done[0]:8,}  "
                    f"{statistics.median(due_ms):9.2f} / {p99(due_ms):7.2f}  "
                    f"{statistics.median(claim_ms):7.2f} / {p99(claim_ms):7.2f}  "
                    + ", ".join(dead),
                    flush=True,
                )
        finally:
            stop.set()
            worker.join()
    finally:
        conn.close()
        store.close()
        with psycopg.connect(args.postgres, autocommit=True) as admin:
            admin.execute(f"DROP SCHEMA {schema} CASCADE")


if __name__ == "__main__":
    main()
