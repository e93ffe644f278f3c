"""A workflow's drain beside 100,000 due runs of a workflow nobody serves (issue 33).

Runs of a workflow whose workers are down, or which no worker registers any more, stay
in the queue, due, ahead of everyone else's in the claim's order. A claim that walked the
queue in that order passed all of them each time. For each size (0, then ``--size``), on
a fresh store: ``size`` runs of the workflow "nobody", due an hour ago, are put in the
queue in bulk (not timed; then SQLite's log is checkpointed, PostgreSQL vacuumed and
analyzed, as the worker's checkpoints and autovacuum would within a minute); then
``--n`` runs of the workflow "mine" (one trivial step each) are started and drained by
``engine.run_until_idle()``: **runs/s** = n / drain seconds. Sizes are interleaved,
``--repeat`` times; the median of each is printed, and the ratio of the empty queue's to
the full one's (target: within 1.2x).

Usage (from the repository root; ``PYTHONPATH=/copy/of/another/tree/src`` measures
another tree's code)::

    bench/.venv/bin/python bench/unserved.py --backend sqlite
    bench/.venv/bin/python bench/unserved.py --backend postgres \\
        --postgres postgresql://postgres@127.0.0.1:5432/test
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from typing import Any

from waiting import fresh_store

# The runs of "nobody" (a recursive count, the same SQL on both backends), and their
# rows in the queue, due an hour before now.
RUNS = """
WITH RECURSIVE c(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM c WHERE n < ?)
INSERT INTO tickwork_runs (id, workflow, version, status, attempt, priority, pool,
    created_at)
SELECT 'nobody-' || n, 'nobody', '1', 'pending', 1, 0, 'default', ? FROM c
"""
QUEUE = """
INSERT INTO tickwork_queue (id, workflow, pool, priority, status, available_at, created_at)
SELECT id, workflow, pool, priority, status, ?, created_at
FROM tickwork_runs WHERE workflow = 'nobody'
"""
HOUR_MS = 3_600_000


def one() -> int:
    return 1


def measure(url: str, size: int, n: int) -> dict[str, Any]:
    import tickwork
    from tickwork import Context, Engine

    engine = Engine(url)

    @engine.workflow("mine")
    def mine(ctx: Context) -> int:
        return ctx.step("one", one)  # type: ignore[no-any-return]

    engine.migrate()
    store = engine._runtime.store  # a peek inside: the bulk fill only
    now_ms = int(time.time() * 1000)
    if size:

        def work(tx: Any) -> None:
            tx.execute(RUNS, size, now_ms - HOUR_MS)
            tx.execute(QUEUE, now_ms - HOUR_MS)

        store._write(work)
        # A store at rest, as it would be long since: SQLite's log copied back and
        # emptied, PostgreSQL vacuumed and analyzed (not during the drain).
        if store.dialect == "postgres":
            import psycopg

            with psycopg.connect(store.url, autocommit=True) as conn:
                conn.execute("VACUUM ANALYZE tickwork_runs, tickwork_queue")
        else:
            store._connection().execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchall()
    for _ in range(20):  # warm-up
        engine.start(mine)
    engine.run_until_idle()
    for _ in range(n):
        engine.start(mine)
    began = time.perf_counter()
    drained = engine.run_until_idle()
    seconds = time.perf_counter() - began
    engine.close()
    assert drained == n, drained
    return {"size": size, "runs_per_s": n / seconds, "tickwork": tickwork.__file__}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--backend", choices=["sqlite", "postgres"], default="sqlite")
    parser.add_argument("--postgres", help="PostgreSQL URL (a schema is made and dropped)")
    parser.add_argument("--size", type=int, default=100_000)
    parser.add_argument("--n", type=int, default=1000, help="runs drained per measure")
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    rates: dict[int, list[float]] = {0: [], args.size: []}
    for _ in range(args.repeat):
        for size in rates:
            with fresh_store(args.backend, args.postgres) as url:
                result = measure(url, size, args.n)
            rates[size].append(result["runs_per_s"])
            print(json.dumps(result), flush=True)
    empty, full = (statistics.median(rates[size]) for size in rates)
    for size, found in rates.items():
        print(f"{args.backend} {size:>7} unserved due: {statistics.median(found):8.0f} runs/s "
              f"({min(found):.0f}-{max(found):.0f})")  # fmt: skip
    print(f"empty / with {args.size}: {empty / full:.2f}x (target: within 1.2x)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
