"""Cron expressions with Debian cron's syntax and semantics, in any IANA time zone.

``parse(expr, timezone)`` returns a ``CronExpr`` with ``next``, ``prev``, ``iter`` and
``explain``. The work is split three ways:

- this module reads the expression itself, so that a bad one is refused with a message
  naming the field and the reason (``CronError``), including expressions that can never
  occur; the check is static reasoning over the day and month sets, never a search, so no
  input can make ``parse`` slow;
- cronsim walks the calendar. In a time zone other than UTC it walks *wall-clock* time
  (naive datetimes), which is what Debian cron matches the fields against;
- this module turns wall-clock times into instants, following Debian cron across DST
  changes exactly as cronsim documents it (see ``_forward_instants``).

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
    return value.astimezone(UTC)


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


# --- wall-clock time to instants ---------------------------------------------------------


def _transition(zone: tzinfo, low: datetime, high: datetime) -> datetime:
    """The instant in (low, high] at which the zone's offset stops being low's offset.

    Offsets and transitions are whole seconds in the tz database, so a binary search over
    whole seconds is exact; a change spans at most a day, so this takes ~17 steps.
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


@dataclass(frozen=True, order=True)
class CronExpr:
    """A validated cron expression in a time zone; build it with ``tickwork.cron.parse``.

    Equal, hashed and ordered by ``(expr, timezone)``. Every method takes and returns aware
    datetimes; results are in UTC (``tzinfo=datetime.UTC``).
    """

    expr: str
    timezone: str = "UTC"
    _cronsim: str = field(init=False, repr=False, compare=False)
    _explain: str = field(init=False, repr=False, compare=False)
    _zone: tzinfo = field(init=False, repr=False, compare=False)
    _fixed: bool = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        expr, fields = _split(self.expr)
        zone = load_zone(self.timezone)
        canonical, described = _canonical(expr, fields)
        try:
            CronSim(canonical, _ANY_TIME)
        except CronSimError as exc:  # our checks are stricter; this is a safety net
            raise CronError(expr, "expression", str(exc)) from exc
        set_ = object.__setattr__
        set_(self, "_cronsim", canonical)
        set_(self, "_explain", described)
        set_(self, "_zone", zone)
        # Debian cron: a job whose minute and hour fields do not start with "*" runs at a
        # fixed local time, and gets the special DST handling (see _forward_instants).
        set_(self, "_fixed", not (fields[-5].startswith("*") or fields[-4].startswith("*")))

    def next(self, after: datetime) -> datetime:
        """The first occurrence strictly after ``after``."""
        for occurrence in self.iter(after):
            return occurrence
        raise CronError(self.expr, "expression", f"no occurrence after {after.isoformat()}")

    def prev(self, at: datetime) -> datetime:
        """The latest occurrence at or before ``at``."""
        start = _aware_utc(at, "at")
        try:
            found = self._utc_prev(start) if self._zone is UTC else self._zone_prev(start)
        except OverflowError:
            found = None
        if found is None:
            raise CronError(self.expr, "expression", f"no occurrence before {at.isoformat()}")
        return found

    def iter(self, after: datetime) -> Iterator[datetime]:
        """The occurrences strictly after ``after``, in order (ends only near year 9999)."""
        start = _aware_utc(after, "after")
        if self._zone is UTC:
            return self._utc_forward(start)
        return self._zone_forward(start)

    def explain(self) -> str:
        """The expression in English, e.g. "At 09:00 on Monday through Friday"."""
        text: str = CronSim(self._explain, _ANY_TIME).explain()
        return text

    # --- UTC: cronsim walks UTC directly ---

    def _utc_forward(self, after: datetime) -> Iterator[datetime]:
        # cronsim's forward walk starts strictly after its start time, and keeps
        # tzinfo=UTC, so its results are ours as they are.
        try:
            yield from CronSim(self._cronsim, after)
        except OverflowError:  # walked past year 9999
            return

    def _utc_prev(self, at: datetime) -> datetime | None:
        # cronsim's reverse walk starts strictly before its start time: start one second
        # after `at` (whole seconds, as cron has no finer field) to include `at` itself.
        start = at.replace(microsecond=0) + _ONE_SECOND
        found: datetime | None = next(CronSim(self._cronsim, start, reverse=True), None)
        return found

    # --- other zones: cronsim walks wall-clock time, we map it to instants ---

    def _zone_forward(self, after: datetime) -> Iterator[datetime]:
        wall = after.astimezone(self._zone).replace(tzinfo=None, fold=0)
        offset_of = _offset_function(self._zone)
        repeat = offset_of(wall) - offset_of(wall.replace(fold=1))
        # In a repeated hour the wall time alone does not say which pass `after` is in:
        # start before the repeat and drop below what is not after `after`.
        instants = self._forward_instants(wall - repeat if repeat else wall)
        for instant in instants:
            if instant > after:
                yield instant
                break
        yield from instants

    def _forward_instants(self, start: datetime) -> Iterator[datetime]:
        """Instants of the wall-clock occurrences after ``start``, as Debian cron runs them.

        - a wall time that exists once: that instant;
        - skipped by a spring-forward gap: a fixed-time job runs once, at the first instant
          after the gap (several skipped times run once); the others do not run there, as
          they follow the clock and the clock never shows that time;
        - repeated by a fall-back: a fixed-time job runs at the first of the two; the
          others run at both, so the repeated stretch is yielded twice, first pass first.
        """
        fixed, offset_of = self._fixed, _offset_function(self._zone)
        walls: Iterator[datetime] = CronSim(self._cronsim, start)
        last = datetime.min.replace(tzinfo=UTC)
        try:
            while True:
                repeated = None
                for wall in walls:
                    offset = offset_of(wall)
                    later = offset_of(wall.replace(fold=1))
                    if offset == later or (fixed and offset > later):
                        instant = (wall - offset).replace(tzinfo=UTC)
                    elif offset > later:
                        repeated = wall
                        break
                    elif fixed:
                        instant = _gap_end(self._zone, wall, offset, later)
                    else:
                        continue
                    if instant > last:  # skipped wall times of one gap run once
                        last = instant
                        yield instant
                if repeated is None:
                    return
                stretch, following = _repeated_stretch(self._zone, repeated, walls)
                yield from stretch
                last = stretch[-1]
                walls = itertools.chain(following, walls)
        except OverflowError:  # walked past year 9999
            return

    def _zone_prev(self, at: datetime) -> datetime | None:
        wall = at.astimezone(self._zone).replace(tzinfo=None, fold=0)
        offset_of = _offset_function(self._zone)
        # As in _zone_forward: from the end of a repeat, dropping what is after `at`.
        wall += offset_of(wall) - offset_of(wall.replace(fold=1))
        for instant in self._reverse_instants(wall.replace(microsecond=0) + _ONE_SECOND):
            if instant <= at:
                return instant
        return None

    def _reverse_instants(self, start: datetime) -> Iterator[datetime]:
        """``_forward_instants`` backwards, from strictly before ``start``."""
        fixed, offset_of = self._fixed, _offset_function(self._zone)
        walls: Iterator[datetime] = CronSim(self._cronsim, start, reverse=True)
        while True:
            repeated = None
            for wall in walls:
                offset = offset_of(wall)
                later = offset_of(wall.replace(fold=1))
                if offset == later or (fixed and offset > later):
                    yield (wall - offset).replace(tzinfo=UTC)
                elif offset > later:
                    repeated = wall
                    break
                elif fixed:
                    yield _gap_end(self._zone, wall, offset, later)
            if repeated is None:
                return
            stretch, following = _repeated_stretch(self._zone, repeated, walls, reverse=True)
            yield from stretch
            walls = itertools.chain(following, walls)


