"""Business calendars in SQL (migration 0016): a calendar's row, and the public holidays
of its country resolved per year, so that every process decides with the same dates."""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from datetime import date

from .._rules.calendars import unknown_calendar
from .._values.clock import from_ms
from .._values.holidays import Holiday
from .._values.models import CalendarInfo
from ..errors import CalendarInUse
from .transaction import Database, Transaction

__all__ = ["CalendarsSql", "hold_calendars"]

# Set a calendar: insert, or replace every field of the one with this name.
UPSERT_CALENDAR = """
INSERT INTO tickwork_calendars (name, weekend, holidays, country, subdivision, updated_at)
VALUES (?, ?, ?, ?, ?, ?)
ON CONFLICT (name) DO UPDATE SET weekend = excluded.weekend, holidays = excluded.holidays,
    country = excluded.country, subdivision = excluded.subdivision,
    updated_at = excluded.updated_at
"""
_COLUMNS = "name, weekend, holidays, country, subdivision, updated_at"
SELECT_CALENDAR = f"SELECT {_COLUMNS} FROM tickwork_calendars WHERE name = ?"  # noqa: S608
SELECT_CALENDARS = f"SELECT {_COLUMNS} FROM tickwork_calendars ORDER BY name"  # noqa: S608
# Each calendar's last change: what the firing loop checks before reading one again.
SELECT_STAMPS = "SELECT name, updated_at FROM tickwork_calendars"
DELETE_CALENDAR = "DELETE FROM tickwork_calendars WHERE name = ?"
# Whether the calendar is stored; with the dialect's lock, held until the transaction ends:
# a delete takes it exclusively, a registration of a schedule using it shared.
HOLD_CALENDAR = "SELECT name FROM tickwork_calendars WHERE name = ?"
# The schedules that use a calendar: while there are some, it cannot be deleted.
SELECT_USERS = "SELECT key FROM tickwork_schedules WHERE calendar = ? ORDER BY key"
# A calendar's resolved years: stale once it is set again, gone when it is deleted.
DELETE_YEARS = "DELETE FROM tickwork_calendar_years WHERE calendar = ?"
# A year's public holidays; a year already stored (by another process) is kept as it is.
INSERT_YEAR = """
INSERT INTO tickwork_calendar_years (calendar, year, holidays) VALUES (?, ?, ?)
ON CONFLICT (calendar, year) DO NOTHING
"""
SELECT_YEAR = "SELECT holidays FROM tickwork_calendar_years WHERE calendar = ? AND year = ?"


class CalendarsSql:
    """``CalendarStore`` over a dialect's ``Database``."""

    __slots__ = ("_db",)

    def __init__(self, db: Database) -> None:
        self._db = db

    def put_calendar(self, calendar: CalendarInfo, *, now_ms: int) -> None:
        listed = json.dumps([day.isoformat() for day in calendar.holidays])

        def work(tx: Transaction) -> None:
            tx.execute(
                UPSERT_CALENDAR, calendar.name, ",".join(calendar.weekend), listed,
                calendar.country, calendar.subdivision, now_ms,
            )  # fmt: skip
            tx.execute(DELETE_YEARS, calendar.name)

        self._db.write(work)

    def get_calendar(self, name: str) -> CalendarInfo | None:
        with self._db.read() as tx:
            row = tx.execute(SELECT_CALENDAR, name).fetchone()
        return None if row is None else _calendar(row)

    def list_calendars(self) -> list[CalendarInfo]:
        with self._db.read() as tx:
            rows = tx.execute(SELECT_CALENDARS).fetchall()
        return [_calendar(row) for row in rows]

    def calendar_stamps(self) -> dict[str, int]:
        with self._db.read() as tx:
            rows = tx.execute(SELECT_STAMPS).fetchall()
        return {str(name): int(stamp) for name, stamp in rows}

    def delete_calendar(self, name: str) -> bool:
        # One transaction: the users are read under the calendar's row lock, which a
        # registration naming the calendar shares (``hold_calendars``), so that no schedule
        # can start using it between the check and the delete.
        def work(tx: Transaction) -> bool:
            found = tx.execute(HOLD_CALENDAR + self._db.lock_row, name).fetchone()
            if found is None:
                tx.execute(DELETE_YEARS, name)
                return False
            users = tuple(str(key) for (key,) in tx.execute(SELECT_USERS, name).fetchall())
            if users:
                raise CalendarInUse(name, users)
            tx.execute(DELETE_CALENDAR, name)
            tx.execute(DELETE_YEARS, name)
            return True

        return self._db.write(work)

    def store_calendar_year(self, name: str, year: int, holidays: Sequence[Holiday]) -> None:
        text = json.dumps([[h.day.isoformat(), h.name] for h in holidays])

        def work(tx: Transaction) -> None:
            tx.execute(INSERT_YEAR, name, year, text)

        self._db.write(work)

    def calendar_year(self, name: str, year: int) -> tuple[Holiday, ...] | None:
        with self._db.read() as tx:
            row = tx.execute(SELECT_YEAR, name, year).fetchone()
        if row is None:
            return None
        return tuple(Holiday(date.fromisoformat(day), title) for day, title in json.loads(row[0]))


def hold_calendars(tx: Transaction, lock: str, names: Iterable[str | None]) -> None:
    """In a registration's transaction: each calendar ``names`` names is stored, and held
    with ``lock`` (the dialect's ``lock_shared``) until it ends; else ``ConfigError``
    naming it (deleted since the engine read it)."""
    for name in sorted({name for name in names if name is not None}):
        if tx.execute(HOLD_CALENDAR + lock, name).fetchone() is None:
            raise unknown_calendar(name)


def _calendar(row: Sequence[object]) -> CalendarInfo:
    name, weekend, listed, country, subdivision, updated_ms = row
    return CalendarInfo(
        name=str(name),
        weekend=tuple(str(weekend).split(",")) if weekend else (),
        holidays=tuple(date.fromisoformat(day) for day in json.loads(str(listed))),
        country=None if country is None else str(country),
        subdivision=None if subdivision is None else str(subdivision),
        updated_at=from_ms(int(updated_ms)),  # type: ignore[call-overload]
    )
