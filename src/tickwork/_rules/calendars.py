"""A business calendar as a person declares it (DESIGN §3), checked once: its name, its
weekend, the dates it lists and the country whose public holidays it adds.

Pure: it turns ``engine.calendar(...)``'s arguments into a ``CalendarInfo`` or refuses
them with a ``ConfigError`` before anything is stored.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from datetime import UTC, date, datetime
from typing import TypeGuard

from .._values.business_days import WEEKDAY_NAMES, BusinessDays
from .._values.holidays import Holiday, check_source
from .._values.models import CalendarInfo
from ..errors import ConfigError

__all__ = [
    "MAX_LISTED",
    "Calendar",
    "business_days",
    "days_for_preview",
    "declared_calendar",
    "declared_calendars",
    "is_calendar_name",
    "unknown_calendar",
]

#: the most dates one calendar lists by hand
MAX_LISTED = 10_000
#: a preview reads a country's public holidays up to this many years after its start
PREVIEW_YEARS = 3
_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,99}")


def declared_calendar(
    name: object,
    *,
    holidays: object,
    weekend: object,
    country: object,
    subdivision: object,
    now: datetime,
) -> CalendarInfo:
    """``engine.calendar``'s arguments, checked: the weekend as day names in week order,
    the listed dates sorted without repeats. A country is checked against the ``holidays``
    package (a ``ConfigError`` naming the extra when it is not installed)."""
    if not is_calendar_name(name):
        raise ConfigError(
            f"Bad calendar name {name!r}: 1-100 letters, digits, '_', '.' or '-', "
            "starting with a letter or digit"
        )
    if isinstance(weekend, str) or not isinstance(weekend, Iterable):
        raise ConfigError(f"Bad weekend {weekend!r}: expected day names, e.g. ('SAT', 'SUN')")
    days = BusinessDays(name, weekend=BusinessDays.weekend_from_names(list(weekend))).weekend
    if country is None and subdivision is not None:
        raise ConfigError(f"subdivision={subdivision!r} needs a country, e.g. country='GB'")
    if country is not None:
        check_source(country, subdivision)
    return CalendarInfo(
        name=name,
        weekend=tuple(WEEKDAY_NAMES[day] for day in sorted(days)),
        holidays=_listed(holidays),
        country=None if country is None else str(country),
        subdivision=None if subdivision is None else str(subdivision),
        updated_at=now,
    )


@dataclass(frozen=True, init=False)
class Calendar:
    """A business calendar declared in code: ``Engine(calendars=[Calendar("uk",
    country="GB"), Calendar("office", holidays=["2026-12-24"])])``. It takes
    ``engine.calendar``'s parameters and checks them when it is built (``ConfigError``),
    so a bad one fails at import, as a bad ``Cron`` does; a ``country`` needs the
    ``holidays`` extra there too (the error names it). Workers store it at start-up,
    before the schedules that use it (``engine.sync_calendars()``)."""

    name: str
    holidays: tuple[date, ...]
    country: str | None
    subdivision: str | None
    weekend: tuple[str, ...]

    def __init__(
        self,
        name: str,
        *,
        holidays: Iterable[date | str] = (),
        country: str | None = None,
        subdivision: str | None = None,
        weekend: Iterable[str] = ("SAT", "SUN"),
    ) -> None:
        checked = declared_calendar(
            name, holidays=holidays, weekend=weekend, country=country,
            subdivision=subdivision, now=_UNSTORED,
        )  # fmt: skip
        set_ = object.__setattr__
        set_(self, "name", checked.name)
        set_(self, "holidays", checked.holidays)
        set_(self, "country", checked.country)
        set_(self, "subdivision", checked.subdivision)
        set_(self, "weekend", checked.weekend)

    def stored_as(self, stored: CalendarInfo | None) -> bool:
        """Whether ``stored`` is this calendar as declared (then a sync leaves it, and its
        resolved years, alone)."""
        return stored is not None and (
            stored.holidays,
            stored.country,
            stored.subdivision,
            stored.weekend,
        ) == (self.holidays, self.country, self.subdivision, self.weekend)


#: a declared calendar's ``updated_at`` before it is stored: never read
_UNSTORED = datetime(1970, 1, 1, tzinfo=UTC)


def declared_calendars(items: object) -> tuple[Calendar, ...]:
    """``Engine(calendars=...)``, checked: ``Calendar`` values, each name once."""
    if items is None:
        return ()
    if isinstance(items, str | bytes | Calendar) or not isinstance(items, Sequence):
        raise ConfigError(f"calendars= takes a list of tickwork.Calendar(...), not {items!r}")
    names: set[str] = set()
    for item in items:
        if not isinstance(item, Calendar):
            raise ConfigError(f"calendars= takes tickwork.Calendar(...) values, not {item!r}")
        if item.name in names:
            raise ConfigError(f"calendars= declares the calendar {item.name!r} twice")
        names.add(item.name)
    return tuple(items)


def is_calendar_name(name: object) -> TypeGuard[str]:
    """Whether a calendar may be called ``name``."""
    return isinstance(name, str) and _NAME.fullmatch(name) is not None


def unknown_calendar(name: object) -> ConfigError:
    """The error for a calendar that is not stored, saying how to store it."""
    return ConfigError(f"No calendar {name!r}: set it with engine.calendar({name!r}, ...)")


def business_days(calendar: CalendarInfo, public: Iterable[Holiday] = ()) -> BusinessDays:
    """The days ``calendar`` works: its weekend and listed dates off, and ``public``
    holidays (its country's, as stored for the years wanted)."""
    dates = set(calendar.holidays)
    dates.update(holiday.day for holiday in public)
    weekend = BusinessDays.weekend_from_names(list(calendar.weekend))
    return BusinessDays(calendar.name, frozenset(dates), weekend)


def days_for_preview(
    name: str,
    calendar: CalendarInfo | None,
    holidays_of: Callable[[str, int], Iterable[Holiday]],
    after: datetime,
) -> BusinessDays:
    """The days of the stored ``calendar`` (looked up by ``name``; ``ConfigError`` when
    there is none) that a preview after ``after`` decides with: its weekend, its listed
    dates, and its public holidays (``holidays_of(name, year)``, i.e.
    ``engine.calendar_holidays``) from the year before ``after`` to two years after. A
    year never resolved where the extra is missing is left out, as a worker decides."""
    if calendar is None:
        raise unknown_calendar(name)
    public: list[Holiday] = []
    for year in range(after.year - 1, after.year + PREVIEW_YEARS):
        try:
            public.extend(holidays_of(name, year))
        except ConfigError:  # never resolved, and no extra here: the stored years decide
            continue
    return business_days(calendar, public)


def _listed(holidays: object) -> tuple[date, ...]:
    if isinstance(holidays, str | bytes) or not isinstance(holidays, Iterable):
        raise ConfigError(f"Bad holidays {holidays!r}: expected dates, e.g. ['2025-12-25']")
    found = set()
    for item in holidays:
        found.add(_day(item))
        if len(found) > MAX_LISTED:
            raise ConfigError(f"Too many holidays: a calendar lists at most {MAX_LISTED}")
    return tuple(sorted(found))


def _day(item: object) -> date:
    if isinstance(item, datetime):  # a datetime is a date too, but its time would be lost
        raise ConfigError(f"Bad holiday {item!r}: expected a date, not a datetime")
    if isinstance(item, date):
        return item
    if isinstance(item, str):
        try:
            return date.fromisoformat(item)
        except ValueError:
            pass
    raise ConfigError(f"Bad holiday {item!r}: expected a date or 'YYYY-MM-DD'")
