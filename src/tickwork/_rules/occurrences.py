"""Occurrences of a stored schedule as UTC epoch milliseconds, for the planner.

An interval schedule's occurrences are ``anchor + k * every`` for k >= 1 (the anchor is
its first registration, on the whole second, or ``start_at``); a cron schedule's are its
expression's matches in its zone, under its DST policy (``tickwork.cron``), with ``nBD``
and ``LBD`` counted on its calendar's business days.

``HolidayRule`` is what a schedule with a calendar does with an occurrence on a day off
(DESIGN §3): skip it, or move it to the same local time on the next or previous business
day. The occurrence keeps its instant (and so its run id); a move changes only when its
run may start.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, datetime, time, timedelta, tzinfo
from typing import Protocol

from .. import cron
from .._values.business_days import SEARCH_DAYS, BusinessDays, on_business_day
from .._values.clock import from_ms, to_ms
from .._values.models import DstGap, OnHoliday
from .._values.records import ScheduleRecord
from ..errors import CronError

__all__ = [
    "CronOccurrences",
    "HolidayRule",
    "IntervalOccurrences",
    "holiday_rule",
    "next_decided",
    "occurrences_between",
    "occurrences_of",
]

#: occurrences a look for DST-skipped ones (or a trigger's for one not skipped) reads at most
SCAN_CAP = 10_000
_ONE_SECOND = timedelta(seconds=1)


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

    def dst_skipped(self, first: int, last: int) -> list[tuple[int, str]]:
        """An interval follows the clock as it runs: DST skips none of it."""
        return []

    def next_dst_skipped(self, ms: int) -> int | None:
        return None


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

    def dst_skipped(self, first: int, last: int) -> list[tuple[int, str]]:
        """The occurrences in ``[first, last]`` that ``dst_gap="skip"`` drops, each at the
        instant ``"shift"`` would run it, with the reason: the zone and its gap."""
        expr = self.expr
        if expr.dst_gap is not DstGap.SKIP or not expr.fixed_time or first > last:
            return []
        shifted = cron.parse(
            expr.expr, expr.timezone, dst_repeat=expr.dst_repeat, calendar=expr.calendar
        )
        kept: set[datetime] = set()
        for occurrence in expr.iter(from_ms(first - 1)):
            if to_ms(occurrence) > last or len(kept) >= SCAN_CAP:
                break
            kept.add(occurrence)
        skipped = []
        for count, occurrence in enumerate(shifted.iter(from_ms(first - 1))):
            if to_ms(occurrence) > last or count >= SCAN_CAP:
                break
            if occurrence not in kept:
                skipped.append((to_ms(occurrence), _gap_reason(occurrence, expr.timezone)))
        return skipped

    def next_dst_skipped(self, ms: int) -> int | None:
        """The first occurrence strictly after ``ms`` that ``dst_gap="skip"`` drops, at the
        instant ``"shift"`` would run it (None: the next one runs). The two walks differ
        only there, so the shifted walk's next, when earlier, is a skipped one."""
        expr = self.expr
        if expr.dst_gap is not DstGap.SKIP or not expr.fixed_time:
            return None
        shifted = cron.parse(
            expr.expr, expr.timezone, dst_repeat=expr.dst_repeat, calendar=expr.calendar
        )
        try:
            candidate = to_ms(shifted.next(from_ms(ms)))
        except CronError:
            return None
        kept = self.next_after(ms)
        return candidate if kept is None or candidate < kept else None


def _gap_reason(at: datetime, timezone: str) -> str:
    """Why a fixed local time did not run: the zone's clocks jumped over it."""
    zone = cron.load_zone(timezone)
    start = (at - _ONE_SECOND).astimezone(zone) + _ONE_SECOND  # the gap's first wall time
    after = at.astimezone(zone)
    return (
        f"dst_gap=skip: in {timezone} the clocks jump from {start:%H:%M} to "
        f"{after:%H:%M} on {after:%Y-%m-%d}; the local time does not exist that day"
    )


class _Following(Protocol):
    def next_after(self, ms: int) -> int | None: ...


