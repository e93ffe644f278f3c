"""Business calendars' operations (DESIGN §3): set, read, list, delete, and a year's
holidays, resolving a country's public holidays once per year and storing them.

Resolving needs the ``holidays`` extra; a stored year does not. Setting a country
calendar resolves this year and the next right away, so workers without the extra
decide the same way from the start.
"""

from __future__ import annotations

from collections.abc import Sequence

from .._rules.calendars import Calendar, declared_calendar, unknown_calendar
from .._runtime.core import Runtime
from .._store import Store
from .._values import clock as _clock
from .._values.holidays import Holiday, check_year, public_holidays
from .._values.models import CalendarInfo

__all__ = ["Calendars"]


class Calendars:
    """The calendar operations of one engine, over its store."""

    __slots__ = ("_runtime",)

    def __init__(self, runtime: Runtime) -> None:
        self._runtime = runtime

    @property
    def _store(self) -> Store:
        # Read when used: the engine opens its store (creating a SQLite file) on first use.
        return self._runtime.store

    @property
    def _clock(self) -> _clock.Clock:
        return self._runtime.clock

    def set(
        self,
        name: str,
        *,
        holidays: object,
        weekend: object,
        country: object,
        subdivision: object,
    ) -> CalendarInfo:
        now = self._clock.now()
        declared = declared_calendar(
            name, holidays=holidays, weekend=weekend, country=country,
            subdivision=subdivision, now=now,
        )  # fmt: skip
        # Resolved before anything is stored: a failure stores nothing.
        years = {}
        if declared.country is not None:
            for year in (now.year, now.year + 1):
                years[year] = public_holidays(declared.country, declared.subdivision, year)
        now_ms = _clock.to_ms(now)
        self._store.calendars.put_calendar(declared, now_ms=now_ms)
        for year, found in years.items():
            self._store.calendars.store_calendar_year(declared.name, year, found)
        stored = self._store.calendars.get_calendar(declared.name)
        assert stored is not None  # just written; a calendar is never deleted by tickwork
        return stored

    def sync(self, declared: Sequence[Calendar]) -> list[str]:
        """Store each declared calendar that is not stored as declared; every one's name.
        One stored as declared is left alone: its resolved years are kept and the firing
        loops do not read it again (a set would drop both)."""
        for calendar in declared:
            if not calendar.stored_as(self._store.calendars.get_calendar(calendar.name)):
                self.set(
                    calendar.name, holidays=calendar.holidays, weekend=calendar.weekend,
                    country=calendar.country, subdivision=calendar.subdivision,
                )  # fmt: skip
        return [calendar.name for calendar in declared]

    def get(self, name: str) -> CalendarInfo | None:
        return self._store.calendars.get_calendar(name)

    def list(self) -> list[CalendarInfo]:
        return self._store.calendars.list_calendars()

    def delete(self, name: str) -> bool:
        """Delete the calendar; ``CalendarInUse`` naming the schedules that use it (they
        would lose the holidays they skip or move), False when there is none. The store
        checks and deletes in one transaction."""
        return self._store.calendars.delete_calendar(name)

    def holidays(self, name: str, year: int) -> tuple[Holiday, ...]:
        """The calendar's holidays of ``year`` in date order: its listed dates (named
        ``""``) and its country's public holidays (stored, or resolved and stored now)."""
        check_year(year)
        calendar = self._store.calendars.get_calendar(name)
        if calendar is None:
            raise unknown_calendar(name)
        public: tuple[Holiday, ...] = ()
        if calendar.country is not None:
            stored = self._store.calendars.calendar_year(name, year)
            if stored is None:
                found = public_holidays(calendar.country, calendar.subdivision, year)
                self._store.calendars.store_calendar_year(name, year, found)
                stored = self._store.calendars.calendar_year(
                    name, year
                )  # another process's, if first
            public = stored or ()
        named = {holiday.day for holiday in public}
        listed = (Holiday(day, "") for day in calendar.holidays if day.year == year)
        return tuple(sorted([*public, *(h for h in listed if h.day not in named)]))
