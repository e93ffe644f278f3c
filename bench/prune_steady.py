"""PostgreSQL under retention: do batched deletes and autovacuum keep the tables flat?

The measurement behind docs/behaviour.md's "Retention" (batched deletes, not time
partitions). A steady stream of RATE runs a second is written the way the engine writes
it: each run inserted ``pending`` with its row in ``tickwork_queue``, its schedule's
history entry and the schedule's row advanced (one transaction per second of simulated
time), then claimed, given three steps and ended (its queue row deleted). A ``FakeClock``
moves one simulated minute per loop; ``Engine.prune()`` runs every 5 simulated minutes, as
a worker's pruning thread does, with the retention given. Every simulated minute, each
table whose dead rows passed autovacuum's default threshold (50 + 20% of its live rows) is
vacuumed, as the autovacuum launcher (naptime 1 min) would. Every 10 minutes it prints the
tables' ``pg_total_relation_size``.

It works in a database of its own (created, then dropped), so no other session's open
transaction holds vacuum back, with ``synchronous_commit = off`` (sizes do not depend on
it). Usage, from the repository root (about 7 minutes on 2 cores)::

    .venv/bin/python bench/prune_steady.py postgresql://postgres@127.0.0.1:5432/test \\
        --minutes 120 --retention 30 --rate 50
"""

from __future__ import annotations

import argparse
import time
import uuid
from datetime import UTC, datetime
from urllib.parse import urlsplit, urlunsplit

import psycopg

from tickwork import Engine
from tickwork.testing import FakeClock

TABLES = [
    "tickwork_runs", "tickwork_steps", "tickwork_schedule_history", "tickwork_queue",
    "tickwork_schedules",
]  # fmt: skip
# A schedule row (only its key and firing columns matter here).
INSERT_SCHEDULE = """
INSERT INTO tickwork_schedules (key, workflow, version, timezone, overlap, pool, priority,
    definition, state, revision, anchor_at, next_fire_at, due_at, created_at, updated_at,
    every_ms)
VALUES (%s, 'wf', '1', 'UTC', 'allow', 'default', 0, 'd', 'active', 1, %s, %s, %s, %s, %s, 1000)
"""
# Firing: a pending run per schedule and its row in the queue (run_inserts.INSERT_RUN and
# QUEUE_RUN), its history entry, the schedule advanced.
INSERT_RUN = """
INSERT INTO tickwork_runs (id, workflow, version, status, input, attempt, priority, pool,
    schedule_key, schedule_revision, scheduled_for, created_at)
VALUES (%s, 'wf', '1', 'pending', '{"n":1}', 1, 0, 'default', %s, 1, %s, %s)
"""
QUEUE_RUN = """
INSERT INTO tickwork_queue (id, workflow, pool, priority, status, available_at, schedule_key,
    created_at)
VALUES (%s, 'wf', 'default', 0, 'pending', %s, %s, %s)
"""
INSERT_HISTORY = """
INSERT INTO tickwork_schedule_history (key, occurrence, decision, reason, run_id, revision,
    count, decided_at)
VALUES (%s, %s, 'started', 'due', %s, 1, 1, %s)
"""
ADVANCE = """
UPDATE tickwork_schedules SET next_fire_at = %s, due_at = %s, last_fire_at = %s,
    last_run_id = %s
WHERE key = %s
"""
# Executing: claimed (the lease in the queue's row, then the run's: pg_claim.CLAIM), three
# steps, ended.
LEASE = """
UPDATE tickwork_queue SET status = 'running', lease_token = 't', available_at = %s
WHERE id = ANY(%s)
"""
START = """
UPDATE tickwork_runs SET status = 'running', started_at = COALESCE(started_at, %s),
    attempt_started_at = COALESCE(attempt_started_at, %s)
WHERE id = ANY(%s)
"""
INSERT_STEP = """
INSERT INTO tickwork_steps (run_id, kind, name, seq, status, result, attempts, started_at,
    finished_at)
VALUES (%s, 'step', %s, %s, 'completed', '"a result of a few dozen bytes, as steps return"',
    1, %s, %s)
"""
# Ended: the run leaves the queue, then its row is finished (UNQUEUE_HELD, FINISH_RUN).
UNQUEUE = """
DELETE FROM tickwork_queue WHERE id = ANY(%s) AND lease_token = 't' AND status = 'running'
"""
FINISH = """
UPDATE tickwork_runs SET status = 'completed', result = '"ok"', error = NULL, traceback = NULL,
    finished_at = %s
WHERE id = ANY(%s)
"""
# Tables past autovacuum's default threshold.
DUE_FOR_VACUUM = """
SELECT relname FROM pg_stat_user_tables WHERE n_dead_tup > 50 + 0.2 * n_live_tup
"""


