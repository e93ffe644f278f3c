"""Cron expressions with Debian cron's syntax and semantics, in any IANA time zone.

Beyond Debian's syntax, the calendar words cronsim (and Quartz, EventBridge) accept: ``L``
and ``LW`` in the day-of-month field, ``5L`` and ``1#2`` / ``MON#2`` in the day-of-week
field, written exactly as cronsim writes them. cronsim matches them (``CronSim.match_day``),
so evaluation, the DST rules and the walk below are the same for them as for any day.
What is ours: reading them (cronsim also takes ``L/2`` and answers every mistake with
"Bad day-of-week"), refusing day fields that can never meet (cronsim would search 50 years
on every call) and a few words of ``explain``.

``parse(expr, timezone)`` returns a ``CronExpr`` with ``next``, ``prev``, ``iter`` and
``explain``. The work is split three ways:

- this module reads the expression itself, so that a bad one is refused with a message
  naming the field and the reason (``CronError``), including expressions that can never
  occur; the check is static reasoning over the day and month sets (with a calendar word,
  a bounded look at each form a month takes), never an open search, so no input can make
  ``parse`` slow;
- cronsim walks the calendar. In a time zone other than UTC it walks *wall-clock* time,
  which is what Debian cron matches the fields against; the expression is parsed by
  cronsim once per ``CronExpr`` and the parsed walk copied for each start, with a
  cheaper tick (``tickwork._values.cron_walk``);
- this module turns wall-clock times into instants, following Debian cron across DST
  changes as cronsim documents it (``tickwork._values.cron_walk``).

Why the last step is ours and not cronsim's: cronsim loses the ``fold`` of its start time
when it applies Debian's fixed-time rule (from the second 01:15 of a repeated hour it
returns the *first* 01:30, which is before the start), it applies that rule only to
five-field expressions while tickwork's contract applies it whenever the minute and hour
fields are fixed, and its zone-aware walk converts through UTC on every tick, which is
several times slower than walking wall-clock time and converting once per occurrence.
The unit tests check this layer against cronsim's own zone-aware results.
"""

from __future__ import annotations

import calendar
import dataclasses
import functools
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, timedelta, tzinfo
from typing import Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError, available_timezones

from cronsim import CronSim, CronSimError
from cronsim.explain import Expression

from ._values.business_days import LAST, MAX_NTH, BusinessDays, describe_days
from ._values.cron_walk import forward, reverse, start_walk, utc_forward
from ._values.hints import close_names, did_you_mean
from ._values.models import DstGap, DstRepeat
from .errors import ConfigError, CronError

__all__ = ["CronExpr", "DstGap", "DstRepeat", "load_zone", "parse"]

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
        raise ConfigError(f"Bad time zone {name!r}: not an IANA zone name{_zone_hint(name)}")
    try:
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError, OSError) as exc:
        raise ConfigError(
            f"Unknown time zone {name!r}: expected an IANA name{_zone_hint(name)}"
        ) from exc


@functools.cache
def _zone_names() -> frozenset[str]:
    """Every IANA zone name this machine knows (read once, for a hint only)."""
    return frozenset(available_timezones())


def _zone_hint(name: str) -> str:
    """``; did you mean 'Europe/London'?`` for a misspelt zone; empty when none is close."""
    hint = did_you_mean(close_names(name, _zone_names()))
    return f"; {hint}" if hint else ""


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
            reason += "; 'L' and 'LW' belong in the day-of-month field"
        raise CronError(expr, spec.name, reason)
    if not text:
        raise CronError(expr, spec.name, "missing value")
    if "#" in text:
        raise CronError(expr, spec.name, f"{text!r}: '#' belongs in the day-of-week field")
    raise CronError(expr, spec.name, f"cannot read {text!r}")


def _step(expr: str, spec: _Field, text: str) -> int:
    if not (text.isascii() and text.isdigit()):
        raise CronError(expr, spec.name, f"step {text!r} is not a number")
    # A step larger than the field is accepted, as Debian cron accepts it: it runs at the
    # start value only ("*/100" in day-of-month is the 1st), which crontabs rely on (§2).
    step = int(text) if len(text) <= 4 else 10_000
    if step == 0:
        raise CronError(expr, spec.name, "step 0: a step must be at least 1")
    return step


