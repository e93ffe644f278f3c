"""The planner's calendar decisions where they meet overlap, pauses and DST (issue 32's
leftovers), table-tested without a database:

- an occurrence the calendar moved and overlap then skipped, buffered or queued says both
  in its history entry (the calendar, the day, what overlap did); a buffered or queued
  moved occurrence whose turn comes starts on the business day it moved to, not on the
  holiday; ``cancel_previous`` moves the run it starts;
- ``on_holiday="previous"`` with ``dst_gap="skip"``: an occurrence the gap drops is
  recorded ``skipped_dst``, never moved to the previous business day and started;
- an occurrence whose previous business day passed during a pause is missed while paused;
  one whose previous business day passed before registration is not the first occurrence.
"""

from __future__ import annotations

from datetime import UTC, date, datetime
from zoneinfo import ZoneInfo

import pytest

from tickwork import cron
from tickwork._rules.occurrences import CronOccurrences, HolidayRule
from tickwork._rules.planning import PlanInput, plan
from tickwork._rules.policy import current_occurrence, first_occurrence_after
from tickwork._values.business_days import BusinessDays
from tickwork._values.clock import to_ms
from tickwork._values.ids import occurrence_run_id
from tickwork._values.models import Decision, OnHoliday, Overlap
from tickwork._values.records import ScheduleRecord

LONDON = "Europe/London"
# 2026-03-03 (a Tuesday) and 2026-03-09 (a Monday) are holidays
OFFICE = BusinessDays("office", frozenset({date(2026, 3, 3), date(2026, 3, 9)}))


def ms(*parts: int) -> int:
    return to_ms(datetime(*parts, tzinfo=UTC))  # type: ignore[misc]


def state(
    policy: OnHoliday, overlap: Overlap, next_fire: int, now: int, **changes: object
) -> PlanInput:
    fields: dict[str, object] = dict(
        key="k", overlap=overlap, catchup=1, catchup_window_ms=None, jitter_ms=None,
        end_ms=None, next_fire_ms=next_fire, buffered_ms=None, paused_ms=None,
        active_run_ids=("k@earlier",), now_ms=now,
        holidays=HolidayRule(OFFICE, policy, ZoneInfo("UTC")),
    )  # fmt: skip
    fields.update(changes)
    return PlanInput(**fields)  # type: ignore[arg-type]


DAILY = CronOccurrences(cron.parse("0 9 * * *", "UTC"))
TUESDAY = ms(2026, 3, 3, 9)


@pytest.mark.parametrize(
    ("overlap", "decision", "what_overlap_did"),
    [
        (Overlap.BUFFER_ONE, Decision.BUFFERED, "overlap=buffer_one: waits for earlier run"),
        (Overlap.SKIP, Decision.SKIPPED_OVERLAP, "overlap=skip: earlier run"),
        (Overlap.BUFFER_ALL, Decision.BUFFERED, "overlap=buffer_all: waits for earlier run"),
    ],
)
@pytest.mark.parametrize(
    ("policy", "moved_to"), [(OnHoliday.NEXT, "2026-03-04"), (OnHoliday.PREVIOUS, "2026-03-02")]
)
def test_a_moved_occurrence_that_overlap_holds_back_says_the_move_and_the_overlap(
    overlap: Overlap, decision: Decision, what_overlap_did: str, policy: OnHoliday, moved_to: str
) -> None:
    result = plan(state(policy, overlap, TUESDAY, TUESDAY + 1), DAILY)
    (entry,) = [d for d in result.decisions if d.occurrence_ms == TUESDAY]
    assert entry.decision is decision and result.starts == []
    assert entry.reason.startswith("calendar 'office': 2026-03-03 is a holiday: moved to ")
    assert moved_to in entry.reason and f"on_holiday={policy.value}" in entry.reason
    assert what_overlap_did in entry.reason and "k@earlier" in entry.reason


def test_a_second_moved_occurrence_that_buffer_one_drops_says_the_move_too() -> None:
    result = plan(
        state(OnHoliday.NEXT, Overlap.BUFFER_ONE, TUESDAY, TUESDAY + 1, buffered_ms=TUESDAY - 1),
        DAILY,
    )
    (entry,) = [d for d in result.decisions if d.occurrence_ms == TUESDAY]
    assert entry.decision is Decision.SKIPPED_OVERLAP
    assert "'office'" in entry.reason and "an occurrence is already buffered" in entry.reason