def one_second(conn: psycopg.Connection, rate: int, now: int) -> None:
    """Fire RATE schedules at ``now`` and execute their runs, as the engine writes them."""
    pairs = [(f"s{k}", f"s{k}@{now}") for k in range(rate)]
    ids = [run_id for _, run_id in pairs]
    with conn.transaction():
        cur = conn.cursor()
        cur.executemany(INSERT_RUN, [(i, key, now, now) for key, i in pairs])
        cur.executemany(QUEUE_RUN, [(i, now, key, now) for key, i in pairs])
        cur.executemany(INSERT_HISTORY, [(key, now, i, now) for key, i in pairs])
        cur.executemany(ADVANCE, [(now + 1000, now + 1000, now, i, key) for key, i in pairs])
    with conn.transaction():
        cur = conn.cursor()
        cur.execute(LEASE, (now + 30_000, ids))
        cur.execute(START, (now, now, ids))
        cur.executemany(INSERT_STEP, [(i, f"s{n}", n, now, now + 5) for i in ids for n in range(3)])
        cur.execute(UNQUEUE, (ids,))
        assert cur.rowcount == len(ids), (cur.rowcount, len(ids))  # the engine: LeaseLost
        cur.execute(FINISH, (now + 20, ids))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("url", help="a PostgreSQL database this may create databases from")
    parser.add_argument("--minutes", type=int, default=120)
    parser.add_argument("--retention", type=int, default=30, help="minutes")
    parser.add_argument("--rate", type=int, default=50, help="runs a second")
    args = parser.parse_args()
    name = f"tw_steady_{uuid.uuid4().hex[:8]}"
    with psycopg.connect(args.url, autocommit=True) as admin:
        admin.execute(f"CREATE DATABASE {name}")
        admin.execute(f"ALTER DATABASE {name} SET synchronous_commit = off")
    url = urlunsplit(urlsplit(args.url)._replace(path=f"/{name}"))
    try:
        run(url, args.minutes, args.retention, args.rate)
    finally:
        with psycopg.connect(args.url, autocommit=True) as admin:
            admin.execute(f"DROP DATABASE {name} WITH (FORCE)")


def run(url: str, minutes: int, retention: int, rate: int) -> None:
    clock = FakeClock(datetime(2026, 1, 1, tzinfo=UTC))
    engine = Engine(url, clock=clock, retention=f"{retention}m")
    engine.migrate()
    conn = psycopg.connect(url, autocommit=True)
    start_ms = int(clock.now().timestamp() * 1000)
    for k in range(rate):
        conn.execute(INSERT_SCHEDULE, (f"s{k}", start_ms, start_ms, start_ms, start_ms, start_ms))
    vacuums = pruned = 0
    began = time.monotonic()
    print(f"{rate} runs/s, 3 steps each, retention {retention} min, prune every 5 min")
    print("minute  total MB  runs  steps  history  queue  (MB)  runs kept")
    for minute in range(1, minutes + 1):
        base = int(clock.now().timestamp() * 1000)
        for second in range(60):
            one_second(conn, rate, base + second * 1000)
        clock.advance("1m")
        if minute % 5 == 0:
            pruned += engine.prune()
        for (table,) in conn.execute(DUE_FOR_VACUUM).fetchall():
            conn.execute(f"VACUUM {table}")
            vacuums += 1
        if minute % 10 == 0:
            sizes = [
                conn.execute("SELECT pg_total_relation_size(%s)", (t,)).fetchone()[0]  # type: ignore[index]
                for t in TABLES
            ]
            kept = conn.execute("SELECT COUNT(*) FROM tickwork_runs").fetchone()[0]  # type: ignore[index]
            mb = [f"{size / 1e6:6.1f}" for size in sizes[:4]]
            print(f"{minute:6}  {sum(sizes) / 1e6:8.1f}  {'  '.join(mb)}  {kept:9}", flush=True)
    print(
        f"{minutes} simulated minutes in {time.monotonic() - began:.0f} s: "
        f"{pruned} rows pruned, {vacuums} vacuums"
    )
    engine.close()
    conn.close()


if __name__ == "__main__":
    main()