@dataclass(frozen=True)
class HolidayRule:
    """What a schedule with a calendar does with its occurrences (``on_holiday``)."""

    days: BusinessDays
    policy: OnHoliday
    zone: tzinfo

    def decide(self, occurrence_ms: int) -> tuple[int | None, str] | None:
        """None on a business day; else (where its run starts, why): None to skip it."""
        at = from_ms(occurrence_ms)
        local = at.astimezone(self.zone).date()
        if self.days.is_business_day(local):
            return None
        kind = "a weekend day" if local.weekday() in self.days.weekend else "a holiday"
        said = f"calendar {self.days.name!r}: {local.isoformat()} is {kind}"
        if self.policy is OnHoliday.SKIP:
            return None, f"{said} (on_holiday=skip)"
        moved = on_business_day(at, self.zone, self.days, self.policy)
        if moved is None:
            return None, f"{said}, and no business day within a year to move to"
        day = moved.astimezone(self.zone).date().isoformat()
        return to_ms(moved), f"{said}: moved to {day} (on_holiday={self.policy.value})"

    def wake(self, occurrences: _Following, first: int) -> int:
        """When the occurrences from ``first`` on must be looked at: ``first``, or earlier
        when a later one moves to the previous business day before it (it is decided
        then, with the ones between it and ``first``).

        The walk goes a day at a time, not an occurrence at a time: a day's first
        occurrence (from ``first`` on) moves earliest of that day's, so a cadence of one
        a second costs what a daily one does. It ends at a business day after the
        earliest's day (later ones move no earlier), and past ``SEARCH_DAYS`` after it
        (no move reaches back further): bounded by days, never by a count to run out of.
        """
        if self.policy is not OnHoliday.PREVIOUS:
            return first
        # A ``first`` that dst_gap="skip" dropped is no occurrence: it moves nowhere.
        earliest, at = first, occurrences.next_after(first - 1)
        reach = timedelta(days=SEARCH_DAYS + 1)
        while at is not None:
            day = self._day(at)
            if day > self._day(earliest) + reach:
                break
            decided = self.decide(at)
            if decided is None:
                # A business day after the earliest's day: later occurrences move no
                # earlier than this day, so none is earlier than the earliest.
                if day > self._day(earliest):
                    break
            elif decided[0] is not None:
                earliest = min(earliest, decided[0])
            # the next day's first (max: a repeated hour after midnight belongs to the day
            # before; the walk still moves on)
            at = occurrences.next_after(max(at, self._day_end(day)))
        return earliest

    def day_start(self, ms: int) -> int:
        """The first millisecond of the local day of ``ms`` (a midnight a DST gap skips
        is read with the offset before it: the gap's end)."""
        return to_ms(datetime.combine(self._day(ms), time(), tzinfo=self.zone))

    def _day_end(self, day: date) -> int:
        """The last millisecond of local ``day`` (a midnight a DST gap skips is read with
        the offset before it: the gap's end)."""
        following = datetime.combine(day + timedelta(days=1), time(), tzinfo=self.zone)
        return to_ms(following) - 1

    def _day(self, ms: int) -> date:
        return from_ms(ms).astimezone(self.zone).date()


def next_decided(occurrences: CronOccurrences | IntervalOccurrences, ms: int) -> int | None:
    """The first occurrence after ``ms`` to be decided: the next that runs, or the next
    that ``dst_gap="skip"`` drops before it (recorded ``skipped_dst`` when it passes)."""
    following = occurrences.next_after(ms)
    skipped = occurrences.next_dst_skipped(ms)
    return following if skipped is None else skipped


def holiday_rule(record: ScheduleRecord) -> HolidayRule | None:
    """The schedule's ``HolidayRule``, or None without a calendar."""
    days = record.business_days_of()
    if days is None:
        return None
    return HolidayRule(days, OnHoliday(record.on_holiday), cron.load_zone(record.timezone))


def occurrences_of(record: ScheduleRecord, anchor_ms: int) -> IntervalOccurrences | CronOccurrences:
    """The occurrences of a stored schedule (an interval's counted from ``anchor_ms``)."""
    if record.every_ms is not None:
        return IntervalOccurrences(anchor_ms, record.every_ms)
    assert record.cron is not None
    expr = cron.parse(
        record.cron, record.timezone, dst_gap=record.dst_gap, dst_repeat=record.dst_repeat,
        calendar=record.business_days_of(),
    )  # fmt: skip
    return CronOccurrences(expr)


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
