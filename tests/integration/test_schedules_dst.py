"""Cron schedules across DST transitions, driven tick by tick (DESIGN §2 and §3).

America/New_York in 2026: clocks spring forward on 8 March (02:00 EST -> 03:00 EDT, so
02:00-02:59 never happens) and fall back on 1 November (02:00 EDT -> 01:00 EST, so
01:00-01:59 happens twice). Debian cron: a fixed-time job runs once on either day.
"""

from __future__ import annotations

import itertools
from datetime import UTC, date, datetime, timedelta
from zoneinfo import ZoneInfo

import pytest

from tickwork import Context, Engine
from tickwork.testing import FakeClock

NEW_YORK = ZoneInfo("America/New_York")


@pytest.fixture
def job(engine: Engine) -> Engine:
    @engine.workflow("job")
    def job(ctx: Context) -> None:
        return None

    return engine


def fire_through(
    engine: Engine, clock: FakeClock, cron: str, begin: datetime, end: datetime
) -> list[datetime]:
    """Register ``cron`` in New York at ``begin``, tick every 30 min until ``end``; return
    the occurrences started, from the runs' ``scheduled_for``."""
    clock.set(begin)
    engine.schedule("job", None, cron=cron, timezone="America/New_York", key="k", catchup="all")
    occurrences = []
    while clock.now() < end:
        clock.advance("30m")
        for run_id in engine.tick():
            run = engine.get_run(run_id)
            assert run is not None and run.scheduled_for is not None
            occurrences.append(run.scheduled_for)
    assert [h.decision for h in engine.schedule_history("k", limit=1000)] == ["started"] * len(
        occurrences
    )
    return occurrences


def on_local_day(occurrences: list[datetime], day: date) -> list[datetime]:
    return [o for o in occurrences if o.astimezone(NEW_YORK).date() == day]


def test_skipped_local_time_fires_once_right_after_the_gap(job: Engine, clock: FakeClock) -> None:
    """ "30 2 * * *" on spring-forward day fires once, at 03:00 EDT (07:00Z)."""
    fired = fire_through(
        job, clock, "30 2 * * *",
        datetime(2026, 3, 7, 12, 0, tzinfo=UTC), datetime(2026, 3, 10, 12, 0, tzinfo=UTC),
    )  # fmt: skip
    assert fired == [
        datetime(2026, 3, 8, 7, 0, tzinfo=UTC),  # 03:00 EDT, the first instant after the gap
        datetime(2026, 3, 9, 6, 30, tzinfo=UTC),  # 02:30 EDT
        datetime(2026, 3, 10, 6, 30, tzinfo=UTC),
    ]
    assert fired[0].astimezone(NEW_YORK).strftime("%H:%M %Z") == "03:00 EDT"


def test_repeated_local_time_fires_once_at_its_first_instance(
    job: Engine, clock: FakeClock
) -> None:
    """ "30 1 * * *" on fall-back day fires once, at the first 01:30 (EDT, 05:30Z)."""
    fired = fire_through(
        job, clock, "30 1 * * *",
        datetime(2026, 10, 31, 12, 0, tzinfo=UTC), datetime(2026, 11, 3, 12, 0, tzinfo=UTC),
    )  # fmt: skip
    assert fired == [
        datetime(2026, 11, 1, 5, 30, tzinfo=UTC),  # 01:30 EDT; 01:30 EST (06:30Z) is skipped
        datetime(2026, 11, 2, 6, 30, tzinfo=UTC),  # 01:30 EST
        datetime(2026, 11, 3, 6, 30, tzinfo=UTC),
    ]
    assert fired[0].astimezone(NEW_YORK).strftime("%H:%M %Z") == "01:30 EDT"


def test_wildcard_cron_follows_the_real_clock_on_spring_forward_day(
    job: Engine, clock: FakeClock
) -> None:
    """ "*/30 * * * *": the 23-hour local day has 46 occurrences, 30 real minutes apart."""
    fired = fire_through(
        job, clock, "*/30 * * * *",
        datetime(2026, 3, 7, 12, 0, tzinfo=UTC), datetime(2026, 3, 9, 12, 0, tzinfo=UTC),
    )  # fmt: skip
    day = on_local_day(fired, date(2026, 3, 8))
    assert len(day) == 46
    assert {b - a for a, b in itertools.pairwise(fired)} == {timedelta(minutes=30)}
    assert day[0] == datetime(2026, 3, 8, 5, 0, tzinfo=UTC)  # 00:00 EST
    assert day[-1] == datetime(2026, 3, 9, 3, 30, tzinfo=UTC)  # 23:30 EDT


def test_wildcard_cron_follows_the_real_clock_on_fall_back_day(
    job: Engine, clock: FakeClock
) -> None:
    """ "*/30 * * * *": the 25-hour local day has 50 occurrences, 30 real minutes apart."""
    fired = fire_through(
        job, clock, "*/30 * * * *",
        datetime(2026, 10, 31, 12, 0, tzinfo=UTC), datetime(2026, 11, 2, 12, 0, tzinfo=UTC),
    )  # fmt: skip
    day = on_local_day(fired, date(2026, 11, 1))
    assert len(day) == 50
    assert {b - a for a, b in itertools.pairwise(fired)} == {timedelta(minutes=30)}
    assert day[0] == datetime(2026, 11, 1, 4, 0, tzinfo=UTC)  # 00:00 EDT
    assert day[-1] == datetime(2026, 11, 2, 4, 30, tzinfo=UTC)  # 23:30 EST


def test_run_ids_across_fall_back_are_distinct(job: Engine, clock: FakeClock) -> None:
    """Both 01:30s of the repeated hour of "*/30" get runs with different ids (UTC-named)."""
    fire_through(
        job, clock, "*/30 * * * *",
        datetime(2026, 11, 1, 4, 0, tzinfo=UTC), datetime(2026, 11, 1, 8, 0, tzinfo=UTC),
    )  # fmt: skip
    ids = {r.id for r in job.list_runs(schedule_key="k")}
    assert {"k@2026-11-01T05:30:00.000Z", "k@2026-11-01T06:30:00.000Z"} <= ids


def test_interval_schedule_ignores_dst(job: Engine, clock: FakeClock) -> None:
    """every=1h stays 60 real minutes apart across spring-forward in any zone."""
    clock.set(datetime(2026, 3, 8, 5, 0, tzinfo=UTC))
    job.schedule("job", None, every="1h", timezone="America/New_York", key="k")
    fired = []
    for _ in range(4):
        clock.advance("1h")
        fired += job.tick()
    assert fired == [f"k@2026-03-08T{h:02d}:00:00.000Z" for h in (6, 7, 8, 9)]
