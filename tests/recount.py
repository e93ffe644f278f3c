"""The figures ``/metrics`` showed before counters: recounted from every row at a scrape.

These are the aggregate queries ``_store/stats.py`` ran at every scrape before metrics
were counted as events happen, kept here as the reference the counters must match on a
store whose rows were never deleted. ``figures`` puts a ``Stats`` in the same form:
cumulative bucket counts (the last for +Inf) and the sum, by labels.
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import accumulate
from typing import Any

from tickwork._values.buckets import LATENESS_MS, RUN_MS, STEP_MS
from tickwork._values.models import Histogram, Stats

#: name -> labels -> value (counters) or (cumulative buckets..., sum) (histograms)
Figures = dict[str, dict[Any, Any]]

# Runs by workflow and status.
COUNT_RUNS = "SELECT workflow, status, COUNT(*) FROM tickwork_runs GROUP BY workflow, status"
# Occurrences by decision; a span of dropped occurrences is one row with its count.
COUNT_FIRINGS = "SELECT decision, SUM(count) FROM tickwork_schedule_history GROUP BY decision"
# How long after its occurrence each scheduled run was created, by workflow.
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


def _rows(url: str, statement: str, params: Sequence[int] = ()) -> list[Any]:
    if url.startswith("sqlite:///"):
        import sqlite3

        with sqlite3.connect(url.removeprefix("sqlite:///")) as conn:
            return list(conn.execute(statement, params).fetchall())
    import psycopg

    with psycopg.connect(url) as conn:
        query = statement.replace("?", "%s")
        return list(conn.execute(query, params).fetchall())  # type: ignore[call-overload]


def _histograms(url: str, statement: str, labels: int, bounds: Sequence[int]) -> dict[Any, Any]:
    buckets = "".join(", SUM(CASE WHEN d <= ? THEN 1 ELSE 0 END)" for _ in bounds)
    found = {}
    for row in _rows(url, statement.format(buckets=buckets), bounds):
        key = row[0] if labels == 1 else tuple(row[:labels])
        count, total = int(row[labels]), int(row[labels + 1] or 0)
        found[key] = (*(int(c) for c in row[labels + 2 :]), count, total)
    return found


def recount(url: str) -> Figures:
    """Every figure, counted from the rows the store holds now (the former scrape)."""
    return {
        "runs": {(w, s): int(n) for w, s, n in _rows(url, COUNT_RUNS)},
        "firings": {d: int(n) for d, n in _rows(url, COUNT_FIRINGS)},
        "lateness": _histograms(url, LATENESS, 1, LATENESS_MS),
        "run_durations": _histograms(url, RUN_DURATIONS, 2, RUN_MS),
        "step_durations": _histograms(url, STEP_DURATIONS, 1, STEP_MS),
    }


def _cumulative(histogram: Histogram) -> tuple[int, ...]:
    return (*accumulate(histogram.counts), histogram.sum_ms)


def figures(stats: Stats) -> Figures:
    """``stats`` in the form ``recount`` gives."""
    return {
        "runs": dict(stats.runs),
        "firings": dict(stats.firings),
        "lateness": {k: _cumulative(h) for k, h in stats.lateness.items()},
        "run_durations": {k: _cumulative(h) for k, h in stats.run_durations.items()},
        "step_durations": {k: _cumulative(h) for k, h in stats.step_durations.items()},
    }
