"""Aggregates for monitoring (``Engine.stats``, read when Prometheus scrapes ``/metrics``).

Everything is counted from what the store keeps, so the numbers are the fleet's (every
worker's runs and firings), whichever process serves them. Each read scans the runs and
steps tables once per figure: cheap for the thousands of rows a schedule fleet keeps,
a cost to watch for millions.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from .._models import Histogram, Stats
from .transaction import Database, Transaction

__all__ = ["StatsSql"]

# Runs by workflow and status.
COUNT_RUNS = "SELECT workflow, status, COUNT(*) FROM tickwork_runs GROUP BY workflow, status"
# Schedules by state.
COUNT_SCHEDULES = "SELECT state, COUNT(*) FROM tickwork_schedules GROUP BY state"
# Occurrences by decision; a span of dropped occurrences is one row with its count.
COUNT_FIRINGS = "SELECT decision, SUM(count) FROM tickwork_schedule_history GROUP BY decision"
# The three histograms read "d" (milliseconds) grouped by labels; {buckets} becomes one
# "SUM(CASE WHEN d <= ? THEN 1 ELSE 0 END)" per bound, each bound a parameter.
# Lateness: how long after its occurrence each scheduled run was created, by workflow.
LATENESS = """
SELECT workflow, COUNT(*), SUM(d) {buckets} FROM (
    SELECT workflow,
        CASE WHEN created_at > scheduled_for THEN created_at - scheduled_for ELSE 0 END AS d
    FROM tickwork_runs WHERE scheduled_for IS NOT NULL
) AS observed GROUP BY workflow
"""
# How long finished runs took, by workflow and status.
RUN_DURATIONS = """
SELECT workflow, status, COUNT(*), SUM(d) {buckets} FROM (
    SELECT workflow, status, finished_at - started_at AS d FROM tickwork_runs
    WHERE finished_at IS NOT NULL AND started_at IS NOT NULL
) AS observed GROUP BY workflow, status
"""
# How long steps took (not sleeps, not recorded now()), by status.
STEP_DURATIONS = """
SELECT status, COUNT(*), SUM(d) {buckets} FROM (
    SELECT status, finished_at - started_at AS d FROM tickwork_steps WHERE kind = 'step'
) AS observed GROUP BY status
"""


class StatsSql:
    """The store's aggregates over a dialect's ``Database`` (see ``StatsSource``)."""

    __slots__ = ("_db",)

    def __init__(self, db: Database) -> None:
        self._db = db

    def read_stats(
        self, *, lateness_ms: Sequence[int], run_ms: Sequence[int], step_ms: Sequence[int]
    ) -> Stats:
        with self._db.read() as tx:
            runs = {(w, s): int(n) for w, s, n in tx.execute(COUNT_RUNS).fetchall()}
            schedules = {s: int(n) for s, n in tx.execute(COUNT_SCHEDULES).fetchall()}
            firings = {d: int(n or 0) for d, n in tx.execute(COUNT_FIRINGS).fetchall()}
            lateness = _histograms(tx, LATENESS, 1, lateness_ms)
            run_durations = _histograms(tx, RUN_DURATIONS, 2, run_ms)
            step_durations = _histograms(tx, STEP_DURATIONS, 1, step_ms)
        return Stats(
            runs=runs,
            schedules=schedules,
            firings=firings,
            lateness=lateness,
            run_durations=run_durations,
            step_durations=step_durations,
        )


def _histograms(
    tx: Transaction, statement: str, labels: int, bounds_ms: Sequence[int]
) -> dict[Any, Histogram]:
    """Rows of (labels..., count, sum, bucket counts...) as histograms by label(s)."""
    buckets = "".join(", SUM(CASE WHEN d <= ? THEN 1 ELSE 0 END)" for _ in bounds_ms)
    rows = tx.execute(statement.format(buckets=buckets), *bounds_ms).fetchall()
    found: dict[Any, Histogram] = {}
    for row in rows:
        key = row[0] if labels == 1 else tuple(row[:labels])
        count, total = row[labels], row[labels + 1]
        counts = tuple(int(c or 0) for c in row[labels + 2 :])
        found[key] = Histogram(counts=counts, count=int(count), sum_ms=int(total or 0))
    return found