def test_catch_up_of_moved_occurrences_says_the_move_and_what_overlap_did() -> None:
    # Missed Monday and Tuesday (a holiday, moved to Wednesday) while an earlier run runs:
    # catchup=2 decides both; buffer_one buffers Monday and drops Tuesday, saying why.
    monday = ms(2026, 3, 2, 9)
    result = plan(
        state(OnHoliday.NEXT, Overlap.BUFFER_ONE, monday, TUESDAY + 3_600_000, catchup=2),
        DAILY,
    )
    decided = {d.occurrence_ms: d for d in result.decisions}
    assert decided[monday].decision is Decision.BUFFERED
    assert "calendar" not in decided[monday].reason  # a business day: no move to tell
    assert decided[TUESDAY].decision is Decision.SKIPPED_OVERLAP
    assert "moved to 2026-03-04" in decided[TUESDAY].reason


def test_a_buffered_moved_occurrence_starts_on_the_day_it_moved_to_not_on_the_holiday() -> None:
    # The earlier run ended on the holiday itself: the buffered run waits for Wednesday.
    result = plan(
        state(OnHoliday.NEXT, Overlap.BUFFER_ONE, TUESDAY + 86_400_000, TUESDAY + 3_600_000,
              buffered_ms=TUESDAY, active_run_ids=()),
        DAILY,
    )  # fmt: skip
    (run,) = result.starts
    assert (run.occurrence_ms, run.available_ms) == (TUESDAY, ms(2026, 3, 4, 9))
    (entry,) = result.decisions
    assert entry.decision is Decision.STARTED and "moved to 2026-03-04" in entry.reason


def test_a_queued_moved_occurrence_starts_on_the_day_it_moved_to() -> None:
    result = plan(
        state(OnHoliday.NEXT, Overlap.BUFFER_ALL, TUESDAY + 86_400_000, TUESDAY + 3_600_000,
              buffered_ms=TUESDAY, waiting=1, queued_ms=(TUESDAY,), active_run_ids=()),
        DAILY,
    )  # fmt: skip
    (run,) = result.starts
    assert run.available_ms == ms(2026, 3, 4, 9)
    assert "'office'" in result.decisions[0].reason


def test_cancel_previous_starts_a_moved_occurrence_where_the_calendar_moved_it() -> None:
    result = plan(state(OnHoliday.NEXT, Overlap.CANCEL_PREVIOUS, TUESDAY, TUESDAY + 1), DAILY)
    (run,) = result.starts
    assert run.available_ms == ms(2026, 3, 4, 9)
    kinds = [(d.decision, d.occurrence_ms) for d in result.decisions]
    assert kinds == [(Decision.CANCELLED_PREVIOUS, TUESDAY), (Decision.MOVED_HOLIDAY, TUESDAY)]
    assert result.cancel_run_ids == ["k@earlier"]


# -- "previous" with dst_gap="skip" ------------------------------------------------------------

# Europe/London, Sunday 2026-03-29: 01:00 jumps to 02:00, so 01:30 does not exist that day;
# the Sunday is a weekend day, whose "previous" business day is Friday 2026-03-27.
LONDON_WEEKDAYS = BusinessDays("uk")


def walk(expr: str, start: int, end: int, step: int = 30 * 60_000) -> list[tuple[str, str]]:
    """Every pass of ``expr`` (dst_gap="skip", on_holiday="previous") registered at
    ``start``, as the store hands each pass's next occurrence and wake-up to the next."""
    zone = ZoneInfo(LONDON)
    occurrences = CronOccurrences(
        cron.parse(expr, LONDON, dst_gap="skip", calendar=LONDON_WEEKDAYS)  # type: ignore[arg-type]
    )
    rule = HolidayRule(LONDON_WEEKDAYS, OnHoliday.PREVIOUS, zone)
    record = ScheduleRecord(
        key="k", workflow="wf", version="1", input_json=None, cron=expr, every_ms=None,
        timezone=LONDON, overlap=Overlap.ALLOW, catchup=1, catchup_window_ms=None,
        jitter_ms=None, pool="default", priority=0, retry_json=None, start_ms=None,
        end_ms=None, definition="d", dst_gap=cron.DstGap.SKIP, calendar="uk",
        on_holiday=OnHoliday.PREVIOUS, business_days=LONDON_WEEKDAYS,
    )  # fmt: skip
    next_fire = first_occurrence_after(record, start, start)
    assert next_fire is not None
    due: int | None = min(next_fire, rule.wake(occurrences, next_fire))
    seen: list[tuple[str, str]] = []
    now = start
    while now < end:
        now += step
        if due is None or due > now:
            continue
        result = plan(
            state(OnHoliday.PREVIOUS, Overlap.ALLOW, next_fire, now, holidays=rule,  # type: ignore[arg-type]
                  active_run_ids=()),
            occurrences,
        )  # fmt: skip
        seen.extend((d.decision.value, _iso(d.occurrence_ms)) for d in result.decisions)
        next_fire, due = result.next_fire_ms, result.due_ms  # type: ignore[assignment]
    return seen


