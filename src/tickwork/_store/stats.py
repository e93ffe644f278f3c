"""Aggregates for monitoring, read from the database when Prometheus scrapes ``/metrics``.

Everything is counted from what the store keeps, so the numbers are the fleet's (every
worker's runs and firings), whichever process serves them. Each read scans the runs and
steps tables once per figure: cheap for the thousands of rows a schedule fleet keeps,
a cost to watch for millions.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from .contract import Store
from .sql import SqlStore

__all__ = ["Histogram", "Stats", "read_stats"]


@dataclass(frozen=True)
class Histogram:
    """Observations in milliseconds: ``counts[i]`` of them are ``<= bounds_ms[i]``."""

    counts: tuple[int, ...]
    count: int
    sum_ms: int


@dataclass(frozen=True)
class Stats:
    #: (workflow, status) -> runs
    runs: dict[tuple[str, str], int] = field(default_factory=dict)
    #: state -> schedules
    schedules: dict[str, int] = field(default_factory=dict)
    #: decision -> occurrences decided so (a span of dropped ones counts each)
    firings: dict[str, int] = field(default_factory=dict)
    #: workflow -> created_at - scheduled_for of its scheduled runs
    lateness: dict[str, Histogram] = field(default_factory=dict)
    #: (workflow, status) -> finished_at - started_at of its finished runs
    run_durations: dict[tuple[str, str], Histogram] = field(default_factory=dict)
    #: step status -> finished_at - started_at of steps (not sleeps, not now())
    step_durations: dict[str, Histogram] = field(default_factory=dict)


# Runs by workflow and status.
COUNT_RUNS = "SELECT workflow, status, COUNT(*) FROM tickwork_runs GROUP BY workflow, status"
# Schedules by state.
COUNT_SCHEDULES = "SELECT state, COUNT(*) FROM tickwork_schedules GROUP BY state"
# Occurrences by decision; a span of dropped occurrences is one row with its count.
COUNT_FIRINGS = "SELECT decision, SUM(count) FROM tickwork_schedule_history GROUP BY decision"
# The three histograms read "d" (milliseconds) grouped by labels; {buckets} becomes one
# "SUM(CASE WHEN d <= ? THEN 1 ELSE 0 END)" per bound, each bound a parameter.
LATENESS = """
SELECT workflow, COUNT(*), SUM(d) {buckets} FROM (
    SELECT workflow,
        CASE WHEN created_at > scheduled_for THEN created_at - scheduled_for ELSE 0 END AS d
    FROM tickwork_runs WHERE scheduled_for IS NOT NULL
) AS observed GROUP BY workflow
"""
RUN_DURATIONS = """
SELECT workflow, status, COUNT(*), SUM(d) {buckets} FROM (
    SELECT workflow, status, finished_at - started_at AS d FROM tickwork_runs
    WHERE finished_at IS NOT NULL AND started_at IS NOT NULL
) AS observed GROUP BY workflow, status
"""
STEP_DURATIONS = """
SELECT status, COUNT(*), SUM(d) {buckets} FROM (
    SELECT status, finished_at - started_at AS d FROM tickwork_steps WHERE kind = 'step'
) AS observed GROUP BY status
"""


def _histograms(
    tx: Any, statement: str, labels: int, bounds_ms: Sequence[int]
) -> dict[Any, Histogram]:
    buckets = "".join(", SUM(CASE WHEN d <= ? THEN 1 ELSE 0 END)" for _ in bounds_ms)
    rows = tx.execute(statement.format(buckets=buckets), *bounds_ms).fetchall()
    found: dict[Any, Histogram] = {}
    for row in rows:
        key = row[0] if labels == 1 else tuple(row[:labels])
        count, total = row[labels], row[labels + 1]
        counts = tuple(int(c or 0) for c in row[labels + 2 :])
        found[key] = Histogram(counts=counts, count=int(count), sum_ms=int(total or 0))
    return found


def read_stats(
    store: Store,
    *,
    lateness_ms: Sequence[int],
    run_ms: Sequence[int],
    step_ms: Sequence[int],
) -> Stats:
    """Counts and histograms (bucket bounds in milliseconds) as the store holds them now.

    A store that is not SQL has no aggregates to offer: it reports nothing.
    """
    if not isinstance(store, SqlStore):
        return Stats()
    with store._tx(write=False) as tx:
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
