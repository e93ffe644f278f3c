"""Stored calendars as the firing rules read them: ``BusinessDays`` by name, kept fresh.

A schedule with ``calendar=`` is decided against the calendar as it stands when each
occurrence is decided (DESIGN §3: a change applies to occurrences not yet decided). The
firing loop reads every calendar's ``updated_at`` once per pass (one small query) and reads
a calendar's dates again only when that changed, never per occurrence. A country
calendar's public holidays are its stored years (resolved and stored on first need, which
takes the ``holidays`` extra; a process without it decides with the years stored).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from .._rules.calendars import business_days
from .._store import Store
from .._values.business_days import BusinessDays
from .._values.clock import to_ms
from .._values.holidays import Holiday, public_holidays
from .._values.models import CalendarInfo
from ..errors import ConfigError

__all__ = ["CalendarDays"]


@dataclass(frozen=True, slots=True)
class _Known:
    stamp: int
    years: frozenset[int]
    days: BusinessDays


class CalendarDays:
    """The stored calendars' days, read again only when a calendar changes."""

    __slots__ = ("_known", "_lock", "_store")

    def __init__(self, store: Callable[[], Store]) -> None:
        self._store = store
        self._known: dict[str, _Known] = {}
        # The worker's tick and the API's triggers and backfills read it from their threads.
        self._lock = threading.Lock()

    def current(self, years: Iterable[int]) -> dict[str, BusinessDays]:
        """Every stored calendar's days, holding its public holidays of ``years``."""
        with self._lock:
            return self._current(frozenset(years))

    def _current(self, wanted: frozenset[int]) -> dict[str, BusinessDays]:
        store = self._store()
        stamps = store.calendars.calendar_stamps()
        for name in set(self._known) - set(stamps):
            del self._known[name]  # deleted
        for name, stamp in stamps.items():
            known = self._known.get(name)
            years = wanted
            if known is not None and known.stamp == stamp:
                if wanted <= known.years:
                    continue  # unchanged, and holding the years wanted
                years = wanted | known.years
            loaded = self._load(store, name, years)
            if loaded is not None:
                self._known[name] = loaded
        return {name: known.days for name, known in self._known.items()}

    def one(self, name: str, years: Iterable[int]) -> BusinessDays | None:
        """One calendar's days (None: no such calendar), read now."""
        store = self._store()
        loaded = self._load(store, name, frozenset(years))
        return None if loaded is None else loaded.days

    @staticmethod
    def _load(store: Store, name: str, years: frozenset[int]) -> _Known | None:
        calendar = store.calendars.get_calendar(name)
        if calendar is None:
            return None
        public: list[Holiday] = []
        if calendar.country is not None:
            for year in sorted(years):
                public.extend(_public_year(store, calendar, year))
        stamp = to_ms(calendar.updated_at)
        return _Known(stamp, years, business_days(calendar, public))


def _public_year(store: Store, calendar: CalendarInfo, year: int) -> tuple[Holiday, ...]:
    """A country calendar's public holidays of ``year``: stored, or resolved and stored
    (nothing when the ``holidays`` extra is missing here: the listed dates still count)."""
    stored = store.calendars.calendar_year(calendar.name, year)
    if stored is not None:
        return stored
    assert calendar.country is not None
    try:
        found = public_holidays(calendar.country, calendar.subdivision, year)
    except ConfigError:
        return ()
    store.calendars.store_calendar_year(calendar.name, year, found)
    return found