def _day_word(expr: str, spec: _Field, item: str) -> str | None:
    """``item`` (upper case) if it is one of cronsim's calendar words for ``spec``'s field
    (``L``, ``LW``; ``5L``, ``1#2``, ``MON#2``), None if it has none of their marks.

    Written exactly as cronsim writes them, and refused otherwise with what is wrong: a
    word in a range or with a step, Quartz's ``15W``, ``L-3`` and ``FRIL``, ``#`` past 5.
    """
    marks = "LW" if spec is _DOM else "L#"
    if spec is _DOM and item.endswith("BD"):
        return _business_day_word(expr, item)
    if not any(mark in item for mark in marks):
        return None
    words = "'L' and 'LW'" if spec is _DOM else "'L' and '#'"
    if "-" in item:  # Quartz's "L-3" (three days before the last) included
        raise CronError(expr, spec.name, f"{item!r}: {words} cannot be part of a range")
    if "/" in item:
        raise CronError(expr, spec.name, f"{item!r}: {words} take no step")
    if spec is _DOM:
        if item in ("L", "LW"):
            return item
        if item.endswith("W"):
            raise CronError(
                expr,
                spec.name,
                f"{item!r}: 'W' (the weekday nearest a date) is not supported; "
                f"'LW' (the last weekday of the month) is",
            )
        raise CronError(
            expr,
            spec.name,
            f"cannot read {item!r}: the day-of-month field takes 'L' (the last day of the "
            f"month) and 'LW' (the last weekday of the month)",
        )
    day, hash_mark, nth = item.partition("#")
    if hash_mark:
        if not day:
            raise CronError(expr, spec.name, f"{item!r}: missing the day before '#'")
        _value(expr, spec, day)
        if not (nth.isascii() and nth.isdigit() and len(nth) <= 4 and 1 <= int(nth) <= 5):
            raise CronError(
                expr,
                spec.name,
                f"{item!r}: '#' takes 1-5 (the first to the fifth such day of the month)",
            )
        return item
    day = item.removesuffix("L")
    if day != item and day.isascii() and day.isdigit():
        _value(expr, spec, day)
        return item
    if day in _DAYS:  # cronsim takes "5L" but not "FRIL"
        number = _DAYS.index(day)
        raise CronError(
            expr, spec.name, f"{item!r}: write the day as a number before 'L' ('{number}L')"
        )
    raise CronError(
        expr,
        spec.name,
        f"cannot read {item!r}: the day-of-week field takes 'nL' (the last such day of the "
        f"month, '5L') and 'n#k' (the k-th, '1#2' or 'MON#2')",
    )


def _business_day_word(expr: str, item: str) -> str:
    """``nBD`` (the n-th business day of the month) or ``LBD`` (the last), checked."""
    nth = item.removesuffix("BD")
    if nth == "L" or (nth.isascii() and nth.isdigit() and 1 <= int(nth[:4]) <= MAX_NTH):
        return item
    raise CronError(
        expr,
        "day-of-month",
        f"cannot read {item!r}: business days are written 'nBD' (the n-th business day of "
        f"the month, 1-{MAX_NTH}) or 'LBD' (the last)",
    )


def _item(expr: str, spec: _Field, item: str) -> range | str:
    """One list item: ``*``, ``a``, ``a-b``, each with an optional ``/step``, or a
    calendar word of a day field (returned in upper case)."""
    if not item:
        raise CronError(expr, spec.name, "empty list item")
    if "?" in item:
        raise CronError(expr, spec.name, f"{item!r}: '?' is Quartz syntax, not cron (write '*')")
    if spec is _DOM or spec is _DOW:
        word = _day_word(expr, spec, item.upper())
        if word is not None:
            return word
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


@dataclass(frozen=True)
class _Read:
    """One field as read: its plain values, its calendar words (upper case) and whether a
    step overshoots the whole field (``*/100``: only its start value runs)."""

    values: frozenset[int]
    words: tuple[str, ...]
    overshoots: bool


def _read(expr: str, spec: _Field, text: str) -> _Read:
    values: set[int] = set()
    words: list[str] = []
    overshoots = False
    for item in text.split(","):
        read = _item(expr, spec, item)
        if isinstance(read, str):
            words.append(read)
        else:
            values.update(read)
            overshoots = overshoots or read.step > spec.high - spec.low + 1
    return _Read(frozenset(values), tuple(words), overshoots)


