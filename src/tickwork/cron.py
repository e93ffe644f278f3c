"""Cron expressions with Debian cron's syntax and semantics, in any IANA time zone.

``parse(expr, timezone)`` returns a ``CronExpr`` with ``next``, ``prev``, ``iter`` and
``explain``. The work is split three ways:

- this module reads the expression itself, so that a bad one is refused with a message
  naming the field and the reason (``CronError``), including expressions that can never
  occur; the check is static reasoning over the day and month sets, never a search, so no
  input can make ``parse`` slow;
- cronsim walks the calendar. In a time zone other than UTC it walks *wall-clock* time,
  which is what Debian cron matches the fields against; the expression is parsed by
  cronsim once per ``CronExpr`` and the parsed walk copied for each start (``_start``),
  with a cheaper tick (``_Walk``);
- this module turns wall-clock times into instants, following Debian cron across DST
  changes as cronsim documents it (see ``_forward``).

Why the last step is ours and not cronsim's: cronsim loses the ``fold`` of its start time
when it applies Debian's fixed-time rule (from the second 01:15 of a repeated hour it
returns the *first* 01:30, which is before the start), it applies that rule only to
five-field expressions while tickwork's contract applies it whenever the minute and hour
fields are fixed, and its zone-aware walk converts through UTC on every tick, which is
several times slower than walking wall-clock time and converting once per occurrence.
The unit tests check this layer against cronsim's own zone-aware results.
"""

from __future__ import annotations

import functools
import itertools
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta, tzinfo
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from cronsim import CronSim, CronSimError

from .errors import ConfigError, CronError

__all__ = ["CronExpr", "load_zone", "parse"]

_ALIASES = {
    "@yearly": "0 0 1 1 *",
    "@annually": "0 0 1 1 *",
    "@monthly": "0 0 1 * *",
    "@weekly": "0 0 * * 0",
    "@daily": "0 0 * * *",
    "@midnight": "0 0 * * *",
    "@hourly": "0 * * * *",
}
_MONTHS = ("JAN", "FEB", "MAR", "APR", "MAY", "JUN", "JUL", "AUG", "SEP", "OCT", "NOV", "DEC")
_DAYS = ("SUN", "MON", "TUE", "WED", "THU", "FRI", "SAT")
_MONTH_LABELS = (
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
)
# Longest each month can be (February in a leap year): the bound for "can never occur".
_MONTH_DAYS = (31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31)
_ZONE_NAME = re.compile(r"[A-Za-z0-9_+\-]+(?:/[A-Za-z0-9_+\-]+)*")
# Zone files that exist on a machine but do not name a zone: "localtime" is whatever the
# host is set to, which would make one schedule fire at different instants on each worker.
_NOT_ZONES = frozenset({"localtime", "posixrules"})
_ONE_SECOND = timedelta(seconds=1)
_ANY_TIME = datetime(2000, 1, 1, tzinfo=UTC)  # where cronsim starts when only reading


@dataclass(frozen=True)
class _Field:
    name: str
    low: int
    high: int
    names: tuple[str, ...] = ()
    first_name_value: int = 0

    def describe(self) -> str:
        text = f"{self.low}-{self.high}"
        if self.names:
            text += f" or {self.names[0]}-{self.names[-1]}"
        return text


_SECOND = _Field("second", 0, 59)
_MINUTE = _Field("minute", 0, 59)
_HOUR = _Field("hour", 0, 23)
_DOM = _Field("day-of-month", 1, 31)
_MONTH = _Field("month", 1, 12, _MONTHS, 1)
_DOW = _Field("day-of-week", 0, 7, _DAYS, 0)
_FIVE = (_MINUTE, _HOUR, _DOM, _MONTH, _DOW)
_SIX = (_SECOND, *_FIVE)


def load_zone(name: object) -> tzinfo:
    """The zone for an IANA name (``datetime.UTC`` for ``"UTC"``); else ``ConfigError``."""
    if not isinstance(name, str):
        raise ConfigError(f"Bad time zone {name!r}: expected an IANA name such as 'Europe/London'")
    return _load_zone(name)


