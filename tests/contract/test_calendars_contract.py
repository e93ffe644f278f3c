"""Business calendars in the store (migration 0016), on both backends: a calendar set,
replaced whole, listed by name and deleted; a country's public holidays stored per year,
kept as first stored, and dropped when the calendar is set again or deleted. A calendar
that schedules use is not deleted (checked and deleted in one transaction), and a
registration naming a calendar not stored is refused, also while a delete is under way."""

from __future__ import annotations

import threading
from datetime import UTC, date, datetime

import pytest
from tests.pg import fresh_schema

from tickwork._store import ScheduleRecord, Store, open_store
from tickwork._values.holidays import Holiday
from tickwork._values.models import CalendarInfo, Overlap
from tickwork.errors import CalendarInUse, ConfigError

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
    store.calendars.put_calendar(uk(), now_ms=T0)
    assert store.calendars.get_calendar("uk") == uk(updated_at=datetime(2026, 1, 1, tzinfo=UTC))
    assert store.calendars.get_calendar("us") is None


def test_setting_again_replaces_the_calendar_whole(store: Store) -> None:
    store.calendars.put_calendar(uk(), now_ms=T0)
    store.calendars.put_calendar(
        uk(weekend=("FRI", "SAT"), holidays=(), country=None, subdivision=None), now_ms=T0 + 1
    )
    found = store.calendars.get_calendar("uk")
    assert found is not None
    assert (found.weekend, found.holidays, found.country, found.subdivision) == (
        ("FRI", "SAT"), (), None, None,
    )  # fmt: skip
    assert found.updated_at == datetime(2026, 1, 1, 0, 0, 0, 1000, tzinfo=UTC)


def test_calendars_are_listed_by_name(store: Store) -> None:
    for name in ("uk", "de", "us-ny"):
        store.calendars.put_calendar(uk(name=name), now_ms=T0)
    assert [c.name for c in store.calendars.list_calendars()] == ["de", "uk", "us-ny"]


def test_delete_removes_the_calendar_and_its_years(store: Store) -> None:
    store.calendars.put_calendar(uk(), now_ms=T0)
    store.calendars.store_calendar_year("uk", 2026, XMAS)
    assert store.calendars.delete_calendar("uk") is True
    assert store.calendars.delete_calendar("uk") is False
    assert store.calendars.get_calendar("uk") is None and store.calendars.list_calendars() == []
    store.calendars.put_calendar(uk(), now_ms=T0)  # a new calendar of the name starts with no years
    assert store.calendars.calendar_year("uk", 2026) is None


def test_a_years_holidays_read_back_in_order(store: Store) -> None:
    store.calendars.put_calendar(uk(), now_ms=T0)
    assert store.calendars.calendar_year("uk", 2026) is None
    store.calendars.store_calendar_year("uk", 2026, XMAS)
    assert store.calendars.calendar_year("uk", 2026) == XMAS
    assert store.calendars.calendar_year("uk", 2027) is None


def test_a_stored_year_is_kept_as_first_stored(store: Store) -> None:
    store.calendars.put_calendar(uk(), now_ms=T0)
    store.calendars.store_calendar_year("uk", 2026, XMAS)
    store.calendars.store_calendar_year("uk", 2026, XMAS[:1])  # a second process, a moment later
    assert store.calendars.calendar_year("uk", 2026) == XMAS


def test_an_empty_year_is_stored_as_empty_not_missing(store: Store) -> None:
    store.calendars.put_calendar(uk(), now_ms=T0)
    store.calendars.store_calendar_year("uk", 2026, ())
    assert store.calendars.calendar_year("uk", 2026) == ()


def test_setting_a_calendar_again_drops_its_resolved_years(store: Store) -> None:
    store.calendars.put_calendar(uk(), now_ms=T0)
    store.calendars.store_calendar_year("uk", 2026, XMAS)
    store.calendars.put_calendar(uk(subdivision="SCT"), now_ms=T0 + 1)  # other public holidays
    assert store.calendars.calendar_year("uk", 2026) is None


def test_stamps_say_each_calendars_last_change_and_forget_a_deleted_one(store: Store) -> None:
    """What the firing loop reads each pass to see a calendar change cheaply."""
    assert store.calendars.calendar_stamps() == {}
    store.calendars.put_calendar(uk(), now_ms=T0)
    store.calendars.put_calendar(uk(name="de"), now_ms=T0 + 5)
    assert store.calendars.calendar_stamps() == {"uk": T0, "de": T0 + 5}
    store.calendars.put_calendar(uk(holidays=()), now_ms=T0 + 9)
    store.calendars.delete_calendar("de")
    assert store.calendars.calendar_stamps() == {"uk": T0 + 9}


