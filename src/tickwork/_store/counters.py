"""Metrics counted as events happen, in the table ``tickwork_counters``.

Each event that ``/metrics`` reports (a firing decision, a scheduled run created, a run
ended, a try of a step ended) adds its increments to the transaction that writes the
event (``Transaction.counts``); the dialect writes them, summed per row, with one upsert
just before the commit (``flush``). So each event is counted once, when it is committed
(a write that fails or finds its lease lost counts nothing), and no figure is ever
recounted from runs, steps or history: pruning those rows lowers no counter, and a scrape
reads a table whose size does not grow with history.

A row is ``(metric, labels, bucket, shard) -> (value, sum_ms)``: how many events, and
the sum of what they measured. A counter uses bucket 0. A histogram has one row per
bucket (``_buckets``: the smallest bound at or above the observation, ``len(bounds)``
above them all), so one event is one row to update: a run's end is counted in its
duration's bucket, or in ``NO_DURATION`` when it never started, and the runs ended are
the sum of every bucket. Two labels (workflow, status) are joined by ``|`` and split at
the last one (a status has none). On PostgreSQL each transaction adds to one of
``SHARDS`` copies of its rows, picked at random, so that workers ending runs of one
workflow do not queue on one row lock until their commits; reads sum the shards.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from .._values.buckets import LATENESS_MS, RUN_MS, STEP_MS, bucket_of
from .._values.models import Histogram
from .transaction import Transaction

__all__ = [
    "SHARDS",
    "Counted",
    "count_deadline_miss",
    "count_firings",
    "count_run_end",
    "flush",
    "observe_lateness",
    "observe_step",
    "read_counters",
]

#: how many copies of each row concurrent PostgreSQL transactions spread their increments
#: over (SQLite's writes take turns: it uses one)
SHARDS = 16
#: the bucket of a run that ended without ever starting (counted, with no duration)
NO_DURATION = -1

# Metric names as stored (each with its labels).
FIRINGS = "firings"  # decision: occurrences decided so
LATENESS = "firing_lateness"  # workflow: created - scheduled_for of scheduled runs
RUN_ENDS = "run_ends"  # workflow|status: runs ended so, by finished - started
STEP_ENDS = "step_ends"  # status: tries of steps ended so, by finished - started
DEADLINE_MISSES = "deadline_misses"  # key: runs of the schedule that missed their deadline

# Add a transaction's increments, one row per (metric, labels, bucket, shard); {rows} is
# "(?, ?, ?, ?, ?, ?), ..." (one statement for all: a driver's executemany costs more).
UPSERT_COUNTERS = """
INSERT INTO tickwork_counters (metric, labels, bucket, shard, value, sum_ms)
VALUES {rows}
ON CONFLICT (metric, labels, bucket, shard) DO UPDATE
SET value = tickwork_counters.value + excluded.value,
    sum_ms = tickwork_counters.sum_ms + excluded.sum_ms
