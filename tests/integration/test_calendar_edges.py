"""Business calendars where they meet overlap, pauses and DST, fired by a FakeClock on both
backends (issue 32's leftovers): the history of a moved occurrence that overlap held back
names the calendar, the day and what overlap did, and its run waits for the business day;
a resume places a ``"previous"`` move by the calendar's holidays at once; a day that
``dst_gap="skip"`` drops is never moved to the previous business day."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta

import pytest

from tickwork import Context, Decision, Engine, HistoryEntry, RunStatus
from tickwork.testing import FakeClock


@pytest.fixture(autouse=True)
def report(engine: Engine) -> None:
    @engine.workflow("report")
    def report(ctx: Context) -> str:
        return "done"


def at(*parts: int) -> datetime:
    return datetime(*parts, tzinfo=UTC)  # type: ignore[misc]


def walk(
    engine: Engine, clock: FakeClock, until: datetime, step: timedelta, *, execute: bool = True
) -> list[str]:
    """Tick every ``step`` until ``until``; the runs started (executed unless not)."""
    started: list[str] = []
    while clock.now() < until:
        clock.advance(step)
        started.extend(engine.tick())
        if execute:
            engine.run_until_idle()
    return started


def entry_of(engine: Engine, key: str, occurrence: datetime) -> list[HistoryEntry]:
    entries = engine.schedule_history(key, limit=1000)
    return [e for e in reversed(entries) if e.occurrence == occurrence]


# 2026-03-01 is a Sunday; the clock starts then at 12:00.


def test_a_moved_occurrence_buffered_behind_a_run_says_the_move_and_waits_for_its_day(
    engine: Engine, clock: FakeClock
) -> None:
    engine.calendar("office", holidays=[date(2026, 3, 3)])  # a Tuesday
    engine.schedule("report", cron="0 9 * * MON-FRI", key="k", calendar="office",
                    on_holiday="next", overlap="buffer_one")  # fmt: skip
    # Monday's run is still pending (nobody executes it) when Tuesday's comes due.
    (monday,) = walk(engine, clock, at(2026, 3, 3, 9, 30), timedelta(hours=1), execute=False)
    (buffered,) = entry_of(engine, "k", at(2026, 3, 3, 9))
    assert buffered.decision is Decision.BUFFERED
    assert "calendar 'office': 2026-03-03 is a holiday: moved to 2026-03-04" in buffered.reason
    assert f"overlap=buffer_one: waits for earlier run {monday}" in buffered.reason
    # Monday's run ends on the holiday: the buffered run is created, for Wednesday 09:00.
    engine.run_until_idle()
    clock.advance(timedelta(minutes=30))
    (tuesday,) = engine.tick()
    engine.run_until_idle()
    run = engine.get_run(tuesday)
    assert run is not None and run.status is RunStatus.PENDING
    assert run.scheduled_for == at(2026, 3, 3, 9)
    started = entry_of(engine, "k", at(2026, 3, 3, 9))[-1]
    assert started.decision is Decision.STARTED and "moved to 2026-03-04" in started.reason
    walk(engine, clock, at(2026, 3, 4, 9, 30), timedelta(hours=1))
    run = engine.get_run(tuesday)
    assert run is not None and run.status is RunStatus.COMPLETED
    assert run.started_at is not None and run.started_at >= at(2026, 3, 4, 9)


def test_a_moved_occurrence_skipped_for_overlap_names_the_calendar(
    engine: Engine, clock: FakeClock
) -> None:
    engine.calendar("office", holidays=[date(2026, 3, 3)])
    engine.schedule("report", cron="0 9 * * MON-FRI", key="k", calendar="office",
                    on_holiday="next", overlap="skip")  # fmt: skip
    walk(engine, clock, at(2026, 3, 3, 9, 30), timedelta(hours=1), execute=False)
    (skipped,) = entry_of(engine, "k", at(2026, 3, 3, 9))
    assert skipped.decision is Decision.SKIPPED_OVERLAP
    assert "'office'" in skipped.reason and "moved to 2026-03-04" in skipped.reason
    assert "overlap=skip" in skipped.reason


def test_resume_places_a_previous_move_by_the_calendars_holidays_at_once(
    engine: Engine, clock: FakeClock
) -> None:
    """Before the fix, a resume saw only Saturday and Sunday: Monday's holiday run, due on
    Friday, was first looked at on the holiday itself."""
    engine.calendar("office", holidays=[date(2026, 3, 9)])  # a Monday
    clock.set(at(2026, 3, 3, 12))  # Tuesday
    engine.schedule("report", cron="0 9 * * MON", key="k", calendar="office",
                    on_holiday="previous")  # fmt: skip
    assert engine.pause("k") is True
    clock.advance(timedelta(days=1))
    assert engine.resume("k") is True  # Wednesday: the next occurrence is Monday 9 March
    started = walk(engine, clock, at(2026, 3, 6, 9, 30), timedelta(minutes=30))  # Friday
    (moved,) = entry_of(engine, "k", at(2026, 3, 9, 9))
    assert moved.decision is Decision.MOVED_HOLIDAY and "2026-03-06" in moved.reason
    assert started == [moved.run_id]
    run = engine.get_run(started[0])
    assert run is not None and run.status is RunStatus.COMPLETED
    assert run.started_at is not None and run.started_at < at(2026, 3, 7)


def test_activate_places_a_previous_move_by_the_calendars_holidays(
    engine: Engine, clock: FakeClock
) -> None:
    engine.calendar("office", holidays=[date(2026, 3, 9)])
    clock.set(at(2026, 3, 3, 12))
    engine.schedule("report", cron="0 9 * * MON", key="k", calendar="office",
                    on_holiday="previous")  # fmt: skip
    engine.deactivate("k")
    clock.advance(timedelta(days=1))
    engine.activate("k")
    started = walk(engine, clock, at(2026, 3, 6, 9, 30), timedelta(minutes=30))
    assert [e.decision for e in entry_of(engine, "k", at(2026, 3, 9, 9))] == [
        Decision.MOVED_HOLIDAY
    ]
    assert len(started) == 1


def test_previous_never_moves_a_day_that_dst_gap_skip_drops(
    engine: Engine, clock: FakeClock
) -> None:
    # Sundays at 01:30 in London; on 2026-03-29 01:30 does not exist. Sunday is a weekend
    # day, so "previous" would move it to Friday: it must be recorded skipped_dst instead.
    engine.calendar("office", holidays=[])
    clock.set(at(2026, 3, 23, 12))
    engine.schedule("report", cron="30 1 * * SUN", timezone="Europe/London", key="k",
                    calendar="office", on_holiday="previous", dst_gap="skip")  # fmt: skip
    started = walk(engine, clock, at(2026, 3, 30, 12), timedelta(hours=1))
    assert started == [], "the Sunday the gap drops started a run on Friday"
    history = engine.schedule_history("k", limit=100)
    assert [(e.decision, e.occurrence) for e in history] == [
        (Decision.SKIPPED_DST, at(2026, 3, 29, 1))
    ]
    assert "Europe/London" in history[0].reason


def test_a_moved_run_has_its_deadline_from_the_business_day_it_moved_to(
    engine: Engine, clock: FakeClock
) -> None:
    """Friday 6 March is a holiday: its run moves to Monday 09:00 and completes then. Its
    deadline was Friday 09:15, missed by a run that could not start before Monday."""
    engine.calendar("office", holidays=[date(2026, 3, 6)])
    engine.schedule("report", cron="0 9 * * MON-FRI", key="k", calendar="office",
                    on_holiday="next", deadline="15m")  # fmt: skip
    walk(engine, clock, at(2026, 3, 9, 12), timedelta(minutes=30))
    misses = [e for e in engine.schedule_history("k") if e.decision is Decision.DEADLINE_MISSED]
    assert misses == []
    (moved,) = [e for e in engine.schedule_history("k") if e.decision is Decision.MOVED_HOLIDAY]
    run = engine.get_run(moved.run_id or "")
    assert run is not None and run.status is RunStatus.COMPLETED


def test_registering_again_with_paused_false_places_a_previous_move_by_the_holidays(
    engine: Engine, clock: FakeClock
) -> None:
    engine.calendar("office", holidays=[date(2026, 3, 9)])
    clock.set(at(2026, 3, 3, 12))

    def register(paused: bool) -> None:
        engine.schedule("report", cron="0 9 * * MON", key="k", calendar="office",
                        on_holiday="previous", paused=paused)  # fmt: skip

    register(True)
    clock.advance(timedelta(days=1))
    register(False)  # the same definition: a resume
    started = walk(engine, clock, at(2026, 3, 6, 9, 30), timedelta(minutes=30))
    assert len(started) == 1
    (moved,) = entry_of(engine, "k", at(2026, 3, 9, 9))
    assert moved.decision is Decision.MOVED_HOLIDAY


@pytest.mark.parametrize(("overlap", "runs"), [("allow", 5), ("skip", 1)])
def test_next_over_five_days_off_in_a_row_stacks_their_runs_on_the_next_business_day(
    engine: Engine, clock: FakeClock, overlap: str, runs: int
) -> None:
    # Thursday 24 to Monday 28 December 2026: two holidays, a weekend, a substitute day.
    engine.calendar("office", holidays=[date(2026, 12, d) for d in (24, 25, 28)])
    clock.advance(at(2026, 12, 23, 12) - clock.now())
    engine.schedule("report", cron="0 9 * * *", key="k", calendar="office",
                    on_holiday="next", overlap=overlap)  # fmt: skip
    walk(engine, clock, at(2026, 12, 29, 8), timedelta(hours=1), execute=False)
    moved = engine.list_runs(schedule_key="k")
    assert len(moved) == runs
    assert all(r.status is RunStatus.PENDING for r in moved)
    assert engine.run_until_idle() == 0  # none runs before the business day
    walk(engine, clock, at(2026, 12, 29, 9, 30), timedelta(hours=1))
    days_off = [r for r in engine.list_runs(schedule_key="k") if r.id in {m.id for m in moved}]
    assert all(r.status is RunStatus.COMPLETED for r in days_off)
    assert all(r.started_at and r.started_at >= at(2026, 12, 29, 9) for r in days_off)
    skipped = [
        e
        for e in engine.schedule_history("k")
        if e.decision is Decision.SKIPPED_OVERLAP and e.occurrence < at(2026, 12, 29)
    ]
    assert len(skipped) == 5 - runs