def _spelled(read: _Read, spec: _Field) -> str:
    """A field spelled as the values it stands for (``*/100,1-7`` in day-of-month is
    ``1-7``): cronsim's explain would say "every 100th day of month"."""
    values = {value % 7 for value in read.values} if spec is _DOW else read.values
    runs: list[list[int]] = []
    for value in sorted(values):
        if runs and value == runs[-1][1] + 1:
            runs[-1][1] = value
        else:
            runs.append([value, value])
    spans = [str(low) if low == high else f"{low}-{high}" for low, high in runs]
    return ",".join([*spans, *read.words])


def _check_occurs(expr: str, day_and: bool, days: _Read, months: frozenset[int]) -> None:
    """Refuse a day-of-month that exists in none of the months (static, so always fast).

    Only when the day-of-month must match: Debian cron ORs the two day fields when both
    are restricted, and then the day-of-week alone still occurs (every month has, over the
    years, each weekday, its last and its first to fifth: a 29-day February has a fifth).
    A (month, day) pair that exists occurs on every weekday over the years, so only a
    calendar word of the day-of-week can make it impossible otherwise
    (``_check_days_meet``); ``L`` and ``LW`` exist in every month.
    """
    if not day_and or days.words:
        return
    first_day = min(days.values)
    longest = max(_MONTH_DAYS[month - 1] for month in months)
    if first_day > longest:
        names = [_MONTH_LABELS[month - 1] for month in sorted(months)]
        where = names[0] if len(names) == 1 else ", ".join(names[:-1]) + " or " + names[-1]
        raise CronError(expr, "day-of-month", f"can never occur: no day {first_day} in {where}")


def _month_forms() -> dict[int, tuple[date, ...]]:
    """For each month, its 1st in one year of each form it takes: each weekday it can start
    on and, for February, both lengths. 2000-2027 holds all 14 kinds of year."""
    forms: dict[int, dict[tuple[int, int], date]] = {month: {} for month in range(1, 13)}
    for year in range(2000, 2028):
        for month in range(1, 13):
            first = date(year, month, 1)
            kind = (first.weekday(), calendar.monthrange(year, month)[1])
            forms[month].setdefault(kind, first)
    return {month: tuple(firsts.values()) for month, firsts in forms.items()}


_MONTH_FORMS = _month_forms()


def _check_days_meet(expr: str, fields: list[str], walk: CronSim) -> None:
    """Refuse day fields that must both match (one starts with ``*``) but never do, which
    the calendar words make possible: ``* * */20 * 1L`` wants a 1st or 21st that is the
    last Monday. cronsim would search 50 years on every call; this tries each form of each
    month with cronsim's own matching instead, ~2,800 days at most, so parse stays fast.
    Each form recurs within 40 years, inside cronsim's 50-year search.
    """
    for month in sorted(walk.months):
        for first in _MONTH_FORMS[month]:
            length = calendar.monthrange(first.year, month)[1]
            if any(walk.match_day(first + timedelta(days=n)) for n in range(length)):
                return
    raise CronError(
        expr,
        "day-of-week",
        f"can never occur: no day is both day-of-month {fields[-3]!r} and day-of-week "
        f"{fields[-1]!r} (with a field starting with '*', a day must match both)",
    )


@dataclass(frozen=True)
class _Reading:
    canonical: str  # for cronsim: single spaces, upper case
    described: tuple[str, ...]  # for cronsim's explain
    day_and: bool  # Debian's rule: a day must match both day fields
    words: bool  # a calendar word in a day field
    business: tuple[int, ...] = ()  # the nBD / LBD words (LAST for LBD), walked by us


def _canonical(expr: str, fields: list[str]) -> _Reading:
    """Validate every field; return the expression for cronsim and the one to describe.

    The described one works around cronsim's explain, which misses that under Debian's OR
    rule a day field covering every day ("1-31", "0-7") makes the other day field
    irrelevant, and which says what a step larger than its field means literally.
    """
    specs = _FIVE if len(fields) == 5 else _SIX
    reads = [_read(expr, spec, text) for spec, text in zip(specs, fields, strict=True)]
    days, months, weekdays = reads[-3], reads[-2], reads[-1]
    if any(word.endswith("BD") for word in days.words):
        return _business_reading(expr, fields, days)
    # Debian cron: a leading "*" in either day field (even "*/100") means AND.
    day_and = fields[-3].startswith("*") or fields[-1].startswith("*")
    _check_occurs(expr, day_and, days, months.values)
    upper = [text.upper() for text in fields]
    described = [
        _spelled(read, spec) if read.overshoots else text
        for read, spec, text in zip(reads, specs, upper, strict=True)
    ]
    if not day_and:
        every_date = len(days.values) == 31
        every_weekday = len({day % 7 for day in weekdays.values}) == 7
        if every_date or every_weekday:
            described[-3] = described[-1] = "*"
    return _Reading(" ".join(upper), tuple(described), day_and, bool(days.words or weekdays.words))


