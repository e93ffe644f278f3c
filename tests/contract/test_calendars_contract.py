"""Business calendars in the store (migration 0016), on both backends: a calendar set,
replaced whole, listed by name and deleted; a country's public holidays stored per year,
kept as first stored, and dropped when the calendar is set again or deleted."""

from __future__ import annotations

from datetime import UTC, date, datetime

from tickwork._holidays import Holiday
from tickwork._models import CalendarInfo
from tickwork._store import Store

T0 = 1_767_225_600_000  # 2026-01-01T00:00Z


def uk(**changes: object) -> CalendarInfo:
    fields: dict[str, object] = {
        "name": "uk",
        "weekend": ("SAT", "SUN"),
        "holidays": (date(2026, 1, 2), date(2026, 12, 24)),
        "country": "GB",
        "subdivision": "ENG",
        "updated_at": datetime(2000, 1, 1, tzinfo=UTC),  # the store writes now_ms
    }
    fields.update(changes)
    return CalendarInfo(**fields)  # type: ignore[arg-type]


XMAS = (Holiday(date(2026, 12, 25), "Christmas Day"), Holiday(date(2026, 12, 28), "Boxing Day"))


def test_a_calendar_reads_back_as_set(store: Store) -> None:
    store.put_calendar(uk(), now_ms=T0)
    assert store.get_calendar("uk") == uk(updated_at=datetime(2026, 1, 1, tzinfo=UTC))
    assert store.get_calendar("us") is None


def test_setting_again_replaces_the_calendar_whole(store: Store) -> None:
    store.put_calendar(uk(), now_ms=T0)
    store.put_calendar(
        uk(weekend=("FRI", "SAT"), holidays=(), country=None, subdivision=None), now_ms=T0 + 1
    )
    found = store.get_calendar("uk")
    assert found is not None
    assert (found.weekend, found.holidays, found.country, found.subdivision) == (
        ("FRI", "SAT"), (), None, None,
    )  # fmt: skip
    assert found.updated_at == datetime(2026, 1, 1, 0, 0, 0, 1000, tzinfo=UTC)


def test_calendars_are_listed_by_name(store: Store) -> None:
    for name in ("uk", "de", "us-ny"):
        store.put_calendar(uk(name=name), now_ms=T0)
    assert [c.name for c in store.list_calendars()] == ["de", "uk", "us-ny"]


def test_delete_removes_the_calendar_and_its_years(store: Store) -> None:
    store.put_calendar(uk(), now_ms=T0)
    store.store_calendar_year("uk", 2026, XMAS)
    assert store.delete_calendar("uk") is True
    assert store.delete_calendar("uk") is False
    assert store.get_calendar("uk") is None and store.list_calendars() == []
    store.put_calendar(uk(), now_ms=T0)  # a new calendar of the name starts with no years
    assert store.calendar_year("uk", 2026) is None


def test_a_years_holidays_read_back_in_order(store: Store) -> None:
    store.put_calendar(uk(), now_ms=T0)
    assert store.calendar_year("uk", 2026) is None
    store.store_calendar_year("uk", 2026, XMAS)
    assert store.calendar_year("uk", 2026) == XMAS
    assert store.calendar_year("uk", 2027) is None


def test_a_stored_year_is_kept_as_first_stored(store: Store) -> None:
    store.put_calendar(uk(), now_ms=T0)
    store.store_calendar_year("uk", 2026, XMAS)
    store.store_calendar_year("uk", 2026, XMAS[:1])  # a second process, a moment later
    assert store.calendar_year("uk", 2026) == XMAS


def test_an_empty_year_is_stored_as_empty_not_missing(store: Store) -> None:
    store.put_calendar(uk(), now_ms=T0)
    store.store_calendar_year("uk", 2026, ())
    assert store.calendar_year("uk", 2026) == ()


def test_setting_a_calendar_again_drops_its_resolved_years(store: Store) -> None:
    store.put_calendar(uk(), now_ms=T0)
    store.store_calendar_year("uk", 2026, XMAS)
    store.put_calendar(uk(subdivision="SCT"), now_ms=T0 + 1)  # other public holidays
    assert store.calendar_year("uk", 2026) is None


def test_stamps_say_each_calendars_last_change_and_forget_a_deleted_one(store: Store) -> None:
    """What the firing loop reads each pass to see a calendar change cheaply."""
    assert store.calendar_stamps() == {}
    store.put_calendar(uk(), now_ms=T0)
    store.put_calendar(uk(name="de"), now_ms=T0 + 5)
    assert store.calendar_stamps() == {"uk": T0, "de": T0 + 5}
    store.put_calendar(uk(holidays=()), now_ms=T0 + 9)
    store.delete_calendar("de")
    assert store.calendar_stamps() == {"uk": T0 + 9}
