"""What upgrading a big SQLite store to migration 0021 costs: the time its rebuild of the
six list indexes of tickwork_runs (ascending) holds the write lock.

A store is made at schema version 20 (the migrations before 0021 only), filled with
``--runs`` runs by one ``INSERT ... SELECT`` from a recursive count, shaped as the
engine writes them (32-hex ids that start with the time, 8 workflows, three runs in four
from one of 200 schedules, JSON input and result, 97 % completed, 2 % failed, 0.5 %
cancelled, the newest 0.5 % pending or running with their queue rows), then ``migrate()``
is timed as an upgrading process runs it. Steps and the other tables are left out: the
rebuild reads tickwork_runs only. The file is fresh in the OS page cache, as on a
machine that just wrote it::

    .venv/bin/python bench/list_index_rebuild.py --runs 1000000
"""

from __future__ import annotations

import argparse
import sqlite3
import sys
import tempfile
import time
from pathlib import Path

# n counts the runs from the oldest; one every 300 ms, the newest ending a minute ago.
FILL = """
WITH RECURSIVE c(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM c WHERE n < :runs),
r(n, at, status) AS (
    SELECT n, :start + n * 300,
        CASE WHEN n > :runs - :runs / 200 THEN (CASE n % 2 WHEN 0 THEN 'pending' ELSE 'running' END)
             WHEN n % 200 = 7 THEN 'cancelled'
             WHEN n % 50 = 3 THEN 'failed'
             ELSE 'completed' END
    FROM c)
INSERT INTO tickwork_runs (id, workflow, version, status, input, result, error, attempt,
    priority, pool, schedule_key, schedule_revision, scheduled_for, created_at, started_at,
    finished_at, attempt_started_at)
SELECT printf('%012x', at) || lower(hex(randomblob(10))), 'workflow-' || (n % 8), '1', status,
    '{"day": "2026-03-01", "batch": ' || (n % 1000) || '}',
    CASE status WHEN 'completed' THEN '{"rows": ' || (n % 5000) || ', "ok": true}' END,
    CASE status WHEN 'failed' THEN '{"type": "TimeoutError", "message": "upstream slow"}' END,
    1, 0, 'default',
    CASE WHEN n % 4 <> 0 THEN 'schedule-' || (n % 200) END,
    CASE WHEN n % 4 <> 0 THEN 1 END,
    CASE WHEN n % 4 <> 0 THEN at END,
    at,
    CASE WHEN status <> 'pending' THEN at + 2 END,
    CASE WHEN status IN ('completed', 'failed', 'cancelled') THEN at + 40 + n % 900 END,
    CASE WHEN status <> 'pending' THEN at + 2 END
FROM r
"""
QUEUE = """
INSERT INTO tickwork_queue (id, workflow, pool, priority, status, available_at, schedule_key,
    created_at)
SELECT id, workflow, pool, priority, status, created_at, schedule_key, created_at
FROM tickwork_runs WHERE status IN ('pending', 'running')
"""


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=1_000_000)
    args = parser.parse_args()

    from tickwork._store import migrations, open_store

    path = Path(tempfile.mkdtemp(prefix="tickwork-0021-")) / "tickwork.db"
    every = migrations.pending
    migrations.pending = lambda d, c: [m for m in every(d, c) if m[0] < 21]  # type: ignore[assignment]
    store = open_store(f"sqlite:///{path}")
    assert store.migrate() == 20
    store.close()
    migrations.pending = every  # type: ignore[assignment]

    conn = sqlite3.connect(path, isolation_level=None)
    started = time.perf_counter()
    start = int(time.time() * 1000) - args.runs * 300 - 60_000
    conn.execute("BEGIN")
    conn.execute(FILL, {"runs": args.runs, "start": start})
    conn.execute(QUEUE)
    conn.execute("COMMIT")
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.close()
    filled = time.perf_counter() - started
    size = path.stat().st_size

    store = open_store(f"sqlite:///{path}")
    started = time.perf_counter()
    assert store.migrate() == 21
    took = time.perf_counter() - started
    store.close()
    print(f"{args.runs:,} runs, file {size / 2**20:.0f} MiB (filled in {filled:.0f} s)")
    print(f"migration 0021: {took:.1f} s, {took / args.runs * 1e6:.1f} µs per run")
    for name in ("", "-wal", "-shm"):
        Path(f"{path}{name}").unlink(missing_ok=True)
    path.parent.rmdir()
    return 0


if __name__ == "__main__":
    sys.exit(main())
