"""A schedule with a calendar word (``L``, ``LW``, ``5L``, ``1#2``) fires on the days it
names through the engine, and every face shows those days and says them in words."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from tickwork import Context, Engine
from tickwork.server.display import timing_words
from tickwork.testing import FakeClock


@pytest.fixture
def job(engine: Engine) -> Engine:
    @engine.workflow("job")
    def job(ctx: Context) -> None:
        return None

    return engine


def fired_until(engine: Engine, clock: FakeClock, end: datetime) -> list[datetime]:
    """Tick every 6 hours until ``end``; the occurrences started, from ``scheduled_for``."""
    fired = []
    while clock.now() < end:
        clock.advance("6h")
        for run_id in engine.tick():
            run = engine.get_run(run_id)
            assert run is not None and run.scheduled_for is not None
            fired.append(run.scheduled_for)
    return fired


def test_last_day_of_the_month_schedule_fires_on_the_last_day(
    job: Engine, clock: FakeClock
) -> None:
    clock.set(datetime(2028, 1, 15, tzinfo=UTC))
    key = job.schedule("job", None, cron="0 9 L * *", key="month-end")
    fired = fired_until(job, clock, datetime(2028, 4, 15, tzinfo=UTC))
    assert fired == [
        datetime(2028, 1, 31, 9, tzinfo=UTC),
        datetime(2028, 2, 29, 9, tzinfo=UTC),  # a leap year
        datetime(2028, 3, 31, 9, tzinfo=UTC),
    ]
    info = job.get_schedule(key)
    assert info is not None
    assert info.next_fire_at == datetime(2028, 4, 30, 9, tzinfo=UTC)
    assert timing_words(info) == "At 09:00 on the last day of the month"


def test_last_friday_and_second_monday_schedules_fire_in_their_zone(
    job: Engine, clock: FakeClock
) -> None:
    clock.set(datetime(2026, 2, 25, tzinfo=UTC))
    job.schedule("job", None, cron="30 8 * * 5L", timezone="Europe/London", key="last-friday")
    job.schedule("job", None, cron="0 7 * * MON#2", timezone="Europe/London", key="2nd-monday")
    fired = fired_until(job, clock, datetime(2026, 4, 15, tzinfo=UTC))
    assert fired == [
        datetime(2026, 2, 27, 8, 30, tzinfo=UTC),  # GMT
        datetime(2026, 3, 9, 7, 0, tzinfo=UTC),
        datetime(2026, 3, 27, 8, 30, tzinfo=UTC),  # still GMT: London changes on the 29th
        datetime(2026, 4, 13, 6, 0, tzinfo=UTC),  # 07:00 BST
    ]


def test_preview_lists_the_last_days(job: Engine) -> None:
    after = datetime(2027, 1, 1, tzinfo=UTC)
    assert job.preview(cron="0 9 L * *", after=after, count=3) == [
        datetime(2027, 1, 31, 9, tzinfo=UTC),
        datetime(2027, 2, 28, 9, tzinfo=UTC),
        datetime(2027, 3, 31, 9, tzinfo=UTC),
    ]