def _offset_function(zone: tzinfo) -> Callable[[datetime], timedelta]:
    """``zone.utcoffset``, typed for zones that always answer (zoneinfo does)."""
    return zone.utcoffset  # type: ignore[return-value]


def _gap_end(zone: tzinfo, wall: datetime, offset: timedelta, later: timedelta) -> datetime:
    """The first instant after the spring-forward gap that skips ``wall``.

    zoneinfo reads a skipped wall time with the offset before the gap (fold=0) and the one
    after it (fold=1), which brackets the change: (wall - later, wall - offset].
    cronsim steps a skipped time forward a minute at a time until it exists, which lands
    on the same instant whenever the gap starts and ends on whole minutes (every change
    since 1972 does; Africa/Monrovia's in 1972 is the last that did not).
    """
    return _transition(
        zone, (wall - later).replace(tzinfo=UTC), (wall - offset).replace(tzinfo=UTC)
    )


def _repeated_stretch(
    zone: tzinfo, first: datetime, walls: Iterator[datetime], reverse: bool = False
) -> tuple[list[datetime], list[datetime]]:
    """The instants of the wall times in the repeated stretch that ``first`` opens.

    Reads wall times from ``walls`` up to the end of the stretch (its start when
    ``reverse``); returns the instants in time order (reverse order when ``reverse``) and
    the wall time read past the stretch, if any, which is to be walked next.
    """
    offset_of = _offset_function(zone)
    offset, later = offset_of(first), offset_of(first.replace(fold=1))
    change = _transition(
        zone, (first - offset).replace(tzinfo=UTC), (first - later).replace(tzinfo=UTC)
    ).replace(tzinfo=None)
    # The stretch is [change + later, change + offset) in wall-clock time.
    stretch = [first]
    following: list[datetime] = []
    for wall in walls:
        if (wall < change + later) if reverse else (wall >= change + offset):
            following.append(wall)
            break
        stretch.append(wall)
    first_pass = [(wall - offset).replace(tzinfo=UTC) for wall in stretch]
    second_pass = [(wall - later).replace(tzinfo=UTC) for wall in stretch]
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