def _business_reading(expr: str, fields: list[str], days: _Read) -> _Reading:
    """A day-of-month of business-day words: cronsim walks every day (``*``) and the walk
    keeps the days the calendar names (``BusinessDays.matches``)."""
    if days.values or len(days.words) != sum(word.endswith("BD") for word in days.words):
        raise CronError(
            expr, "day-of-month", "business-day words ('1BD', 'LBD') cannot be mixed with days"
        )
    if fields[-1] != "*":
        raise CronError(
            expr, "day-of-week", "with business-day words in day-of-month, write '*' here"
        )
    business = tuple(LAST if word == "LBD" else int(word.removesuffix("BD")) for word in days.words)
    plain = [*fields[:-3], "*", *fields[-2:]]
    reading = _canonical(expr, plain)
    return dataclasses.replace(reading, business=tuple(sorted(set(business))))


@dataclass(frozen=True, order=True)
class CronExpr:
    """A validated cron expression in a time zone; build it with ``tickwork.cron.parse``.

    Equal, hashed and ordered by ``(expr, timezone, dst_gap, dst_repeat)``. Every method
    takes aware datetimes and returns aware UTC ones (``tzinfo=datetime.UTC``). The DST
    policy applies to fixed-time expressions (minute and hour fields not starting with
    ``*``); the others follow the clock as it really runs.
    """

    expr: str
    timezone: str = "UTC"
    dst_gap: DstGap = DstGap.SHIFT
    dst_repeat: DstRepeat = DstRepeat.FIRST
    #: the business days that ``nBD`` / ``LBD`` in day-of-month count (required with them)
    calendar: BusinessDays | None = None
    _walk: tuple[tuple[str, object], ...] = field(init=False, repr=False, compare=False)
    _explain: tuple[tuple[str, ...], bool] = field(init=False, repr=False, compare=False)
    _zone: tzinfo = field(init=False, repr=False, compare=False)
    _fixed: bool = field(init=False, repr=False, compare=False)
    _keep: Callable[[datetime], bool] | None = field(init=False, repr=False, compare=False)
    _business: tuple[int, ...] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        expr, fields = _split(self.expr)
        zone = load_zone(self.timezone)
        set_ = object.__setattr__
        set_(self, "dst_gap", _choice(DstGap, self.dst_gap, "dst_gap"))
        set_(self, "dst_repeat", _choice(DstRepeat, self.dst_repeat, "dst_repeat"))
        reading = _canonical(expr, fields)
        try:
            walk = CronSim(reading.canonical, _ANY_TIME)
        except CronSimError as exc:  # our checks are stricter; this is a safety net
            raise CronError(expr, "expression", str(exc)) from exc
        if reading.day_and and reading.words:
            _check_days_meet(expr, fields, walk)
        set_(self, "_business", reading.business)
        set_(self, "_keep", self._business_filter(expr, reading.business))
        set_(self, "_walk", tuple(walk.__dict__.items()))
        set_(self, "_explain", (reading.described, reading.day_and))
        set_(self, "_zone", zone)
        # Debian cron: a job whose minute and hour fields do not start with "*" runs at a
        # fixed local time and gets the special DST handling (_cron_walk.forward). cronsim
        # only does this for five fields; the contract says minute and hour, so six too.
        set_(self, "_fixed", not (fields[-5].startswith("*") or fields[-4].startswith("*")))

    def _business_filter(
        self, expr: str, words: tuple[int, ...]
    ) -> Callable[[datetime], bool] | None:
        """Which wall times the walk keeps: those on the business days ``words`` name."""
        if not words:
            return None
        days = self.calendar
        if days is None:
            raise CronError(
                expr,
                "day-of-month",
                "business-day words need a calendar: schedule it with calendar='NAME'",
            )
        most = days.most_in_a_month()
        if max(words) > most:  # the walk would look for it until year 9999
            raise CronError(
                expr,
                "day-of-month",
                f"never occurs: calendar {days.name!r} has at most {most} business days in a month",
            )
        return lambda wall: days.matches(wall.date(), words)

    def __repr__(self) -> str:
        policy = ""
        if self.dst_gap is not DstGap.SHIFT:
            policy += f", dst_gap={self.dst_gap.value!r}"
        if self.dst_repeat is not DstRepeat.FIRST:
            policy += f", dst_repeat={self.dst_repeat.value!r}"
        if self.calendar is not None:
            policy += f", calendar={self.calendar.name!r}"
        return f"CronExpr(expr={self.expr!r}, timezone={self.timezone!r}{policy})"

    @property
    def fixed_time(self) -> bool:
        """Whether the DST policy applies: minute and hour fields not starting with ``*``."""
        return self._fixed

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
                walk = start_walk(self._walk, end.replace(microsecond=0) + _ONE_SECOND, True)
                if self._keep is not None:
                    walk = filter(self._keep, walk)
            else:
                walk = reverse(
                    self._walk, self._zone, self._fixed, end, self.dst_gap, self.dst_repeat,
                    self._keep,
                )  # fmt: skip
            for occurrence in walk:
                return occurrence
        except OverflowError:  # walked past year 1 or 9999
            pass
        raise CronError(self.expr, "expression", f"no occurrence before {at.isoformat()}")

    def iter(self, after: datetime) -> Iterator[datetime]:
        """The occurrences strictly after ``after``, in order (ends only near year 9999)."""
        start = _aware_utc(after, "after")
        if self._zone is UTC:
            walk = utc_forward(self._walk, start)
            return walk if self._keep is None else filter(self._keep, walk)
        return forward(
            self._walk, self._zone, self._fixed, start, self.dst_gap, self.dst_repeat, self._keep
        )

    def explain(self) -> str:
        """The expression in English, e.g. "At 09:00 on Monday through Friday"."""
        described, day_and = self._explain
        expression = Expression(list(described))  # what CronSim.explain() builds
        # The AND/OR rule comes from the fields as written: a respelled field (_spelled)
        # may no longer start with "*".
        expression.day_and = day_and
        text: str = expression.explain()
        # cronsim says "the last day of every month"; "of the month" is how the other
        # words read ("on the last Friday of the month").
        text = text.replace("last day of every month", "last day of the month").replace(
            "last weekday of every month", "last weekday of the month"
        )
        if self._business and self.calendar is not None:
            # "every day" before the business days would say too much; the calendar's name
            # says whose business days they are.
            words = describe_days(self._business)
            text = text.removesuffix(" every day").removesuffix(",")
            text += f" on {words} of the month (calendar {self.calendar.name})"
        return text