@functools.lru_cache(maxsize=256)
def _load_zone(name: str) -> tzinfo:
    if name == "UTC":
        return UTC
    # The pattern refuses empty, absolute and relative-path names before the file system
    # is asked; ZoneInfo would refuse most of them too, but with a mix of error types.
    if _ZONE_NAME.fullmatch(name) is None or name in _NOT_ZONES:
        raise ConfigError(f"Bad time zone {name!r}: not an IANA zone name")
    try:
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError, OSError) as exc:
        raise ConfigError(f"Unknown time zone {name!r}: expected an IANA name") from exc


def _aware_utc(value: object, what: str) -> datetime:
    """``value`` as an aware UTC datetime; naive datetimes and non-datetimes are refused."""
    if not isinstance(value, datetime):
        raise ConfigError(f"Bad {what} {value!r}: expected an aware datetime")
    if value.tzinfo is None or value.utcoffset() is None:
        raise ConfigError(
            f"Bad {what} {value!r}: naive datetime; pass an aware one (tzinfo=datetime.UTC)"
        )
    try:
        return value.astimezone(UTC)
    except OverflowError:
        raise ConfigError(f"Bad {what} {value!r}: out of range in UTC") from None


# --- reading the expression ------------------------------------------------------------


def _split(expr: object) -> tuple[str, list[str]]:
    """The expression as given and its fields, aliases expanded; wrong counts refused."""
    if not isinstance(expr, str):
        raise CronError(repr(expr), "expression", f"expected a str, got {type(expr).__name__}")
    parts = expr.split()
    if not parts:
        raise CronError(expr, "expression", "empty expression")
    if parts[0].startswith("@"):
        alias = parts[0].lower()
        if alias == "@reboot":
            raise CronError(expr, "expression", "@reboot is not a schedule (it means at boot)")
        if alias not in _ALIASES:
            known = " ".join(_ALIASES)
            raise CronError(expr, "expression", f"unknown alias {parts[0]!r} (known: {known})")
        if len(parts) > 1:
            raise CronError(expr, "expression", f"{parts[0]} takes no other fields")
        return expr, _ALIASES[alias].split()
    if len(parts) not in (5, 6):
        raise CronError(
            expr,
            "expression",
            f"expected 5 fields (minute hour day-of-month month day-of-week) or 6 with "
            f"a leading second field, got {len(parts)}",
        )
    return expr, parts


def _value(expr: str, spec: _Field, text: str) -> int:
    if text.isascii() and text.isdigit():
        # Four digits are plenty for any field; refusing longer ones keeps int() cheap.
        number = int(text) if len(text) <= 4 else spec.high + 1
        if not spec.low <= number <= spec.high:
            raise CronError(expr, spec.name, f"{text} is out of range {spec.describe()}")
        return number
    if text.isascii() and text.isalpha():
        upper = text.upper()
        if upper in spec.names:
            return spec.names.index(upper) + spec.first_name_value
        if spec.names:
            reason = f"unknown name {text!r} (expected {spec.describe()})"
        else:
            reason = f"unknown name {text!r}: the {spec.name} field takes numbers"
        if upper in ("L", "W", "LW"):
            reason += "; 'L' and 'W' are Quartz syntax, not Debian cron"
        raise CronError(expr, spec.name, reason)
    if not text:
        raise CronError(expr, spec.name, "missing value")
    if "#" in text or "?" in text:
        raise CronError(expr, spec.name, f"{text!r}: '#' and '?' are not Debian cron syntax")
    raise CronError(expr, spec.name, f"cannot read {text!r}")


def _step(expr: str, spec: _Field, text: str) -> int:
    if not (text.isascii() and text.isdigit()):
        raise CronError(expr, spec.name, f"step {text!r} is not a number")
    step = int(text) if len(text) <= 4 else 10_000
    if step == 0:
        raise CronError(expr, spec.name, "step 0: a step must be at least 1")
    span = spec.high - spec.low + 1
    if step > span:
        # Debian cron would accept it and run at the start value only; "*/90" in the minute
        # field is nearly always a mistaken "every 90 minutes", so it is refused instead.
        raise CronError(
            expr, spec.name, f"step {step} is larger than the {span} values of the field"
        )
    return step


