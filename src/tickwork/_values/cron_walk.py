"""Walking the calendar for ``tickwork.cron``: occurrences as instants, with Debian cron's
DST rules (see ``tickwork.cron``'s docstring for why this layer is ours, not cronsim's).

cronsim is used below its public API here (a parsed walk is copied rather than parsed
again, and its tick is cheaper): pyproject.toml pins the cronsim versions this is tested
with, and test_cron_syntax checks the attributes it copies against cronsim itself.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta, tzinfo

from cronsim import CronSim

from .models import DstGap, DstRepeat

__all__ = ["forward", "reverse", "start_walk", "utc_forward"]

_ONE_SECOND = timedelta(seconds=1)


# --- walking the calendar ------------------------------------------------------------------
#
# In UTC cronsim's results are the occurrences. In any other zone cronsim walks wall-clock
# time, and each wall time is turned into the instant(s) at which Debian cron runs it. The
# wall times are labelled UTC rather than naive: cronsim then does the same plain
# arithmetic as for naive datetimes, subtracting the zone's offset yields the instant
# already labelled UTC, and ZoneInfo.utcoffset() reads only the fields and the fold.
# (Building datetimes is the cost that matters here: replace() takes ~0.7 us.)


class _Walk(CronSim):
    """cronsim's walk with a cheaper ``tick()``; everything else is cronsim's.

    tickwork's walks are always in UTC or in wall-clock time labelled UTC, where
    CronSim.tick() only adds ``seconds`` (times the direction) to ``dt``, building a new
    timedelta each time; timedelta(seconds=...) costs more than the rest of a tick, and a
    walk ticks up to dozens of times per occurrence. The few steps cronsim takes (a second,
    whole minutes, hours) are cached instead: the same arithmetic, and the walk 1.5-2x as
    fast. The property tests compare every result with a plain CronSim.
    """

    def tick(self, seconds: int = 1) -> None:
        step = seconds * self.tick_direction
        delta = _STEPS.get(step)
        if delta is None:
            delta = _STEPS[step] = timedelta(seconds=step)
        self.dt += delta


_STEPS: dict[int, timedelta] = {}


def start_walk(
    parsed: tuple[tuple[str, object], ...], start: datetime, reverse: bool = False
) -> CronSim:
    """A cronsim walk from ``start``, built from ``parsed`` without parsing again.

    Building a CronSim parses its expression, two thirds of the cost of a single next(),
    so each CronExpr keeps the attributes of one parsed walk and copies them. What depends
    on the start is the three attributes CronSim.__init__ sets from it (there is no fix-up
    zone, as the walk is always in UTC or labelled UTC); test_cron_syntax checks that list
    against cronsim. The attributes are set one by one, in cronsim's order: CPython keeps
    such objects' attributes inline, and a __dict__.update() would make every attribute
    read in cronsim's loops ~25% slower.
    """
    walk: CronSim = object.__new__(_Walk)
    for name, value in parsed:
        setattr(walk, name, value)
    walk.skip_initial_tick = bool(reverse and start.microsecond)
    walk.dt = start.replace(microsecond=0) if start.microsecond else start
    walk.tick_direction = -1 if reverse else 1
    return walk


def utc_forward(parsed: tuple[tuple[str, object], ...], after: datetime) -> Iterator[datetime]:
    # cronsim's forward walk starts strictly after its start time and keeps tzinfo=UTC.
    try:
        yield from start_walk(parsed, after)
    except OverflowError:  # walked past year 9999
        return


def _wall(instant: datetime, zone: tzinfo) -> datetime:
    """The wall-clock time of ``instant`` in ``zone``, labelled UTC (see above)."""
    t = instant.astimezone(zone)
    return datetime(t.year, t.month, t.day, t.hour, t.minute, t.second, t.microsecond, UTC)


def _second_pass(wall: datetime) -> datetime:
    """``wall`` (whole seconds) with fold=1, for reading a repeated time's second offset.

    datetime() rather than wall.replace(fold=1), which takes ~0.7 us parsing keywords.
    """
    y, mo, d, h, mi, s = wall.year, wall.month, wall.day, wall.hour, wall.minute, wall.second
    return datetime(y, mo, d, h, mi, s, 0, UTC, fold=1)


def _repeat(wall: datetime, zone: tzinfo) -> timedelta:
    """How long the stretch of wall-clock time containing ``wall`` repeats (usually 0)."""
    return zone.utcoffset(wall) - zone.utcoffset(_second_pass(wall))  # type: ignore[operator]


def forward(
    parsed: tuple[tuple[str, object], ...],
    zone: tzinfo,
    fixed: bool,
    after: datetime,
    gap: DstGap = DstGap.SHIFT,
    repeat: DstRepeat = DstRepeat.FIRST,
    keep: Callable[[datetime], bool] | None = None,
) -> Iterator[datetime]:
    """The instants, strictly after ``after``, at which cron runs the wall times.

    - a wall time that exists once: that instant;
    - skipped by a spring-forward gap: a fixed-time job runs once, at the first instant
      after the gap (several skipped times run once), or not at all with ``gap=SKIP``; the
      others do not run there, as they follow the clock and the clock never shows that
      time;
    - repeated by a fall-back: a fixed-time job runs at the first of the two (or the last,
      or both, as ``repeat`` says); the others run at both, so the repeated stretch is
      yielded twice, first pass first.

    ``keep``, when given, says which wall times to walk at all (business days).
    """
    offset_of = _offset_function(zone)
    shift, twice = fixed and gap is DstGap.SHIFT, not fixed or repeat is DstRepeat.BOTH
    last_pass = repeat is DstRepeat.LAST
    last = after
    try:
        start = _wall(after, zone)
        # In a repeated stretch the wall time does not say which pass `after` is in: walk
        # from before the stretch; what is not after `after` is dropped below.
        walls: Iterator[datetime] = start_walk(parsed, start - _repeat(start, zone))
        if keep is not None:
            walls = filter(keep, walls)
        while True:
            repeated = None
            for wall in walls:
                offset = offset_of(wall)
                later = offset_of(_second_pass(wall))
                if offset == later:
                    instant = wall - offset
                elif offset > later:
                    if twice:
                        repeated = wall
                        break
                    instant = wall - later if last_pass else wall - offset
                elif shift:
                    instant = _gap_end(zone, wall, offset, later)
                else:
                    continue
                if instant > last:  # also drops the skipped times of one gap after the first
                    last = instant
                    yield instant
            if repeated is None:
                return
            stretch, following = _repeated_stretch(zone, repeated, walls)
            for instant in stretch:
                if instant > last:
                    last = instant
                    yield instant
            walls = itertools.chain(following, walls)
    except OverflowError:  # walked past year 9999
        return


def reverse(
    parsed: tuple[tuple[str, object], ...],
    zone: tzinfo,
    fixed: bool,
    at: datetime,
    gap: DstGap = DstGap.SHIFT,
    repeat: DstRepeat = DstRepeat.FIRST,
    keep: Callable[[datetime], bool] | None = None,
) -> Iterator[datetime]:
    """``forward`` backwards: the instants at or before ``at``, latest first."""
    end = _wall(at, zone)
    # As in forward: walk from the end of a repeated stretch, drop what is after `at`.
    end += _repeat(end, zone)
    walls: Iterator[datetime] = start_walk(parsed, end.replace(microsecond=0) + _ONE_SECOND, True)
    if keep is not None:
        walls = filter(keep, walls)
    offset_of = _offset_function(zone)
    shift, twice = fixed and gap is DstGap.SHIFT, not fixed or repeat is DstRepeat.BOTH
    last_pass = repeat is DstRepeat.LAST
    while True:
        repeated = None
        for wall in walls:
            offset = offset_of(wall)
            later = offset_of(_second_pass(wall))
            if offset == later:
                instant = wall - offset
            elif offset > later:
                if twice:
                    repeated = wall
                    break
                instant = wall - later if last_pass else wall - offset
            elif shift:
                instant = _gap_end(zone, wall, offset, later)
            else:
                continue
            if instant <= at:
                yield instant
        if repeated is None:
            return
        stretch, following = _repeated_stretch(zone, repeated, walls, reverse=True)
        yield from (instant for instant in stretch if instant <= at)
        walls = itertools.chain(following, walls)


def _offset_function(zone: tzinfo) -> Callable[[datetime], timedelta]:
    """``zone.utcoffset``, typed for zones that always answer (zoneinfo does)."""
    return zone.utcoffset  # type: ignore[return-value]


def _transition(zone: tzinfo, low: datetime, high: datetime) -> datetime:
    """The instant in (low, high] at which the zone's offset stops being low's offset.

    Offsets and transitions are whole seconds in the tz database, so a binary search over
    whole seconds is exact; a change spans at most a day or so: ~17 steps.
    """
    before = low.astimezone(zone).utcoffset()
    lo, hi = 0, int((high - low).total_seconds())
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if (low + timedelta(seconds=mid)).astimezone(zone).utcoffset() == before:
            lo = mid
        else:
            hi = mid
    return low + timedelta(seconds=hi)


def _gap_end(zone: tzinfo, wall: datetime, offset: timedelta, later: timedelta) -> datetime:
    """The first instant after the spring-forward gap that skips ``wall``.

    zoneinfo reads a skipped wall time with the offset from before the gap (fold=0) and
    from after it (fold=1), which brackets the change: (wall - later, wall - offset].
    cronsim steps a skipped time forward a minute at a time until it exists, which lands on
    the same instant whenever the gap starts and ends on whole minutes (every change since
    1972 does; Africa/Monrovia's in 1972 is the last that did not).
    """
    return _transition(zone, wall - later, wall - offset)


def _repeated_stretch(
    zone: tzinfo, first: datetime, walls: Iterator[datetime], reverse: bool = False
) -> tuple[list[datetime], list[datetime]]:
    """The instants of the wall times in the repeated stretch that ``first`` opens.

    Reads wall times from ``walls`` up to the end of the stretch (its start when
    ``reverse``); returns the instants in time order (reverse order when ``reverse``) and
    the wall time read past the stretch, if any, which is to be walked next.
    """
    offset_of = _offset_function(zone)
    offset, later = offset_of(first), offset_of(_second_pass(first))
    change = _transition(zone, first - offset, first - later)
    # The stretch is [change + later, change + offset) in wall-clock time.
    stretch = [first]
    following: list[datetime] = []
    for wall in walls:
        if (wall < change + later) if reverse else (wall >= change + offset):
            following.append(wall)
            break
        stretch.append(wall)
    first_pass = [wall - offset for wall in stretch]
    second_pass = [wall - later for wall in stretch]
    return (second_pass + first_pass if reverse else first_pass + second_pass), following
