"""The planner's DST and calendar decisions, table-tested without a database (DESIGN §2,
§3): under ``dst_gap="skip"`` an occurrence a gap drops is recorded ``skipped_dst`` with
the zone and the gap; ``dst_repeat`` starts the first, the last or both instants (two
occurrence ids); a calendar skips an occurrence on a day off (``skipped_holiday``) or moves
its run to the next or previous business day at the same local time (``moved_holiday``,
the same occurrence id), across month ends too.

``fire`` plays the worker's loop over the pure planner: a pass every ``step``, each
pass's ``next_fire_ms`` (or earlier wake-up) handed to the next, as the store does.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta
from zoneinfo import ZoneInfo

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tickwork import cron
from tickwork._rules.occurrences import CronOccurrences, HolidayRule, next_decided
from tickwork._rules.planning import PlanInput, PlannedDecision, PlannedRun, plan
from tickwork._values.business_days import BusinessDays
from tickwork._values.clock import from_ms, to_ms
from tickwork._values.ids import occurrence_run_id
from tickwork._values.models import Decision, OnHoliday, Overlap

LONDON, NY, LORD_HOWE = "Europe/London", "America/New_York", "Australia/Lord_Howe"
SANTIAGO, CAIRO, HAVANA = "America/Santiago", "Africa/Cairo", "America/Havana"


@dataclass
class Fired:
    decisions: list[PlannedDecision]
    runs: list[PlannedRun]

    def of(self, decision: Decision) -> list[str]:
        return [_iso(d.occurrence_ms) for d in self.decisions if d.decision is decision]

    @property
    def started(self) -> list[str]:
        return [_iso(run.occurrence_ms) for run in self.runs]


def _iso(ms: int) -> str:
    return from_ms(ms).strftime("%Y-%m-%dT%H:%MZ")


def utc(text: str) -> datetime:
    return datetime.fromisoformat(text).replace(tzinfo=UTC)


def fire(
    expr: str,
    zone: str,
    start: str,
    end: str,
    *,
    step: timedelta = timedelta(minutes=15),
    days: BusinessDays | None = None,
    on_holiday: OnHoliday = OnHoliday.SKIP,
    **policy: str,
) -> Fired:
    """Every pass of a schedule registered at ``start`` until ``end`` (UTC, naive ISO)."""
    occurrences = CronOccurrences(cron.parse(expr, zone, calendar=days, **policy))  # type: ignore[arg-type]
    rule = None if days is None else HolidayRule(days, on_holiday, ZoneInfo(zone))
    now, last = to_ms(utc(start)), to_ms(utc(end))
    next_fire = next_decided(occurrences, now)  # as registration places it
    due = next_fire if rule is None or next_fire is None else rule.wake(occurrences, next_fire)
    fired = Fired([], [])
    while now < last:
        now += int(step.total_seconds() * 1000)
        if due is None or due > now:
            continue
        state = PlanInput(
            key="k", overlap=Overlap.ALLOW, catchup=1, catchup_window_ms=None, jitter_ms=None,
            end_ms=None, next_fire_ms=next_fire, buffered_ms=None, paused_ms=None,
            active_run_ids=(), now_ms=now, holidays=rule,
        )  # fmt: skip
        result = plan(state, occurrences)
        fired.decisions.extend(result.decisions)
        fired.runs.extend(result.starts)
        next_fire, due = result.next_fire_ms, result.due_ms
    return fired


# -- DST ----------------------------------------------------------------------------------

GAPS = [
    # (zone, expr, from, to, where "shift" runs the skipped time, the next day's run)
    (LONDON, "30 1 * * *", "2026-03-28T12:00", "2026-03-30T12:00",
     "2026-03-29T01:00Z", "2026-03-30T00:30Z"),
    (NY, "30 2 * * *", "2026-03-07T12:00", "2026-03-09T12:00",
     "2026-03-08T07:00Z", "2026-03-09T06:30Z"),
    # a 30-minute change: 02:00-02:30 does not exist
    (LORD_HOWE, "15 2 * * *", "2026-10-03T00:00", "2026-10-05T00:00",
     "2026-10-03T15:30Z", "2026-10-04T15:15Z"),
    # gaps at midnight: the day starts at 01:00
    (SANTIAGO, "0 0 * * *", "2026-09-05T12:00", "2026-09-07T12:00",
     "2026-09-06T04:00Z", "2026-09-07T03:00Z"),
    (CAIRO, "30 0 * * *", "2026-04-23T12:00", "2026-04-25T12:00",
     "2026-04-23T22:00Z", "2026-04-24T21:30Z"),
    (HAVANA, "0 0 * * *", "2026-03-07T12:00", "2026-03-09T12:00",
     "2026-03-08T05:00Z", "2026-03-09T04:00Z"),
]  # fmt: skip


@pytest.mark.parametrize(("zone", "expr", "start", "end", "gap_end", "next_day"), GAPS)
def test_skip_records_the_gap_with_its_zone_and_starts_nothing_shift_runs_after_it(
    zone: str, expr: str, start: str, end: str, gap_end: str, next_day: str
) -> None:
    skipped = fire(expr, zone, start, end, dst_gap="skip")
    assert skipped.started == [next_day]
    assert skipped.of(Decision.SKIPPED_DST) == [gap_end]
    (entry,) = [d for d in skipped.decisions if d.decision is Decision.SKIPPED_DST]
    assert zone in entry.reason and entry.run_id is None
    shifted = fire(expr, zone, start, end)
    assert shifted.started == [gap_end, next_day]
    assert shifted.of(Decision.SKIPPED_DST) == []


REPEATS = [
    # (zone, expr, from, to, the first instant, the last)
    (LONDON, "30 1 * * *", "2026-10-24T12:00", "2026-10-25T12:00",
     "2026-10-25T00:30Z", "2026-10-25T01:30Z"),
    (NY, "30 1 * * *", "2026-10-31T12:00", "2026-11-01T12:00",
     "2026-11-01T05:30Z", "2026-11-01T06:30Z"),
    (LORD_HOWE, "45 1 * * *", "2026-04-04T00:00", "2026-04-05T00:00",
     "2026-04-04T14:45Z", "2026-04-04T15:15Z"),
    # repeated hours before midnight
    (SANTIAGO, "30 23 * * *", "2026-04-04T12:00", "2026-04-05T12:00",
     "2026-04-05T02:30Z", "2026-04-05T03:30Z"),
    (CAIRO, "30 23 * * *", "2026-10-29T12:00", "2026-10-30T12:00",
     "2026-10-29T20:30Z", "2026-10-29T21:30Z"),
    # and after it
    (HAVANA, "30 0 * * *", "2026-10-31T12:00", "2026-11-01T12:00",
     "2026-11-01T04:30Z", "2026-11-01T05:30Z"),
]  # fmt: skip


@pytest.mark.parametrize(("zone", "expr", "start", "end", "first", "last"), REPEATS)
def test_repeat_starts_the_first_the_last_or_both_instants_each_its_own_id(
    zone: str, expr: str, start: str, end: str, first: str, last: str
) -> None:
    assert fire(expr, zone, start, end).started == [first]
    assert fire(expr, zone, start, end, dst_repeat="last").started == [last]
    both = fire(expr, zone, start, end, dst_repeat="both")
    assert both.started == [first, last]
    assert len({run.run_id for run in both.runs}) == 2


# -- business calendars ----------------------------------------------------------------------

UK = BusinessDays(
    "uk",
    frozenset({date(2026, 1, 1), date(2026, 5, 4), date(2026, 8, 31), date(2026, 12, 25),
               date(2026, 12, 28), date(2027, 1, 1)}),
)  # fmt: skip

MOVES = [
    # (occurrence's local day at 09:00 London, on_holiday, where it runs: None = skipped)
    ("2026-08-31", OnHoliday.SKIP, None),  # a bank holiday at the end of August
    ("2026-08-31", OnHoliday.NEXT, "2026-09-01T08:00Z"),  # into September (BST)
    ("2026-08-31", OnHoliday.PREVIOUS, "2026-08-28T08:00Z"),  # back over a weekend
    ("2026-08-01", OnHoliday.PREVIOUS, "2026-07-31T08:00Z"),  # a Saturday: into July
    ("2027-01-01", OnHoliday.PREVIOUS, "2026-12-31T09:00Z"),  # over Christmas, into 2026
    ("2026-12-25", OnHoliday.NEXT, "2026-12-29T09:00Z"),  # two holidays and a weekend
    ("2026-10-25", OnHoliday.NEXT, "2026-10-26T09:00Z"),  # a Sunday whose offset changes
]


@pytest.mark.parametrize(("day", "on_holiday", "runs_at"), MOVES)
def test_a_day_off_is_skipped_or_moved_at_the_same_local_time(
    day: str, on_holiday: OnHoliday, runs_at: str | None
) -> None:
    start = (datetime.fromisoformat(day) - timedelta(days=1)).isoformat()
    end = (datetime.fromisoformat(day) + timedelta(hours=12)).isoformat()
    fired = fire("0 9 * * *", LONDON, start, end, step=timedelta(hours=1), days=UK,
                 on_holiday=on_holiday)  # fmt: skip
    entries = [d for d in fired.decisions if from_ms(d.occurrence_ms).date().isoformat() == day]
    (entry,) = entries
    assert "'uk'" in entry.reason and day in entry.reason
    if runs_at is None:
        assert entry.decision is Decision.SKIPPED_HOLIDAY and entry.run_id is None
        return
    assert entry.decision is Decision.MOVED_HOLIDAY
    assert entry.run_id == occurrence_run_id("k", entry.occurrence_ms)  # the same id
    (run,) = [run for run in fired.runs if run.run_id == entry.run_id]
    assert _iso(run.available_ms) == runs_at


def test_previous_is_decided_on_the_business_day_it_moves_to() -> None:
    # Monday 2026-05-04 is a bank holiday: its 09:00 run moves to Friday 2026-05-01.
    fired = fire("0 9 * * MON-FRI", LONDON, "2026-04-30T12:00", "2026-05-01T08:30",
                 step=timedelta(minutes=30), days=UK, on_holiday=OnHoliday.PREVIOUS)  # fmt: skip
    assert fired.started == ["2026-05-01T08:00Z", "2026-05-04T08:00Z"]
    assert fired.of(Decision.MOVED_HOLIDAY) == ["2026-05-04T08:00Z"]


def test_catch_up_starts_the_latest_occurrence_the_calendar_does_not_skip() -> None:
    """catchup=1 after an outage over a weekend: Friday's run, the weekend's skipped."""
    occurrences = CronOccurrences(cron.parse("0 9 * * *", LONDON))
    rule = HolidayRule(UK, OnHoliday.SKIP, ZoneInfo(LONDON))
    thursday, monday_8 = to_ms(utc("2026-03-12T09:00")), to_ms(utc("2026-03-16T08:00"))
    state = PlanInput(
        key="k", overlap=Overlap.ALLOW, catchup=1, catchup_window_ms=None, jitter_ms=None,
        end_ms=None, next_fire_ms=thursday, buffered_ms=None, paused_ms=None,
        active_run_ids=(), now_ms=monday_8, holidays=rule,
    )  # fmt: skip
    result = plan(state, occurrences)
    assert [_iso(run.occurrence_ms) for run in result.starts] == ["2026-03-13T09:00Z"]
    decided = [(d.decision, _iso(d.occurrence_ms)) for d in result.decisions]
    assert decided == [
        (Decision.DROPPED_CATCHUP, "2026-03-12T09:00Z"),
        (Decision.STARTED, "2026-03-13T09:00Z"),
        (Decision.SKIPPED_HOLIDAY, "2026-03-14T09:00Z"),
        (Decision.SKIPPED_HOLIDAY, "2026-03-15T09:00Z"),
    ]


BD_MONTHS = [
    # (expression, the month, its occurrences' local dates)
    ("0 9 1BD,LBD * *", "2026-08", ["2026-08-03", "2026-08-28"]),  # Sat 1st; holiday 31st
    ("0 9 1BD,LBD * *", "2026-05", ["2026-05-01", "2026-05-29"]),  # ends on a Sunday
    ("0 9 1BD,LBD * *", "2027-01", ["2027-01-04", "2027-01-29"]),  # holiday 1st, Fri
    ("0 9 2BD * *", "2027-01", ["2027-01-05"]),
    ("0 9 3BD * *", "2026-05", ["2026-05-06"]),  # counts past the holiday Monday
    ("0 9 LBD * *", "2026-12", ["2026-12-31"]),  # after Christmas and its Monday
]


@pytest.mark.parametrize(("expr", "month", "dates"), BD_MONTHS)
def test_business_day_words_across_months_starting_or_ending_on_days_off(
    expr: str, month: str, dates: list[str]
) -> None:
    first = datetime.fromisoformat(f"{month}-01")
    end = (first + timedelta(days=31)).replace(day=1) - timedelta(hours=1)
    fired = fire(expr, LONDON, first.isoformat(), end.isoformat(), step=timedelta(hours=6),
                 days=UK)  # fmt: skip
    zone = ZoneInfo(LONDON)
    assert [from_ms(r.occurrence_ms).astimezone(zone).date().isoformat() for r in fired.runs] == (
        dates
    )


# -- properties ------------------------------------------------------------------------------

holiday_sets = st.frozensets(
    st.dates(min_value=date(2026, 1, 1), max_value=date(2026, 12, 31)), max_size=40
)
zones = st.sampled_from([LONDON, NY, LORD_HOWE, SANTIAGO, CAIRO, HAVANA, "UTC"])


@settings(max_examples=60, deadline=None)
@given(
    holidays=holiday_sets,
    zone=zones,
    policy=st.sampled_from([OnHoliday.NEXT, OnHoliday.PREVIOUS]),
    hour=st.integers(0, 23),
    start=st.dates(min_value=date(2026, 1, 5), max_value=date(2026, 11, 20)),
)
def test_a_moved_occurrence_runs_on_a_business_day_and_ids_stay_unique(
    holidays: frozenset[date], zone: str, policy: OnHoliday, hour: int, start: date
) -> None:
    days = BusinessDays("cal", holidays)
    end = start + timedelta(days=14)
    fired = fire(f"0 {hour} * * *", zone, start.isoformat(), end.isoformat(),
                 step=timedelta(hours=3), days=days, on_holiday=policy)  # fmt: skip
    ids = [run.run_id for run in fired.runs]
    assert len(ids) == len(set(ids))
    local = ZoneInfo(zone)
    for entry in fired.decisions:
        if entry.decision is Decision.MOVED_HOLIDAY:
            (run,) = [run for run in fired.runs if run.run_id == entry.run_id]
            assert days.is_business_day(from_ms(run.available_ms).astimezone(local).date())


@settings(max_examples=40, deadline=None)
@given(
    zone=zones,
    minute=st.sampled_from([0, 15, 30, 45]),
    hour=st.integers(0, 3),
    start=st.sampled_from(["2026-03-06", "2026-03-27", "2026-04-02", "2026-09-04",
                           "2026-10-01", "2026-10-23", "2026-10-29"]),
)  # fmt: skip
def test_both_never_starts_one_instant_twice_and_each_run_has_its_own_id(
    zone: str, minute: int, hour: int, start: str
) -> None:
    end = (datetime.fromisoformat(start) + timedelta(days=4)).isoformat()
    fired = fire(f"{minute} {hour} * * *", zone, start, end, dst_repeat="both")
    instants = [run.occurrence_ms for run in fired.runs]
    assert len(instants) == len(set(instants))
    assert len({run.run_id for run in fired.runs}) == len(instants)