def _item(expr: str, spec: _Field, item: str) -> range:
    """One list item: ``*``, ``a``, ``a-b``, each with an optional ``/step``."""
    if not item:
        raise CronError(expr, spec.name, "empty list item")
    body, slash, step_text = item.partition("/")
    step = _step(expr, spec, step_text) if slash else 1
    if body == "*":
        return range(spec.low, spec.high + 1, step)
    if "-" in body:
        first, _, last = body.partition("-")
        low, high = _value(expr, spec, first), _value(expr, spec, last)
        if low > high:
            raise CronError(expr, spec.name, f"reversed range {body!r}")
        return range(low, high + 1, step)
    low = _value(expr, spec, body)
    # cronsim (like Vixie cron's "*/n") reads "a/n" as "a-max/n".
    return range(low, (spec.high if slash else low) + 1, step)


def _values(expr: str, spec: _Field, text: str) -> frozenset[int]:
    values: set[int] = set()
    for item in text.split(","):
        values.update(_item(expr, spec, item))
    return frozenset(values)


def _check_occurs(
    expr: str, fields: list[str], days: frozenset[int], months: frozenset[int]
) -> None:
    """Refuse a day-of-month that exists in none of the months (static, so always fast).

    Only when the day-of-month must match: Debian cron ORs the two day fields when both
    are restricted, and then the day-of-week alone still occurs. A (month, day) pair that
    exists occurs on every weekday over the years, so nothing else can make it impossible.
    """
    day_field, dow_field = fields[-3], fields[-1]
    if not (day_field.startswith("*") or dow_field.startswith("*")):
        return
    first_day = min(days)
    longest = max(_MONTH_DAYS[month - 1] for month in months)
    if first_day > longest:
        names = [_MONTH_LABELS[month - 1] for month in sorted(months)]
        where = names[0] if len(names) == 1 else ", ".join(names[:-1]) + " or " + names[-1]
        raise CronError(expr, "day-of-month", f"can never occur: no day {first_day} in {where}")


def _canonical(expr: str, fields: list[str]) -> tuple[str, str]:
    """Validate every field; return the expression for cronsim and the one to describe.

    Both have single spaces and upper-case names. The second works around cronsim's
    explain, which misses that under Debian's OR rule a day field covering every day
    ("1-31", "0-7") makes the other day field irrelevant.
    """
    specs = _FIVE if len(fields) == 5 else _SIX
    sets = [_values(expr, spec, text) for spec, text in zip(specs, fields, strict=True)]
    _check_occurs(expr, fields, sets[-3], sets[-2])
    upper = [text.upper() for text in fields]
    described = list(upper)
    if not (fields[-3].startswith("*") or fields[-1].startswith("*")):
        every_date = len(sets[-3]) == 31
        every_weekday = len({day % 7 for day in sets[-1]}) == 7
        if every_date or every_weekday:
            described[-3] = described[-1] = "*"
    return " ".join(upper), " ".join(described)


@dataclass(frozen=True, order=True)
class CronExpr:
    """A validated cron expression in a time zone; build it with ``tickwork.cron.parse``.

    Equal, hashed and ordered by ``(expr, timezone)``. Every method takes aware datetimes
    and returns aware UTC ones (``tzinfo=datetime.UTC``).
    """

    expr: str
    timezone: str = "UTC"
    _walk: tuple[tuple[str, object], ...] = field(init=False, repr=False, compare=False)
    _explain: str = field(init=False, repr=False, compare=False)
    _zone: tzinfo = field(init=False, repr=False, compare=False)
    _fixed: bool = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        expr, fields = _split(self.expr)
        zone = load_zone(self.timezone)
        canonical, described = _canonical(expr, fields)
        try:
            walk = CronSim(canonical, _ANY_TIME)
        except CronSimError as exc:  # our checks are stricter; this is a safety net
            raise CronError(expr, "expression", str(exc)) from exc
        set_ = object.__setattr__
        set_(self, "_walk", tuple(walk.__dict__.items()))
        set_(self, "_explain", described)
        set_(self, "_zone", zone)
        # Debian cron: a job whose minute and hour fields do not start with "*" runs at a
        # fixed local time and gets the special DST handling (see _forward). cronsim only
        # does this for five fields; the contract says minute and hour, so six fields too.
        set_(self, "_fixed", not (fields[-5].startswith("*") or fields[-4].startswith("*")))

    def next(self, after: datetime) -> datetime:
        """The first occurrence strictly after ``after``."""
        for occurrence in self.iter(after):
            return occurrence
        raise CronError(self.expr, "expression", f"no occurrence after {after.isoformat()}")

    def prev(self, at: datetime) -> datetime:
        """The latest occurrence at or before ``at``."""
        end = _aware_utc(at, "at")
        # cronsim's reverse walk starts strictly before its start, and cron has no field
        # finer than a second: start a second after `at`, truncated, to include `at`.
        walk: Iterator[datetime]
        try:
            if self._zone is UTC:
                walk = _start(self._walk, end.replace(microsecond=0) + _ONE_SECOND, True)
            else:
                walk = _reverse(self._walk, self._zone, self._fixed, end)
            for occurrence in walk:
                return occurrence
        except OverflowError:  # walked past year 1 or 9999
            pass
        raise CronError(self.expr, "expression", f"no occurrence before {at.isoformat()}")

    def iter(self, after: datetime) -> Iterator[datetime]:
        """The occurrences strictly after ``after``, in order (ends only near year 9999)."""
        start = _aware_utc(after, "after")
        if self._zone is UTC:
            return _utc_forward(self._walk, start)
        return _forward(self._walk, self._zone, self._fixed, start)

    def explain(self) -> str:
        """The expression in English, e.g. "At 09:00 on Monday through Friday"."""
        text: str = CronSim(self._explain, _ANY_TIME).explain()
        return text


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