def _choice(kind: type[DstGap] | type[DstRepeat], value: object, name: str) -> Any:
    if type(value) is kind:  # a member, as stored schedules pass: no lookup
        return value
    try:
        return kind(value)  # type: ignore[arg-type]  # a non-member raises ValueError
    except ValueError:
        allowed = ", ".join(repr(member.value) for member in kind)
        raise ConfigError(f"{name} must be one of {allowed}, not {value!r}") from None


@functools.lru_cache(maxsize=1024)
def _parse(
    expr: str, timezone: str, dst_gap: DstGap, dst_repeat: DstRepeat, days: BusinessDays | None
) -> CronExpr:
    return CronExpr(expr, timezone, dst_gap, dst_repeat, days)


def parse(
    expr: str,
    timezone: str = "UTC",
    *,
    dst_gap: DstGap | str = DstGap.SHIFT,
    dst_repeat: DstRepeat | str = DstRepeat.FIRST,
    calendar: BusinessDays | None = None,
) -> CronExpr:
    """Read ``expr`` as a cron expression in ``timezone`` (an IANA name), with a DST
    policy for fixed-time expressions (``dst_gap``: ``"shift"`` or ``"skip"``;
    ``dst_repeat``: ``"first"``, ``"last"`` or ``"both"``; the defaults are Debian
    cron's). ``calendar`` gives the business days that ``nBD`` and ``LBD`` count.

    Raises ``CronError`` (a ``ConfigError``) for a bad or never-occurring expression and
    ``ConfigError`` for an unknown zone or DST policy.
    """
    if not isinstance(expr, str):
        _split(expr)  # raises CronError naming the type
    if not isinstance(timezone, str):
        load_zone(timezone)  # raises ConfigError naming the value
    gap = _choice(DstGap, dst_gap, "dst_gap")
    repeat = _choice(DstRepeat, dst_repeat, "dst_repeat")
    return _parse(expr, timezone, gap, repeat, calendar)  # members hash as their values