"""
# One row's placeholders, and the statement of the common case, one row.
_ROW = "(?, ?, ?, ?, ?, ?)"
_UPSERT_ONE = UPSERT_COUNTERS.format(rows=_ROW)
#: rows per statement (SQLite takes at most 32,766 parameters, and a statement of a size
#: seen before is cached: a firing pass can count hundreds of (workflow, bucket) rows)
_ROWS_PER_STATEMENT = 100
# Every counter and histogram row, its shards summed.
SELECT_COUNTERS = """
SELECT metric, labels, bucket, SUM(value), SUM(sum_ms) FROM tickwork_counters
GROUP BY metric, labels, bucket
"""

_Key = tuple[str, str, int]


def count_firings(tx: Transaction, decision: str, count: int) -> None:
    """``count`` occurrences decided as ``decision`` (a span of dropped ones counts each)."""
    tx.counts.append((FIRINGS, decision, 0, count, 0))


def count_deadline_miss(tx: Transaction, key: str) -> None:
    """A run of schedule ``key`` missed its deadline (recorded once)."""
    tx.counts.append((DEADLINE_MISSES, key, 0, 1, 0))


def observe_lateness(tx: Transaction, workflow: str, scheduled_ms: int, created_ms: int) -> None:
    """A scheduled run created: how late after its occurrence (0 when early)."""
    late = created_ms - scheduled_ms if created_ms > scheduled_ms else 0
    tx.counts.append((LATENESS, workflow, bucket_of(LATENESS_MS, late), 1, late))


def count_run_end(
    tx: Transaction, workflow: str, status: str, started_ms: int | None, finished_ms: int
) -> None:
    """A run ended as ``status``; its duration when it had started."""
    labels = f"{workflow}|{status}"
    if started_ms is None:
        tx.counts.append((RUN_ENDS, labels, NO_DURATION, 1, 0))
    else:
        took = finished_ms - started_ms
        tx.counts.append((RUN_ENDS, labels, bucket_of(RUN_MS, took), 1, took))


def observe_step(tx: Transaction, status: str, started_ms: int, finished_ms: int) -> None:
    """A try of a step ended as ``status`` (completed or failed)."""
    took = finished_ms - started_ms
    tx.counts.append((STEP_ENDS, status, bucket_of(STEP_MS, took), 1, took))


def flush(tx: Transaction, shard: int) -> None:
    """Write the transaction's increments, summed per row, in one statement.

    Rows go in key order, so that transactions adding to the same rows lock them in the
    same order (no deadlock); a dialect calls this last, just before its commit.
    """
    counts = tx.counts
    if not counts:
        return
    if len(counts) == 1:  # the common case: one checkpoint, one run's end
        metric, labels, bucket, value, sum_ms = counts[0]
        counts.clear()
        tx.execute_by_key(_UPSERT_ONE, metric, labels, bucket, shard, value, sum_ms)
        return
    totals: dict[_Key, list[int]] = {}
    for metric, labels, bucket, value, sum_ms in counts:
        found = totals.get((metric, labels, bucket))
        if found is None:
            totals[(metric, labels, bucket)] = [value, sum_ms]
        else:
            found[0] += value
            found[1] += sum_ms
    rows = [(m, labels, b, shard, v, t) for (m, labels, b), (v, t) in sorted(totals.items())]
    counts.clear()
    for start in range(0, len(rows), _ROWS_PER_STATEMENT):
        chunk = rows[start : start + _ROWS_PER_STATEMENT]
        statement = UPSERT_COUNTERS.format(rows=", ".join([_ROW] * len(chunk)))
        tx.execute_by_key(statement, *[value for row in chunk for value in row])


@dataclass
class Counted:
    """The counters as read: counters by label, histograms by label."""

    firings: dict[str, int] = field(default_factory=dict)
    #: (workflow, status) -> runs that ended so
    runs_ended: dict[tuple[str, str], int] = field(default_factory=dict)
    lateness: dict[str, Histogram] = field(default_factory=dict)
    run_durations: dict[tuple[str, str], Histogram] = field(default_factory=dict)
    step_durations: dict[str, Histogram] = field(default_factory=dict)
    #: schedule key -> its runs that missed their deadline
    deadline_misses: dict[str, int] = field(default_factory=dict)


def read_counters(tx: Transaction) -> Counted:
    """Every counter and histogram, its shards summed."""
    histograms: dict[tuple[str, str], dict[int, tuple[int, int]]] = {}
    counted = Counted()
    for metric, labels, bucket, value, sum_ms in tx.execute(SELECT_COUNTERS).fetchall():
        if metric == FIRINGS:
            counted.firings[labels] = int(value)
        elif metric == DEADLINE_MISSES:
            counted.deadline_misses[labels] = int(value)
        else:
            histograms.setdefault((metric, labels), {})[int(bucket)] = (int(value), int(sum_ms))
    for (metric, labels), buckets in histograms.items():
        if metric == LATENESS:
            counted.lateness[labels] = _histogram(buckets, LATENESS_MS)
        elif metric == STEP_ENDS:
            counted.step_durations[labels] = _histogram(buckets, STEP_MS)
        elif metric == RUN_ENDS:
            key = _two(labels)
            counted.runs_ended[key] = sum(value for value, _ in buckets.values())
            if buckets.keys() != {NO_DURATION}:  # some of them had started
                counted.run_durations[key] = _histogram(buckets, RUN_MS)
    return counted


def _two(labels: str) -> tuple[str, str]:
    """``workflow|status`` as (workflow, status); a workflow's name may hold ``|``."""
    workflow, _, status = labels.rpartition("|")
    return workflow, status


def _histogram(buckets: dict[int, tuple[int, int]], bounds_ms: Sequence[int]) -> Histogram:
    """The buckets ``0..len(bounds)`` of one label set (others, NO_DURATION, left out)."""
    indexes = range(len(bounds_ms) + 1)
    counts = tuple(buckets.get(index, (0, 0))[0] for index in indexes)
    return Histogram(counts=counts, sum_ms=sum(buckets.get(index, (0, 0))[1] for index in indexes))