def _start(
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


def _utc_forward(parsed: tuple[tuple[str, object], ...], after: datetime) -> Iterator[datetime]:
    # cronsim's forward walk starts strictly after its start time and keeps tzinfo=UTC.
    try:
        yield from _start(parsed, after)
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


def _forward(
    parsed: tuple[tuple[str, object], ...], zone: tzinfo, fixed: bool, after: datetime
) -> Iterator[datetime]:
    """The instants, strictly after ``after``, at which Debian cron runs the wall times.

    - a wall time that exists once: that instant;
    - skipped by a spring-forward gap: a fixed-time job runs once, at the first instant
      after the gap (several skipped times run once); the others do not run there, as they
      follow the clock and the clock never shows that time;
    - repeated by a fall-back: a fixed-time job runs at the first of the two; the others
      run at both, so the repeated stretch is yielded twice, first pass first.
    """
    offset_of = _offset_function(zone)
    last = after
    try:
        start = _wall(after, zone)
        # In a repeated stretch the wall time does not say which pass `after` is in: walk
        # from before the stretch; what is not after `after` is dropped below.
        walls: Iterator[datetime] = _start(parsed, start - _repeat(start, zone))
        while True:
            repeated = None
            for wall in walls:
                offset = offset_of(wall)
                later = offset_of(_second_pass(wall))
                if offset == later or (fixed and offset > later):
                    instant = wall - offset
                elif offset > later:
                    repeated = wall
                    break
                elif fixed:
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


def _reverse(
    parsed: tuple[tuple[str, object], ...], zone: tzinfo, fixed: bool, at: datetime
) -> Iterator[datetime]:
    """``_forward`` backwards: the instants at or before ``at``, latest first."""
    end = _wall(at, zone)
    # As in _forward: walk from the end of a repeated stretch, drop what is after `at`.
    end += _repeat(end, zone)
    walls: Iterator[datetime] = _start(parsed, end.replace(microsecond=0) + _ONE_SECOND, True)
    offset_of = _offset_function(zone)
    while True:
        repeated = None
        for wall in walls:
            offset = offset_of(wall)
            later = offset_of(_second_pass(wall))
            if offset == later or (fixed and offset > later):
                instant = wall - offset
            elif offset > later:
                repeated = wall
                break
            elif fixed:
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


@functools.lru_cache(maxsize=1024)
def _parse(expr: str, timezone: str) -> CronExpr:
    return CronExpr(expr, timezone)


def parse(expr: str, timezone: str = "UTC") -> CronExpr:
    """Read ``expr`` as a cron expression in ``timezone`` (an IANA name).

    Raises ``CronError`` (a ``ConfigError``) for a bad or never-occurring expression and
    ``ConfigError`` for an unknown zone.
    """
    if not isinstance(expr, str):
        _split(expr)  # raises CronError naming the type
    if not isinstance(timezone, str):
        load_zone(timezone)  # raises ConfigError naming the value
    return _parse(expr, timezone)
