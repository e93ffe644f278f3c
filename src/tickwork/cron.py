"""Cron expressions with Debian cron's syntax and semantics, in any IANA time zone.

``parse(expr, timezone)`` returns a ``CronExpr`` with ``next``, ``prev``, ``iter`` and
``explain``. The work is split three ways:

- this module reads the expression itself, so that a bad one is refused with a message
  naming the field and the reason (``CronError``), including expressions that can never
  occur; the check is static reasoning over the day and month sets, never a search, so no
  input can make ``parse`` slow;
- cronsim walks the calendar. In a time zone other than UTC it walks *wall-clock* time,
  which is what Debian cron matches the fields against; the expression is parsed by
  cronsim once per ``CronExpr`` and the parsed walk copied for each start, with a
  cheaper tick (``tickwork._cron_walk``);
- this module turns wall-clock times into instants, following Debian cron across DST
  changes as cronsim documents it (``tickwork._cron_walk``).

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
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta, tzinfo
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from cronsim import CronSim, CronSimError

from ._cron_walk import forward, reverse, start_walk, utc_forward
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
        # fixed local time and gets the special DST handling (_cron_walk.forward). cronsim
        # only does this for five fields; the contract says minute and hour, so six too.
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
                walk = start_walk(self._walk, end.replace(microsecond=0) + _ONE_SECOND, True)
            else:
                walk = reverse(self._walk, self._zone, self._fixed, end)
            for occurrence in walk:
                return occurrence
        except OverflowError:  # walked past year 1 or 9999
            pass
        raise CronError(self.expr, "expression", f"no occurrence before {at.isoformat()}")

    def iter(self, after: datetime) -> Iterator[datetime]:
        """The occurrences strictly after ``after``, in order (ends only near year 9999)."""
        start = _aware_utc(after, "after")
        if self._zone is UTC:
            return utc_forward(self._walk, start)
        return forward(self._walk, self._zone, self._fixed, start)

    def explain(self) -> str:
        """The expression in English, e.g. "At 09:00 on Monday through Friday"."""
        text: str = CronSim(self._explain, _ANY_TIME).explain()
        return text


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
