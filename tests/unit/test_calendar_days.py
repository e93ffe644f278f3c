"""The firing loop's view of the stored calendars (``_calendar_days.CalendarDays``): one
small read of every calendar's ``updated_at`` a pass, a calendar's dates read again only
when it changed (or a year not held yet is wanted), a deleted one forgotten."""

from __future__ import annotations

from datetime import UTC, date, datetime
from types import SimpleNamespace
from typing import Any

from tickwork._services.calendar_days import CalendarDays
from tickwork._values.holidays import Holiday
from tickwork._values.models import CalendarInfo


class CountingStore:
    """The three reads ``CalendarDays`` makes of ``store.calendars``, counted."""

    def __init__(self) -> None:
        self.calendars: dict[str, CalendarInfo] = {}
        self.years: dict[tuple[str, int], tuple[Holiday, ...]] = {}
        self.reads: list[str] = []

    def set(self, name: str, holidays: tuple[date, ...], stamp_ms: int) -> None:
        updated = datetime.fromtimestamp(stamp_ms / 1000, tz=UTC)
        self.calendars[name] = CalendarInfo(name, ("SAT", "SUN"), holidays, "GB", None, updated)

    def calendar_stamps(self) -> dict[str, int]:
        return {n: int(c.updated_at.timestamp() * 1000) for n, c in self.calendars.items()}

    def get_calendar(self, name: str) -> CalendarInfo | None:
        self.reads.append(name)
        return self.calendars.get(name)

    def calendar_year(self, name: str, year: int) -> tuple[Holiday, ...] | None:
        self.reads.append(f"{name}:{year}")
        return self.years.get((name, year), ())


def test_dates_are_read_again_only_when_a_calendar_changes_or_a_year_is_missing() -> None:
    store = CountingStore()
    store.set("uk", (date(2026, 12, 24),), 1000)
    store.years[("uk", 2026)] = (Holiday(date(2026, 12, 25), "Christmas Day"),)
    days = CalendarDays(lambda: SimpleNamespace(calendars=store))  # type: ignore[arg-type, return-value]
    first = days.current([2026])
    assert store.reads == ["uk", "uk:2026"]
    assert first["uk"].holidays == {date(2026, 12, 24), date(2026, 12, 25)}
    assert days.current([2026]) == first
    assert store.reads == ["uk", "uk:2026"]  # unchanged: nothing read but the stamps
    days.current([2026, 2027])
    assert store.reads[2:] == ["uk", "uk:2026", "uk:2027"]  # a year more
    store.set("uk", (), 2000)
    changed = days.current([2026])
    assert store.reads[5:] == ["uk", "uk:2026"]  # changed: read afresh
    assert changed["uk"].holidays == {date(2026, 12, 25)}
    del store.calendars["uk"]
    assert days.current([2026]) == {}


def test_one_reads_a_calendar_now_and_says_none_for_an_unknown_one() -> None:
    store = CountingStore()
    days = CalendarDays(lambda: SimpleNamespace(calendars=store))  # type: ignore[arg-type, return-value]
    assert days.one("nope", [2026]) is None
    store.set("uk", (), 1000)
    found: Any = days.one("uk", [2026])
    assert found is not None and found.name == "uk" and found.weekend == {5, 6}