def _iso(at: int) -> str:
    return datetime.fromtimestamp(at / 1000, UTC).strftime("%m-%dT%H:%M")


def test_an_occurrence_the_gap_drops_is_skipped_not_moved_to_the_previous_business_day() -> None:
    # Sundays at 01:30 only: the one DST skips must not start on Friday.
    seen = walk("30 1 * * 0", ms(2026, 3, 25, 12), ms(2026, 3, 30, 12))
    assert seen == [("skipped_dst", "03-29T01:00")]


def test_a_weekend_moved_early_then_a_dropped_day_each_decided_once_in_order() -> None:
    # Daily at 01:30: Saturday moves to Friday; Sunday's is dropped by the gap, recorded
    # as it passes (not lost when Saturday is decided early on Friday).
    seen = walk("30 1 * * *", ms(2026, 3, 26, 12), ms(2026, 3, 30, 12))
    assert seen == [
        ("started", "03-27T01:30"),
        ("moved_holiday", "03-28T01:30"),
        ("skipped_dst", "03-29T01:00"),
        ("started", "03-30T00:30"),
    ]


# -- "previous" whose business day passed ------------------------------------------------------

MONDAYS = CronOccurrences(cron.parse("0 9 * * MON", "UTC"))
HOLIDAY_MONDAY, FRIDAY_BEFORE = ms(2026, 3, 9, 9), ms(2026, 3, 6, 9)


def test_a_move_into_a_pause_is_missed_while_paused_and_starts_nothing() -> None:
    # Paused over Friday 09:00, resumed Saturday: Monday's move to Friday has passed.
    saturday = ms(2026, 3, 7, 10)
    result = plan(
        state(OnHoliday.PREVIOUS, Overlap.ALLOW, HOLIDAY_MONDAY, saturday, active_run_ids=(),
              paused_ms=ms(2026, 3, 5, 12), resumed_ms=saturday),
        MONDAYS,
    )  # fmt: skip
    assert result.starts == []
    (entry,) = result.decisions
    assert (entry.decision, entry.occurrence_ms) == (Decision.MISSED_PAUSED, HOLIDAY_MONDAY)
    assert "'office'" in entry.reason and "2026-03-06" in entry.reason
    assert result.next_fire_ms == ms(2026, 3, 16, 9)


def test_a_move_before_the_pause_began_is_no_miss() -> None:
    # The worker is late (Saturday) but Friday 09:00 came before the pause: it starts.
    saturday = ms(2026, 3, 7, 10)
    result = plan(
        state(OnHoliday.PREVIOUS, Overlap.ALLOW, HOLIDAY_MONDAY, saturday, active_run_ids=(),
              paused_ms=ms(2026, 3, 6, 12), resumed_ms=saturday),
        MONDAYS,
    )  # fmt: skip
    (run,) = result.starts
    assert run.run_id == occurrence_run_id("k", HOLIDAY_MONDAY)
    assert run.available_ms == FRIDAY_BEFORE


@pytest.mark.parametrize(
    ("registered", "first"),
    [
        (ms(2026, 3, 6, 8), HOLIDAY_MONDAY),  # Friday 09:00 is ahead: Monday's is first
        (ms(2026, 3, 6, 10), ms(2026, 3, 16, 9)),  # it has passed: the Monday after
    ],
)
def test_the_first_occurrence_is_one_whose_run_time_is_after_registration(
    registered: int, first: int
) -> None:
    record = ScheduleRecord(
        key="k", workflow="wf", version="1", input_json=None, cron="0 9 * * MON",
        every_ms=None, timezone="UTC", overlap=Overlap.ALLOW, catchup=1,
        catchup_window_ms=None, jitter_ms=None, pool="default", priority=0, retry_json=None,
        start_ms=None, end_ms=None, definition="d", calendar="office",
        on_holiday=OnHoliday.PREVIOUS, business_days=OFFICE,
    )  # fmt: skip
    assert first_occurrence_after(record, registered, registered) == first


# -- walks bounded by days, not by a count of occurrences --------------------------------------

EVERY_SECOND = CronOccurrences(cron.parse("* * * * * *", "UTC"))


