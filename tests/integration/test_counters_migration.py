"""Upgrading a database keeps its figures: migration 0002 seeds the counters from the rows
kept so far, bucketing them as the store buckets new events."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pytest
from tests.recount import figures, recount

from tickwork._store import StatsSource, migrations, open_store
from tickwork._values.buckets import LATENESS_MS, RUN_MS, STEP_MS

T0 = 1_772_366_400_000
WORKFLOWS = ("wf", "pipe|in|name", "ünïcode")
ENDED = ("completed", "failed", "cancelled")
UNFINISHED = ("pending", "running", "sleeping")

RUN_SQL = """
INSERT INTO tickwork_runs (id, workflow, version, status, attempt, priority, pool,
    schedule_key, scheduled_for, created_at, started_at, finished_at, available_at)
VALUES (?, ?, '1', ?, 1, 0, 'default', ?, ?, ?, ?, ?, ?)
"""
STEP_SQL = """
INSERT INTO tickwork_steps (run_id, kind, name, seq, status, attempts, started_at, finished_at)
VALUES (?, ?, ?, 0, ?, 1, ?, ?)
"""
HISTORY_SQL = """
INSERT INTO tickwork_schedule_history (key, occurrence, decision, reason, revision, count,
    decided_at)
VALUES ('k', ?, ?, 'why', 1, ?, ?)
"""


def around(bounds: Sequence[int]) -> list[int]:
    """Observations on, just below and just above every bound, and some beyond."""
    values = [0, -3, bounds[-1] * 10]
    for bound in bounds:
        values += [bound - 1, bound, bound + 1]
    return values


def insert(url: str, statement: str, rows: list[tuple[Any, ...]]) -> None:
    if url.startswith("sqlite:///"):
        import sqlite3

        with sqlite3.connect(url.removeprefix("sqlite:///")) as conn:
            conn.executemany(statement, rows)
        return
    import psycopg

    with psycopg.connect(url) as conn:
        conn.cursor().executemany(statement.replace("?", "%s"), rows)  # type: ignore[arg-type]


def fill(url: str) -> None:
    """Rows as the engine leaves them, with observations around every bucket bound."""
    runs: list[tuple[Any, ...]] = []
    lateness = around(LATENESS_MS)
    for n, duration in enumerate(around(RUN_MS) * 2):
        workflow = WORKFLOWS[n % len(WORKFLOWS)]
        status = ENDED[n % len(ENDED)]
        created = T0 + n
        scheduled = created - lateness[n % len(lateness)] if n % 4 else None
        runs.append((f"r{n}", workflow, status, "k", scheduled, created, created,
                     created + duration, created))  # fmt: skip
    for n, status in enumerate(UNFINISHED * 3):
        started = None if status == "pending" else T0
        runs.append((f"u{n}", WORKFLOWS[n % 3], status, None, T0 - 700 * n, T0, started,
                     None, T0))  # fmt: skip
    runs.append(("never", "wf", "cancelled", None, None, T0, None, T0 + 5, T0))
    steps = [
        ("r0", "step", f"s{n}", ("completed", "failed")[n % 2], T0, T0 + duration)
        for n, duration in enumerate(around(STEP_MS))
    ]
    steps += [("r0", "sleep", "nap", "completed", T0, T0 + 9_000), ("r0", "now", "t", "completed",
              T0, T0)]  # fmt: skip
    history = [
        (T0 + n, decision, count, T0 + n)
        for n, (decision, count) in enumerate(
            [("started", 1), ("dropped_catchup", 40), ("skipped_overlap", 1), ("started", 1)]
        )
    ]
    insert(url, RUN_SQL, runs)
    insert(url, STEP_SQL, steps)
    insert(url, HISTORY_SQL, history)


def test_seeding_from_existing_rows_gives_the_figures_counting_them_gave(
    db_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    every = migrations.pending
    with monkeypatch.context() as patched:  # the schema as it was before counters
        patched.setattr(migrations, "pending", lambda d, c: [m for m in every(d, c) if m[0] < 2])
        store = open_store(db_url)
        assert store.migrate() == 1
        store.close()
    fill(db_url)
    before = recount(db_url)
    assert all(before.values()), before  # every figure has something to compare

    store = open_store(db_url)
    store.migrate()
    assert isinstance(store, StatsSource)
    seeded = store.read_stats(now_ms=T0)
    store.close()
    assert figures(seeded) == before
