"""Occurrences of a stored schedule as UTC epoch milliseconds, for the planner.

An interval schedule's occurrences are ``anchor + k * every`` for k >= 1 (the anchor is
its first registration, on the whole second, or ``start_at``); a cron schedule's are its
expression's matches in its zone, with Debian cron's DST rules (``tickwork.cron``).
"""

from __future__ import annotations

from dataclasses import dataclass

from . import cron
from ._clock import from_ms, to_ms
from ._records import ScheduleRecord
from .errors import CronError

__all__ = ["CronOccurrences", "IntervalOccurrences", "occurrences_between", "occurrences_of"]


@dataclass(frozen=True)
class IntervalOccurrences:
    anchor_ms: int
    every_ms: int

    def next_after(self, ms: int) -> int | None:
        steps = max(1, (ms - self.anchor_ms) // self.every_ms + 1)
        return self.anchor_ms + steps * self.every_ms

    def latest_at_or_before(self, ms: int) -> int | None:
        steps = (ms - self.anchor_ms) // self.every_ms
        return self.anchor_ms + steps * self.every_ms if steps >= 1 else None

    def count_between(self, first: int, last: int, cap: int) -> int:
        start = self.next_after(first - 1)
        if start is None or start > last:
            return 0
        return min(cap, (last - start) // self.every_ms + 1)


@dataclass(frozen=True)
class CronOccurrences:
    expr: cron.CronExpr

    def next_after(self, ms: int) -> int | None:
        try:
            return to_ms(self.expr.next(from_ms(ms)))
        except CronError:  # no occurrence before year 9999
            return None

    def latest_at_or_before(self, ms: int) -> int | None:
        try:
            return to_ms(self.expr.prev(from_ms(ms)))
        except CronError:
            return None

    def count_between(self, first: int, last: int, cap: int) -> int:
        count = 0
        for occurrence in self.expr.iter(from_ms(first - 1)):
            if count >= cap or to_ms(occurrence) > last:
                break
            count += 1
        return count


def occurrences_of(record: ScheduleRecord, anchor_ms: int) -> IntervalOccurrences | CronOccurrences:
    """The occurrences of a stored schedule (an interval's counted from ``anchor_ms``)."""
    if record.every_ms is not None:
        return IntervalOccurrences(anchor_ms, record.every_ms)
    assert record.cron is not None
    return CronOccurrences(cron.parse(record.cron, record.timezone))


def occurrences_between(
    record: ScheduleRecord, anchor_ms: int, start_ms: int, end_ms: int, limit: int
) -> list[int]:
    """The occurrences in ``[start_ms, end_ms)``, oldest first, at most ``limit + 1`` (one
    more than ``limit`` tells the caller there are more): what a backfill starts.

    An interval's lie on its grid extended both ways from its anchor (``anchor + k *
    every`` for every integer k), so a span before the first registration has them too;
    ``start_at`` and ``end_at`` do not bound a backfill (the span asked for does).
    """
    if start_ms >= end_ms:
        return []
    if record.every_ms is not None:
        every = record.every_ms
        first = anchor_ms + -((anchor_ms - start_ms) // every) * every  # ceil to the grid
        return list(range(first, end_ms, every)[: limit + 1])
    found: list[int] = []
    expr = occurrences_of(record, anchor_ms)
    occurrence = expr.next_after(start_ms - 1)
    while occurrence is not None and occurrence < end_ms and len(found) <= limit:
        found.append(occurrence)
        occurrence = expr.next_after(occurrence)
    return found
