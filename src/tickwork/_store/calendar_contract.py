"""The business calendars part of the store contract (``store.calendars``, migration
0016). ``sql_calendars.py`` implements it on both backends.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from .._values.holidays import Holiday
from .._values.models import (
    CalendarInfo,
)

__all__ = ["CalendarStore"]


class CalendarStore(Protocol):
    """Business calendars and their resolved years of public holidays."""

    def put_calendar(self, calendar: CalendarInfo, *, now_ms: int) -> None:
        """Store ``calendar`` (its ``updated_at`` is ``now_ms``), replacing the one with its
        name whole, and drop that name's resolved years (its country may have changed)."""
        ...

    def get_calendar(self, name: str) -> CalendarInfo | None:
        """The calendar with this name, or None."""
        ...

    def list_calendars(self) -> list[CalendarInfo]:
        """Every calendar, by name."""
        ...

    def delete_calendar(self, name: str) -> bool:
        """Delete the calendar and its resolved years; False when there is none.
        ``CalendarInUse`` (naming their keys, sorted), deleting nothing, while schedules
        use it: checked and deleted in one transaction, under a lock on the calendar's row
        that a registration naming the calendar holds shared (``upsert_schedule(s)``
        refuses with ``ConfigError`` a calendar not stored, in its own transaction), so
        that neither can slip between the other's check and write."""
        ...

    def store_calendar_year(self, name: str, year: int, holidays: Sequence[Holiday]) -> None:
        """Store a calendar's public holidays of ``year``; a year already stored is kept
        (two processes resolving it at once store it once)."""
        ...

    def calendar_year(self, name: str, year: int) -> tuple[Holiday, ...] | None:
        """A calendar's stored public holidays of ``year`` in date order; None when that
        year is not stored."""
        ...

    def calendar_stamps(self) -> dict[str, int]:
        """Every calendar's name and ``updated_at`` (epoch ms): one small read, so that
        the firing loop sees a change without reading the calendars' dates again."""
        ...
