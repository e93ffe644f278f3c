"""Upcoming occurrences of a cadence without registering anything, and the DST helpers.

``preview`` serves ``engine.preview`` and ``tickwork cron``; ``dst_marks`` says which of a
cron expression's occurrences DST moved, skipped or doubled (DESIGN §2: the CLI, the API
and the dashboard show it); ``schedule_marks`` adds what a schedule's calendar does to
them (the dashboard's upcoming list); ``near_dst_transition`` and ``utc_offset_text`` mark
occurrences near an offset change (CLI, dashboard).
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta, tzinfo
from enum import StrEnum

from .._values.business_days import BusinessDays
from .._values.clock import from_ms, to_ms
from .._values.durations import Duration, parse_duration
from .._values.models import DstGap, DstRepeat, OnHoliday
from ..cron import CronExpr, _aware_utc, load_zone, parse
from ..errors import ConfigError
from .occurrences import HolidayRule

__all__ = [
    "MAX_PREVIEW",
    "DstMark",
    "HolidayMark",
    "MarkedOccurrence",
    "UpcomingMark",
    "dst_marks",
    "holiday_marks",
    "near_dst_transition",
    "preview",
    "schedule_marks",
    "utc_offset_text",
]

#: the most occurrences ``preview`` lists at once
MAX_PREVIEW = 1000

_ONE_SECOND = timedelta(seconds=1)


def preview(
    *,
    cron: str | None = None,
    every: Duration | None = None,
    timezone: str = "UTC",
    after: datetime,
    count: int = 5,
    dst_gap: DstGap | str = DstGap.SHIFT,
    dst_repeat: DstRepeat | str = DstRepeat.FIRST,
    calendar: BusinessDays | None = None,
) -> list[datetime]:
    """The first ``count`` occurrences strictly after ``after``, as aware UTC datetimes.

    Exactly one of ``cron`` (an expression, read in ``timezone`` under the DST policy
    ``dst_gap`` / ``dst_repeat``, its ``nBD`` / ``LBD`` counted on ``calendar``'s
    business days) and ``every`` (a duration: occurrences are ``after + k * every``).
    ``count`` is 1 to 1000. Anything invalid raises ``ConfigError`` (``CronError`` for
    the expression). The occurrences a calendar skips or moves are among them (each is
    an occurrence, with its id): ``holiday_marks`` says which.
    """
    if (cron is None) == (every is None):
        raise ConfigError("preview: pass exactly one of cron= and every=")
    _check_count(count)
    start = _aware_utc(after, "after")
    if cron is not None:
        expr = parse(cron, timezone, dst_gap=dst_gap, dst_repeat=dst_repeat, calendar=calendar)
        return list(itertools.islice(expr.iter(start), count))
    load_zone(timezone)
    step = parse_duration(every)  # type: ignore[arg-type]  # not None: checked above
    try:
        return [start + step * k for k in range(1, count + 1)]
    except OverflowError:
        raise ConfigError(f"Bad after {after!r}: occurrences would pass year 9999") from None


def _check_count(count: object) -> None:
    if isinstance(count, bool) or not isinstance(count, int) or not 1 <= count <= MAX_PREVIEW:
        raise ConfigError(f"Bad count {count!r}: expected an int from 1 to {MAX_PREVIEW}")


class DstMark(StrEnum):
    """What daylight saving time did to an occurrence of a cron expression."""

    #: a fixed local time a spring-forward gap skips, run at the first instant after it
    MOVED = "moved"
    #: such a time with ``dst_gap="skip"``: no run that day (``at`` is where shift would be)
    SKIPPED = "skipped"
    #: a local time a fall-back repeats, run at both instants (``dst_repeat="both"``, or
    #: a wildcard minute or hour field, which follows the clock)
    DOUBLED = "doubled"


@dataclass(frozen=True)
class MarkedOccurrence:
    """One entry of ``dst_marks``: ``at`` (aware UTC), ``mark`` (``None`` when DST did not
    touch it) and ``wall``, the local time the expression asked for (naive)."""

    at: datetime
    mark: DstMark | None
    wall: datetime


def dst_marks(
    expr: CronExpr, after: datetime, occurrences: list[datetime]
) -> list[MarkedOccurrence]:
    """``occurrences`` (consecutive, from ``expr.iter(after)``) marked with what DST did
    to them, and the ones ``dst_gap="skip"`` dropped between ``after`` and the last of
    them put back in their place, marked skipped.

    Pure: it reads only the zone's offsets and the expression's wall times.
    """
    zone = load_zone(expr.timezone)
    # Which wall times the expression names, asked of the same expression read in UTC,
    # where every wall time exists exactly once.
    in_utc = parse(expr.expr, "UTC", calendar=expr.calendar)
    marked: list[MarkedOccurrence] = []
    if occurrences and expr.fixed_time and expr.dst_gap is DstGap.SKIP:
        # Shift's occurrences in the same span: those it moved are skip's skips.
        shifted = parse(
            expr.expr, expr.timezone, dst_repeat=expr.dst_repeat, calendar=expr.calendar
        )
        for at in shifted.iter(after):
            if at > occurrences[-1]:
                break
            wall = _moved_from(at, zone, in_utc)
            if wall is not None:
                marked.append(MarkedOccurrence(at, DstMark.SKIPPED, wall))
    for at in occurrences:
        moved = _moved_from(at, zone, in_utc) if expr.fixed_time else None
        if moved is not None:
            marked.append(MarkedOccurrence(at, DstMark.MOVED, moved))
            continue
        wall = at.astimezone(zone).replace(tzinfo=None, fold=0)
        mark = DstMark.DOUBLED if _twice(wall, zone, expr) else None
        marked.append(MarkedOccurrence(at, mark, wall))
    return sorted(marked, key=lambda entry: entry.at)


@dataclass(frozen=True)
class HolidayMark:
    """What a calendar does to an occurrence on a day off: ``runs_at`` None when it is
    skipped, else where its run moved (aware UTC); ``reason`` in words, as the history
    would record it ("calendar 'acme': 2026-12-25 is a holiday (on_holiday=skip)")."""

    runs_at: datetime | None
    reason: str

    @property
    def kind(self) -> str:
        """``"skipped"`` or ``"moved"``."""
        return "skipped" if self.runs_at is None else "moved"


def holiday_marks(
    days: BusinessDays, on_holiday: OnHoliday | str, timezone: str, occurrences: list[datetime]
) -> dict[datetime, HolidayMark]:
    """Which of ``occurrences`` fall on ``days``' days off (local dates in ``timezone``),
    and what ``on_holiday`` does with each: skip it, or move its run. Pure."""
    try:
        policy = OnHoliday(on_holiday)
    except ValueError:
        allowed = ", ".join(repr(member.value) for member in OnHoliday)
        raise ConfigError(f"on_holiday must be one of {allowed}, not {on_holiday!r}") from None
    rule = HolidayRule(days, policy, load_zone(timezone))
    marks = {}
    for at in occurrences:
        decided = rule.decide(to_ms(at))
        if decided is not None:
            moved, why = decided
            marks[at] = HolidayMark(None if moved is None else from_ms(moved), why)
    return marks


@dataclass(frozen=True)
class UpcomingMark:
    """One upcoming occurrence of a schedule as the dashboard lists it: ``at`` (aware UTC,
    the occurrence's instant), ``mark`` ("moved", "skipped", "doubled" for DST;
    "holiday_skipped", "holiday_moved" for the calendar; None: nothing), ``note`` (why,
    in words) and ``runs_at`` (where a calendar moved its run, else None)."""

    at: datetime
    mark: str | None = None
    note: str | None = None
    runs_at: datetime | None = None


def schedule_marks(
    expr: CronExpr | None,
    after: datetime,
    occurrences: list[datetime],
    rule: HolidayRule | None,
) -> list[UpcomingMark]:
    """``occurrences`` (consecutive, after ``after``) marked with what DST (``expr``'s
    policy; None for an interval) and the calendar's ``rule`` do to them; the ones
    ``dst_gap="skip"`` drops are put back in their place, marked skipped."""
    if expr is None:
        entries = [UpcomingMark(at) for at in occurrences]
    else:
        entries = [_dst_entry(marked) for marked in dst_marks(expr, after, occurrences)]
    if rule is None:
        return entries
    return [_holiday_entry(entry, rule) for entry in entries]


def _dst_entry(marked: MarkedOccurrence) -> UpcomingMark:
    wall = f"{marked.wall:%H:%M}"
    if marked.mark is DstMark.MOVED:
        note = f"DST: {wall} does not exist that day; runs at the end of the gap"
    elif marked.mark is DstMark.SKIPPED:
        note = f"DST: {wall} does not exist that day; skipped (dst_gap=skip)"
    elif marked.mark is DstMark.DOUBLED:
        note = f"DST: {wall} happens twice that day; runs at each"
    else:
        return UpcomingMark(marked.at)
    return UpcomingMark(marked.at, marked.mark.value, note)


def _holiday_entry(entry: UpcomingMark, rule: HolidayRule) -> UpcomingMark:
    if entry.mark == DstMark.SKIPPED:
        return entry
    decided = rule.decide(to_ms(entry.at))
    if decided is None:
        return entry
    moved, why = decided
    if moved is None:
        return UpcomingMark(entry.at, "holiday_skipped", why)
    return UpcomingMark(entry.at, "holiday_moved", why, from_ms(moved))


def _moved_from(at: datetime, zone: tzinfo, in_utc: CronExpr) -> datetime | None:
    """The first skipped wall time that ``at`` stands in for, when ``at`` is the end of a
    spring-forward gap whose own wall time the expression does not name."""
    before = (at - _ONE_SECOND).astimezone(zone).utcoffset()
    offset = at.astimezone(zone).utcoffset()
    if before is None or offset is None or offset <= before:
        return None
    end = at.astimezone(zone).replace(tzinfo=UTC)  # wall time, labelled UTC
    if in_utc.prev(end) == end:
        return None  # the expression names the gap's end itself: nothing moved
    start = end - (offset - before)
    first = in_utc.next(start - _ONE_SECOND)
    return first.replace(tzinfo=None) if first < end else None


def _twice(wall: datetime, zone: tzinfo, expr: CronExpr) -> bool:
    """Whether ``wall`` is a local time a fall-back repeats and the expression runs at
    both times: with ``dst_repeat="both"``, or always when it follows the clock."""
    first, second = wall.replace(tzinfo=zone), wall.replace(tzinfo=zone, fold=1)
    if first.utcoffset() == second.utcoffset():
        return False
    return expr.dst_repeat is DstRepeat.BOTH or not expr.fixed_time


def near_dst_transition(
    instant: datetime, timezone: str, *, within: timedelta = timedelta(hours=3)
) -> bool:
    """Whether ``timezone``'s UTC offset changes within ``within`` of ``instant``.

    For marking occurrences that DST moves (a CLI note, a dashboard badge). It compares the
    offsets at ``instant - within``, ``instant`` and ``instant + within``, so a change
    and its reversal both inside the window would go unseen; no zone does that in hours.
    """
    zone = load_zone(timezone)
    middle = _aware_utc(instant, "instant")
    offsets = set()
    for shift in (-within, timedelta(0), within):
        try:
            offsets.add((middle + shift).astimezone(zone).utcoffset())
        except OverflowError:  # the window reaches past year 1 or 9999
            continue
    return len(offsets) > 1


def utc_offset_text(when: datetime, timezone: str) -> str:
    """The UTC offset of ``timezone`` at ``when`` as ``+HH:MM`` (``+HH:MM:SS`` if needed)."""
    offset = when.astimezone(load_zone(timezone)).utcoffset() or timedelta(0)
    sign = "-" if offset < timedelta(0) else "+"
    seconds = abs(int(offset.total_seconds()))
    hours, rest = divmod(seconds, 3600)
    minutes, seconds = divmod(rest, 60)
    text = f"{sign}{hours:02d}:{minutes:02d}"
    return f"{text}:{seconds:02d}" if seconds else text
