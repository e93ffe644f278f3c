"""Business days: which dates a business calendar works, and the day words over them.

A calendar as the cron walk and the firing rules see it: a frozen set of holiday dates and
the weekdays of its weekend. Where the dates come from (listed by a person, resolved from
the ``holidays`` package year by year and stored) is the store's and the engine's concern;
here there is no I/O, so every decision is table-tested on plain values.

Why by hand: the ``holidays`` package knows public holidays but not business-day
arithmetic over a calendar of one's own; pandas' ``CustomBusinessDay`` does, at the cost
of pandas as a dependency of a scheduler. The rules are a few lines over ``date``.
"""

from __future__ import annotations

import calendar as _calendar
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta, tzinfo

from ..errors import ConfigError
from .models import OnHoliday

__all__ = ["LAST", "BusinessDays", "describe_days", "on_business_day"]

#: the day word ``LBD``: the last business day of the month
LAST = -1
#: the most business days a day word counts (``23BD``: no month has more)
MAX_NTH = 23
#: how far to look for a business day before or after a date before giving up (a
#: calendar with a run of holidays longer than this has no business day to move to)
SEARCH_DAYS = 366
_ONE_DAY = timedelta(days=1)
WEEKDAY_NAMES = ("MON", "TUE", "WED", "THU", "FRI", "SAT", "SUN")  # date.weekday() order


@dataclass(frozen=True, order=True)
class BusinessDays:
    """The days a calendar works: every day but its weekend and its holidays."""

    name: str
    holidays: frozenset[date] = frozenset()
    weekend: frozenset[int] = frozenset({5, 6})  # date.weekday(): Saturday and Sunday

    def __post_init__(self) -> None:
        if not self.weekend <= frozenset(range(7)):
            raise ConfigError(f"weekend days must be 0-6 (Monday-Sunday), not {self.weekend}")
        if len(self.weekend) == 7:
            raise ConfigError("a weekend of all seven days leaves no business day")

    @classmethod
    def weekend_from_names(cls, names: tuple[str, ...] | list[str]) -> frozenset[int]:
        """``("SAT", "SUN")`` as weekday numbers; a name not a weekday is refused."""
        days = set()
        for name in names:
            upper = str(name).upper()[:3]
            if upper not in WEEKDAY_NAMES or len(str(name)) < 3:
                known = ", ".join(WEEKDAY_NAMES)
                raise ConfigError(f"weekend: {name!r} is not a day of the week ({known})")
            days.add(WEEKDAY_NAMES.index(upper))
        return frozenset(days)

    def is_business_day(self, day: date) -> bool:
        return day.weekday() not in self.weekend and day not in self.holidays

    def next_business_day(self, day: date) -> date | None:
        """The first business day strictly after ``day`` (None past the search bound)."""
        return self._search(day, _ONE_DAY)

    def previous_business_day(self, day: date) -> date | None:
        """The last business day strictly before ``day`` (None past the search bound)."""
        return self._search(day, -_ONE_DAY)

    def _search(self, day: date, step: timedelta) -> date | None:
        try:
            for _ in range(SEARCH_DAYS):
                day += step
                if self.is_business_day(day):
                    return day
        except OverflowError:  # walked past year 1 or 9999
            return None
        return None

    def most_in_a_month(self) -> int:
        """The most business days a month can hold (a 31-day month: four weeks and three
        days), holidays aside: they are finite, so some month holds this many."""
        working = 7 - len(self.weekend)
        return 4 * working + min(3, working)

    def business_days_in(self, year: int, month: int) -> list[date]:
        length = _calendar.monthrange(year, month)[1]
        days = (date(year, month, number) for number in range(1, length + 1))
        return [day for day in days if self.is_business_day(day)]

    def matches(self, day: date, words: tuple[int, ...]) -> bool:
        """Whether ``day`` is one of the month's business days that ``words`` name:
        ``n`` the n-th (1-based), ``LAST`` the last."""
        if not self.is_business_day(day):
            return False
        ordinal = 1 + sum(
            self.is_business_day(day.replace(day=number)) for number in range(1, day.day)
        )
        if ordinal in words:
            return True
        return LAST in words and self._next_in_month(day) is None

    def _next_in_month(self, day: date) -> date | None:
        length = _calendar.monthrange(day.year, day.month)[1]
        for number in range(day.day + 1, length + 1):
            later = day.replace(day=number)
            if self.is_business_day(later):
                return later
        return None


def on_business_day(
    instant: datetime, zone: tzinfo, days: BusinessDays, on_holiday: OnHoliday
) -> datetime | None:
    """Where an occurrence at ``instant`` runs under ``on_holiday``: itself on a business
    day (in ``zone``'s local date); on a day off, None for ``SKIP``, else the same local
    time on the next or previous business day (None if there is none within a year).

    A local time that the target day's DST change skips is read with the offset before the
    change (zoneinfo's ``fold=0``), so it runs as much later as the gap is long.
    """
    local = instant.astimezone(zone)
    if days.is_business_day(local.date()):
        return instant
    if on_holiday is OnHoliday.SKIP:
        return None
    if on_holiday is OnHoliday.NEXT:
        target = days.next_business_day(local.date())
    else:
        target = days.previous_business_day(local.date())
    if target is None:
        return None
    moved = datetime.combine(target, local.time().replace(tzinfo=None), tzinfo=zone)
    return moved.astimezone(UTC)


def describe_days(words: tuple[int, ...]) -> str:
    """``(1, LAST)`` as "the 1st and last business days"."""
    names = [_ordinal(word) for word in sorted(w for w in words if w != LAST)]
    if LAST in words:
        names.append("last")
    joined = names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]
    return f"the {joined} business day{'s' if len(names) > 1 else ''}"


def _ordinal(number: int) -> str:
    suffix = "th" if 10 <= number % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(number % 10)
    return f"{number}{suffix or 'th'}"
