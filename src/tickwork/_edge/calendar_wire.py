"""JSON forms of business calendars, both ways: what ``tickwork calendars ... --json``
prints, the API answers and the Client reads back (DESIGN §3).

A calendar's ``holidays`` are the dates it lists (its ``to_json``); a calendar's
year (``calendar_year_to_wire``: ``calendars show --json``, ``GET /calendars/{name}?year=``)
is the calendar with ``holidays`` replaced by that year's, each with its name.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import date
from typing import Any

from .._values.holidays import Holiday
from .._values.models import CalendarInfo
from .._values.wire_values import from_json, to_json

__all__ = [
    "calendar_list_from_wire",
    "calendar_list_to_wire",
    "calendar_year_to_wire",
    "holidays_from_wire",
    "holidays_to_wire",
]


def calendar_list_to_wire(calendars: Sequence[CalendarInfo]) -> dict[str, Any]:
    return {"calendars": [to_json(calendar) for calendar in calendars]}


def calendar_list_from_wire(data: dict[str, Any]) -> list[CalendarInfo]:
    return [from_json(CalendarInfo, calendar) for calendar in data["calendars"]]


def holidays_to_wire(name: str, year: int, holidays: Sequence[Holiday]) -> dict[str, Any]:
    """A calendar's holidays of one year; a listed date's name is ``""``."""
    # by hand: the JSON says "date" where a Holiday says "day", and adds calendar and year
    return {
        "calendar": name,
        "year": year,
        "holidays": [{"date": h.day.isoformat(), "name": h.name} for h in holidays],
    }


def holidays_from_wire(data: dict[str, Any]) -> tuple[Holiday, ...]:
    return tuple(Holiday(date.fromisoformat(h["date"]), str(h["name"])) for h in data["holidays"])


def calendar_year_to_wire(
    calendar: CalendarInfo, year: int, holidays: Sequence[Holiday]
) -> dict[str, Any]:
    """The calendar, with ``holidays`` its holidays of ``year`` (listed and public)."""
    return {**to_json(calendar), **holidays_to_wire(calendar.name, year, holidays)}