def test_previous_wakes_for_a_dense_cadence_as_for_a_daily_one() -> None:
    """Saturday 00:00:00 moves to Friday 00:00:00. A walk of 10,000 occurrences from
    Friday 09:00 never reached Saturday (a day holds 86,400): it woke at 09:00, and the
    weekend's runs, due on Friday from midnight, were decided only late that evening."""
    rule = HolidayRule(OFFICE, OnHoliday.PREVIOUS, ZoneInfo("UTC"))
    assert rule.wake(EVERY_SECOND, ms(2026, 3, 6, 9)) == ms(2026, 3, 6)
    # Monday the 9th is a holiday: from Sunday noon it moves to Friday the 6th
    assert rule.wake(EVERY_SECOND, ms(2026, 3, 8, 12)) == ms(2026, 3, 6)


@pytest.mark.parametrize(
    ("zone", "first", "wakes"),
    [
        # Santiago, 2026-04-05: midnight falls back to 23:00 (the hour after midnight of the
        # 4th repeats): the walk still moves on, day by day
        ("America/Santiago", "2026-04-03T12:00", "2026-04-03T03:00"),
        # and 2026-09-06: midnight is skipped, the day starts at 01:00
        ("America/Santiago", "2026-09-04T12:00", "2026-09-04T04:00"),
        ("Australia/Lord_Howe", "2026-10-02T12:00", "2026-10-01T13:30"),
    ],
)
def test_the_day_walk_crosses_midnights_that_dst_moves(zone: str, first: str, wakes: str) -> None:
    occurrences = CronOccurrences(cron.parse("*/30 * * * *", zone))
    rule = HolidayRule(BusinessDays("plain"), OnHoliday.PREVIOUS, ZoneInfo(zone))
    start = to_ms(datetime.fromisoformat(first).replace(tzinfo=UTC))
    woke = datetime.fromtimestamp(rule.wake(occurrences, start) / 1000, UTC)
    assert woke.strftime("%Y-%m-%dT%H:%M") == wakes


def test_catch_up_over_a_weekend_of_a_dense_cadence_starts_fridays_latest() -> None:
    """catchup=1 after an outage from Friday 22:00 to Sunday 23:00, one occurrence a
    second: the walk back stepped over the skipped weekend one occurrence at a time, ran
    out at 10,000 of them, started nothing and recorded each (and said the latest had
    started). Now: Friday's last starts, each weekend day is one entry with its count."""
    rule = HolidayRule(OFFICE, OnHoliday.SKIP, ZoneInfo("UTC"))
    result = plan(
        state(OnHoliday.SKIP, Overlap.ALLOW, ms(2026, 3, 6, 22), ms(2026, 3, 8, 23),
              holidays=rule, active_run_ids=()),
        EVERY_SECOND,
    )  # fmt: skip
    assert [run.occurrence_ms for run in result.starts] == [ms(2026, 3, 6, 23, 59, 59)]
    summary = [(d.decision, d.occurrence_ms, d.count) for d in result.decisions]
    assert summary == [
        (Decision.DROPPED_CATCHUP, ms(2026, 3, 6, 22), 7199),
        (Decision.STARTED, ms(2026, 3, 6, 23, 59, 59), 1),
        (Decision.SKIPPED_HOLIDAY, ms(2026, 3, 7), 10_000),
        (Decision.SKIPPED_HOLIDAY, ms(2026, 3, 8), 10_000),
    ]
    saturday = result.decisions[2]
    assert saturday.last_occurrence_ms == ms(2026, 3, 7, 23, 59, 59)
    assert "2026-03-07 is a weekend day" in saturday.reason
    assert "at least 10000 occurrences" in saturday.reason


def test_a_trigger_under_skip_with_a_dense_cadence_starts_fridays_latest() -> None:
    """On Sunday, one occurrence a second: the walk back over the weekend ran out at
    10,000 occurrences and answered a Sunday one, which the calendar skips."""
    record = ScheduleRecord(
        key="k", workflow="wf", version="1", input_json=None, cron="* * * * * *",
        every_ms=None, timezone="UTC", overlap=Overlap.ALLOW, catchup=1,
        catchup_window_ms=None, jitter_ms=None, pool="default", priority=0, retry_json=None,
        start_ms=None, end_ms=None, definition="d", calendar="office",
        on_holiday=OnHoliday.SKIP, business_days=OFFICE,
    )  # fmt: skip
    sunday = ms(2026, 3, 8, 12)
    assert current_occurrence(record, sunday, sunday) == ms(2026, 3, 6, 23, 59, 59)