# -- a calendar in use ---------------------------------------------------------------------


def schedule_using(calendar: str, key: str = "k") -> ScheduleRecord:
    return ScheduleRecord(
        key=key, workflow="wf", version="1", input_json=None, cron="0 9 * * *",
        every_ms=None, timezone="UTC", overlap=Overlap.ALLOW, catchup=1,
        catchup_window_ms=None, jitter_ms=None, pool="default", priority=0, retry_json=None,
        start_ms=None, end_ms=None, definition=key, calendar=calendar,
    )  # fmt: skip


def test_a_calendar_in_use_is_not_deleted_and_the_error_names_its_users(store: Store) -> None:
    store.calendars.put_calendar(uk(), now_ms=T0)
    store.calendars.store_calendar_year("uk", 2026, XMAS)
    for key in ("b", "a"):
        store.schedules.upsert_schedule(schedule_using("uk", key), now_ms=T0, on_conflict="update",
                              paused=None)  # fmt: skip
    with pytest.raises(CalendarInUse) as raised:
        store.calendars.delete_calendar("uk")
    assert (raised.value.calendar, raised.value.schedules) == ("uk", ("a", "b"))
    assert store.calendars.get_calendar("uk") is not None  # nothing deleted, its years neither
    assert store.calendars.calendar_year("uk", 2026) == XMAS
    store.schedules.delete_schedule("a")
    store.schedules.delete_schedule("b")
    assert store.calendars.delete_calendar("uk") is True


@pytest.mark.parametrize("bulk", [False, True])
def test_registering_a_schedule_naming_a_calendar_not_stored_is_refused(
    store: Store, bulk: bool
) -> None:
    with pytest.raises(ConfigError, match="No calendar 'gone'"):
        if bulk:
            store.schedules.upsert_schedules([(schedule_using("gone"), "update", None)], now_ms=T0)
        else:
            store.schedules.upsert_schedule(schedule_using("gone"), now_ms=T0, on_conflict="update",
                                  paused=None)  # fmt: skip
    assert store.schedules.list_schedules() == []


def test_a_registration_waits_for_a_delete_in_progress_and_then_is_refused() -> None:
    """PostgreSQL, READ COMMITTED: a delete that checked the users holds the calendar's
    row; a registration naming the calendar waits for it, then finds it gone (before, it
    registered a schedule whose calendar had just been deleted)."""
    import psycopg

    with fresh_schema() as url:
        store = open_store(url)
        try:
            store.migrate()
            store.calendars.put_calendar(uk(), now_ms=T0)
            outcome: list[BaseException | None] = []

            def register() -> None:
                try:
                    store.schedules.upsert_schedule(schedule_using("uk"), now_ms=T0,
                                          on_conflict="update", paused=None)  # fmt: skip
                    outcome.append(None)
                except BaseException as exc:  # handed to the test
                    outcome.append(exc)

            with psycopg.connect(url) as deleter:  # a delete past its check of the users
                deleter.execute("SELECT name FROM tickwork_calendars WHERE name = 'uk' FOR UPDATE")
                thread = threading.Thread(target=register)
                thread.start()
                _until_waiting_on_a_lock(url, deleter.info.backend_pid, thread)
                deleter.execute("DELETE FROM tickwork_calendars WHERE name = 'uk'")
                deleter.commit()
            thread.join()
            (error,) = outcome
            assert isinstance(error, ConfigError) and "No calendar 'uk'" in str(error)
            assert store.schedules.list_schedules() == []
        finally:
            store.close()


def _until_waiting_on_a_lock(url: str, holder: int, thread: threading.Thread) -> None:
    """Until another session waits on a lock that the session ``holder`` (a backend pid)
    holds, or ``thread`` ended: sessions of tests running beside this one may wait on
    locks of their own meanwhile."""
    import psycopg

    with psycopg.connect(url, autocommit=True) as watcher:
        for _ in range(3000):
            waiting = watcher.execute(
                "SELECT count(*) FROM pg_stat_activity WHERE %s = ANY(pg_blocking_pids(pid))",
                (holder,),
            ).fetchone()
            if (waiting and waiting[0]) or not thread.is_alive():
                return
            thread.join(0.01)
    pytest.fail("the registration neither waited for the calendar's row nor ended")
