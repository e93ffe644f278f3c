"""A schedule's DST policy and business calendar, fired by a FakeClock on both backends
(DESIGN §2, §3): each decision is in the history with its reason (the zone and its gap,
or the calendar and the date), a moved occurrence keeps its id, and a calendar changed
after registration decides the occurrences not yet decided."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta

import pytest

from tickwork import Context, Decision, Engine, HistoryEntry, RunStatus
from tickwork.errors import CalendarInUse, ConfigError, CronError
from tickwork.testing import FakeClock


@pytest.fixture(autouse=True)
def report(engine: Engine) -> None:
    @engine.workflow("report")
    def report(ctx: Context) -> str:
        return "done"


def at(*parts: int) -> datetime:
    return datetime(*parts, tzinfo=UTC)  # type: ignore[misc]


def walk(engine: Engine, clock: FakeClock, until: datetime, step: timedelta) -> list[str]:
    """Tick every ``step`` until ``until`` (runs executed as they come); the runs started."""
    started: list[str] = []
    while clock.now() < until:
        clock.advance(step)
        started.extend(engine.tick())
        engine.run_until_idle()
    return started


def decided(engine: Engine, key: str, decision: Decision) -> list[HistoryEntry]:
    entries = engine.schedule_history(key, limit=1000)
    return sorted((e for e in entries if e.decision is decision), key=lambda e: e.occurrence)


def scheduled_for(engine: Engine, run_ids: list[str]) -> list[datetime]:
    found = []
    for run_id in run_ids:
        run = engine.get_run(run_id)
        assert run is not None and run.scheduled_for is not None
        found.append(run.scheduled_for)
    return sorted(found)


# -- DST ----------------------------------------------------------------------------------


def test_dst_gap_skip_records_the_skipped_day_and_starts_no_run(
    engine: Engine, clock: FakeClock
) -> None:
    # Europe/London, 2026-03-29: the clocks jump from 01:00 to 02:00; 01:30 never shows.
    clock.set(at(2026, 3, 27, 12))
    engine.schedule("report", cron="30 1 * * *", timezone="Europe/London", key="k",
                    dst_gap="skip")  # fmt: skip
    started = walk(engine, clock, at(2026, 3, 31, 12), timedelta(hours=1))
    assert scheduled_for(engine, started) == [
        at(2026, 3, 28, 1, 30),
        at(2026, 3, 30, 0, 30),
        at(2026, 3, 31, 0, 30),
    ]
    (skipped,) = decided(engine, "k", Decision.SKIPPED_DST)
    assert skipped.occurrence == at(2026, 3, 29, 1)  # where "shift" would have run it
    assert skipped.run_id is None
    assert "Europe/London" in skipped.reason and "01:00 to 02:00" in skipped.reason


def test_dst_gap_shift_runs_the_skipped_time_once_after_the_gap(
    engine: Engine, clock: FakeClock
) -> None:
    clock.set(at(2026, 3, 28, 12))
    engine.schedule("report", cron="30 1 * * *", timezone="Europe/London", key="k")
    started = walk(engine, clock, at(2026, 3, 29, 12), timedelta(hours=1))
    assert scheduled_for(engine, started) == [at(2026, 3, 29, 1)]
    assert decided(engine, "k", Decision.SKIPPED_DST) == []


@pytest.mark.parametrize(
    ("repeat", "expected"),
    [
        ("first", [at(2026, 10, 25, 0, 30)]),
        ("last", [at(2026, 10, 25, 1, 30)]),
        ("both", [at(2026, 10, 25, 0, 30), at(2026, 10, 25, 1, 30)]),
    ],
)
def test_dst_repeat_runs_the_repeated_time_at_the_first_the_last_or_both_instants(
    engine: Engine, clock: FakeClock, repeat: str, expected: list[datetime]
) -> None:
    # Europe/London, 2026-10-25: 01:00-02:00 local happens twice (BST, then GMT).
    clock.set(at(2026, 10, 24, 12))
    engine.schedule("report", cron="30 1 * * *", timezone="Europe/London", key="k",
                    dst_repeat=repeat)  # fmt: skip
    started = walk(engine, clock, at(2026, 10, 25, 12), timedelta(minutes=30))
    assert scheduled_for(engine, started) == expected
    assert len(set(started)) == len(started)  # "both": two runs, two occurrence ids


# -- business calendars ----------------------------------------------------------------------
# 2026-03-02 is a Monday; the clock starts on Sunday 2026-03-01 at 12:00.


def test_a_holiday_occurrence_is_skipped_naming_the_calendar_and_the_date(
    engine: Engine, clock: FakeClock
) -> None:
    engine.calendar("office", holidays=[date(2026, 3, 3)])
    engine.schedule("report", cron="0 9 * * *", key="k", calendar="office")
    started = walk(engine, clock, at(2026, 3, 5, 12), timedelta(hours=1))
    assert scheduled_for(engine, started) == [at(2026, 3, 2, 9), at(2026, 3, 4, 9),
                                              at(2026, 3, 5, 9)]  # fmt: skip
    (skipped,) = decided(engine, "k", Decision.SKIPPED_HOLIDAY)
    assert skipped.occurrence == at(2026, 3, 3, 9) and skipped.run_id is None
    assert "'office'" in skipped.reason and "2026-03-03" in skipped.reason


def test_on_holiday_next_moves_the_run_to_the_next_business_day_under_the_same_id(
    engine: Engine, clock: FakeClock
) -> None:
    engine.calendar("office", holidays=[date(2026, 3, 6)])  # a Friday
    engine.schedule("report", cron="0 9 * * MON-FRI", key="k", calendar="office",
                    on_holiday="next")  # fmt: skip
    walk(engine, clock, at(2026, 3, 6, 12), timedelta(hours=1))
    (moved,) = decided(engine, "k", Decision.MOVED_HOLIDAY)
    assert moved.occurrence == at(2026, 3, 6, 9)
    assert "'office'" in moved.reason and "2026-03-09" in moved.reason
    run = engine.get_run(moved.run_id or "")
    assert run is not None and run.scheduled_for == at(2026, 3, 6, 9)
    assert run.status is RunStatus.PENDING  # waits for Monday 09:00
    walk(engine, clock, at(2026, 3, 9, 9, 30), timedelta(hours=1))
    run = engine.get_run(moved.run_id or "")
    assert run is not None and run.status is RunStatus.COMPLETED
    assert run.started_at is not None and run.started_at >= at(2026, 3, 9, 9)
    assert len(decided(engine, "k", Decision.MOVED_HOLIDAY)) == 1  # once


def test_on_holiday_previous_starts_on_the_business_day_before(
    engine: Engine, clock: FakeClock
) -> None:
    engine.calendar("office", holidays=[date(2026, 3, 9)])  # a Monday
    engine.schedule("report", cron="0 9 * * MON-FRI", key="k", calendar="office",
                    on_holiday="previous")  # fmt: skip
    walk(engine, clock, at(2026, 3, 6, 9, 30), timedelta(hours=1))  # Friday
    (moved,) = decided(engine, "k", Decision.MOVED_HOLIDAY)
    assert moved.occurrence == at(2026, 3, 9, 9) and "2026-03-06" in moved.reason
    run = engine.get_run(moved.run_id or "")
    assert run is not None and run.status is RunStatus.COMPLETED
    assert run.scheduled_for == at(2026, 3, 9, 9)
    started = walk(engine, clock, at(2026, 3, 10, 12), timedelta(hours=1))
    assert scheduled_for(engine, started) == [at(2026, 3, 10, 9)]  # not Monday's again


def test_a_calendar_changed_after_registration_decides_the_occurrences_not_yet_decided(
    engine: Engine, clock: FakeClock
) -> None:
    engine.calendar("office", holidays=[])
    engine.schedule("report", cron="0 9 * * *", key="k", calendar="office")
    walk(engine, clock, at(2026, 3, 2, 12), timedelta(hours=1))
    engine.calendar("office", holidays=[date(2026, 3, 3)])
    started = walk(engine, clock, at(2026, 3, 4, 12), timedelta(hours=1))
    assert scheduled_for(engine, started) == [at(2026, 3, 4, 9)]
    (skipped,) = decided(engine, "k", Decision.SKIPPED_HOLIDAY)
    assert skipped.occurrence == at(2026, 3, 3, 9)


def test_business_day_words_count_the_calendars_business_days(
    engine: Engine, clock: FakeClock
) -> None:
    # April 2026: the 1st (Wednesday) is a holiday, so the first business day is the 2nd;
    # the 30th (Thursday) too, so the last is the 29th.
    engine.calendar("office", holidays=[date(2026, 4, 1), date(2026, 4, 30)])
    clock.set(at(2026, 3, 31, 12))
    engine.schedule("report", cron="0 9 1BD,LBD * *", key="k", calendar="office")
    started = walk(engine, clock, at(2026, 5, 1, 12), timedelta(hours=6))
    assert scheduled_for(engine, started) == [at(2026, 4, 2, 9), at(2026, 4, 29, 9),
                                              at(2026, 5, 1, 9)]  # fmt: skip


def test_a_backfill_over_holidays_skips_them_as_firing_would(
    engine: Engine, clock: FakeClock
) -> None:
    engine.calendar("office", holidays=[date(2026, 2, 24)])
    clock.set(at(2026, 3, 1, 12))
    engine.schedule("report", cron="0 9 * * *", key="k", calendar="office")
    run_ids = engine.backfill("k", at(2026, 2, 23), at(2026, 3, 1))
    assert scheduled_for(engine, run_ids) == [at(2026, 2, 23, 9), at(2026, 2, 25, 9),
                                              at(2026, 2, 26, 9), at(2026, 2, 27, 9)]  # fmt: skip
    skipped = decided(engine, "k", Decision.SKIPPED_HOLIDAY)
    assert [e.occurrence.date() for e in skipped] == [date(2026, 2, 24), date(2026, 2, 28)]


# -- registration ----------------------------------------------------------------------------


def test_an_unknown_calendar_is_refused_naming_it_and_nothing_is_stored(engine: Engine) -> None:
    with pytest.raises(ConfigError, match="No calendar 'nowhere'"):
        engine.schedule("report", cron="0 9 * * *", key="k", calendar="nowhere")
    assert engine.get_schedule("k") is None


def test_business_day_words_without_a_calendar_are_refused(engine: Engine) -> None:
    with pytest.raises(CronError, match="need a calendar"):
        engine.schedule("report", cron="0 9 LBD * *", key="k")
    assert engine.list_schedules() == []


def test_the_options_are_shown_and_changing_one_bumps_the_revision(engine: Engine) -> None:
    engine.calendar("office", holidays=[])
    engine.schedule("report", cron="0 9 * * *", key="k")
    info = engine.get_schedule("k")
    assert info is not None
    assert (info.dst_gap, info.dst_repeat, info.calendar, info.on_holiday) == (
        "shift", "first", None, "skip",
    )  # fmt: skip
    engine.schedule("report", cron="0 9 * * *", key="k", dst_gap="skip", calendar="office",
                    on_holiday="next")  # fmt: skip
    info = engine.get_schedule("k")
    assert info is not None and info.revision == 2
    assert (info.dst_gap, info.calendar, info.on_holiday) == ("skip", "office", "next")
    engine.schedule("report", cron="0 9 * * *", key="k", dst_gap="skip", calendar="office",
                    on_holiday="next")  # fmt: skip
    info = engine.get_schedule("k")
    assert info is not None and info.revision == 2  # the same definition: unchanged


def test_the_derived_key_is_the_same_when_the_options_are_at_their_defaults(
    engine: Engine,
) -> None:
    plain = engine.schedule("report", cron="0 9 * * *")
    spelled = engine.schedule("report", cron="0 9 * * *", dst_gap="shift", dst_repeat="first",
                              calendar=None, on_holiday="skip")  # fmt: skip
    assert plain == spelled
    assert engine.schedule("report", cron="0 9 * * *", dst_gap="skip") != plain


def test_a_trigger_under_skip_starts_the_latest_occurrence_the_calendar_does_not_skip(
    engine: Engine, clock: FakeClock
) -> None:
    engine.calendar("office", holidays=[])
    engine.schedule("report", cron="0 9 * * *", key="k", calendar="office")
    clock.set(at(2026, 3, 8, 12))  # a Sunday: Saturday's and Sunday's 09:00 are days off
    run_id = engine.trigger("k")
    assert run_id is not None
    assert scheduled_for(engine, [run_id]) == [at(2026, 3, 6, 9)]  # Friday's


def test_a_calendar_a_schedule_uses_cannot_be_deleted(engine: Engine) -> None:
    engine.calendar("office", holidays=[])
    engine.schedule("report", cron="0 9 * * *", key="k", calendar="office")
    with pytest.raises(CalendarInUse) as refused:
        engine.delete_calendar("office")
    assert refused.value.schedules == ("k",)
    assert engine.get_calendar("office") is not None
    engine.unschedule("k")
    assert engine.delete_calendar("office") is True
