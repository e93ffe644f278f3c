"""The dashboard's upcoming list of a schedule (``_preview.schedule_marks``, pure): each
occurrence marked with what DST (the schedule's policy) or its calendar does to it."""

from __future__ import annotations

import itertools
from datetime import UTC, date, datetime
from zoneinfo import ZoneInfo

from tickwork import cron
from tickwork._rules.occurrences import HolidayRule
from tickwork._rules.preview import schedule_marks
from tickwork._values.business_days import BusinessDays
from tickwork._values.models import OnHoliday

NY = "America/New_York"  # 2026: 02:00-03:00 skipped on Sunday Mar 8


def marks(expr: cron.CronExpr, after: datetime, rule: HolidayRule | None = None) -> list[tuple]:
    upcoming = list(itertools.islice(expr.iter(after), 3))
    return [
        (m.at.strftime("%m-%d %H:%M"), m.mark, m.runs_at and m.runs_at.strftime("%m-%d %H:%M"))
        for m in schedule_marks(expr, after, upcoming, rule)
    ]


AFTER = datetime(2026, 3, 6, tzinfo=UTC)


def test_dst_marks_the_skipped_time_moved_or_dropped() -> None:
    shift = cron.parse("30 2 * * *", NY)
    assert marks(shift, AFTER) == [
        ("03-06 07:30", None, None), ("03-07 07:30", None, None), ("03-08 07:00", "moved", None),
    ]  # fmt: skip
    skip = cron.parse("30 2 * * *", NY, dst_gap="skip")
    assert marks(skip, AFTER) == [
        ("03-06 07:30", None, None), ("03-07 07:30", None, None),
        ("03-08 07:00", "skipped", None), ("03-09 06:30", None, None),
    ]  # fmt: skip


def test_the_calendar_marks_days_off_skipped_or_moved_to_where_they_run() -> None:
    days = BusinessDays("office", frozenset({date(2026, 3, 9)}))
    expr = cron.parse("0 9 * * *", "UTC")
    moved = HolidayRule(days, OnHoliday.NEXT, ZoneInfo("UTC"))
    assert marks(expr, datetime(2026, 3, 8, tzinfo=UTC), moved) == [
        ("03-08 09:00", "holiday_moved", "03-10 09:00"),  # a Sunday, then the holiday
        ("03-09 09:00", "holiday_moved", "03-10 09:00"),
        ("03-10 09:00", None, None),
    ]
    skipped = HolidayRule(days, OnHoliday.SKIP, ZoneInfo("UTC"))
    assert [m[1] for m in marks(expr, datetime(2026, 3, 8, tzinfo=UTC), skipped)] == [
        "holiday_skipped", "holiday_skipped", None,
    ]  # fmt: skip


def test_an_interval_is_marked_by_its_calendar_only() -> None:
    days = BusinessDays("office")
    rule = HolidayRule(days, OnHoliday.SKIP, ZoneInfo("UTC"))
    saturday = datetime(2026, 3, 7, 12, tzinfo=UTC)
    found = schedule_marks(None, saturday, [saturday, datetime(2026, 3, 9, tzinfo=UTC)], rule)
    assert [m.mark for m in found] == ["holiday_skipped", None]
    assert found[0].note is not None and "'office': 2026-03-07 is a weekend day" in found[0].note
