"""The pure schedule rules outside firing (``_policy``), without a database."""

from __future__ import annotations

from dataclasses import replace

import pytest

from tickwork._rules.policy import (
    current_occurrence,
    due_at,
    first_occurrence_after,
    placement_on_register,
    registration,
    transition,
)
from tickwork._values.models import ScheduleState
from tickwork._values.records import FiringState, ScheduleRecord, StoredSchedule
from tickwork.errors import ConfigError

ACTIVE, PAUSED, INACTIVE = ScheduleState.ACTIVE, ScheduleState.PAUSED, ScheduleState.INACTIVE
T0 = 1_772_366_400_000  # 2026-03-01T12:00:00Z (a Sunday)
MINUTE = 60_000
HOUR = 60 * MINUTE


def record(**changes: object) -> ScheduleRecord:
    fields: dict[str, object] = dict(
        key="k", workflow="wf", version="1", input_json=None, cron=None, every_ms=HOUR,
        timezone="UTC", overlap="allow", catchup=1, catchup_window_ms=None, jitter_ms=None,
        pool="default", priority=0, retry_json=None, start_ms=None, end_ms=None,
        definition="d1",
    )  # fmt: skip
    fields.update(changes)
    return ScheduleRecord(**fields)  # type: ignore[arg-type]


def stored(firing: FiringState, *, anchor_ms: int = T0, **changes: object) -> StoredSchedule:
    return StoredSchedule(record(**changes), 3, anchor_ms, firing)


NOW = T0 + 90 * MINUTE  # between the first (T0+1h) and second (T0+2h) occurrences
NEXT = T0 + 2 * HOUR
RUNNING = FiringState(ACTIVE, NEXT, NEXT)
BUFFERED = FiringState(ACTIVE, NEXT, NEXT, buffered_ms=T0 + HOUR)
ON_PAUSE = FiringState(PAUSED, NEXT, None, buffered_ms=T0 + HOUR, paused_ms=T0)
OFF = FiringState(INACTIVE, NEXT, None)


# -- transition --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("before", "action", "after"),
    [
        pytest.param(RUNNING, "pause", FiringState(PAUSED, NEXT, None, paused_ms=NOW),
                     id="pause-stops-due-and-notes-the-start"),
        pytest.param(replace(RUNNING, paused_ms=T0, resumed_ms=T0 + 10), "pause",
                     FiringState(PAUSED, NEXT, None, paused_ms=T0),
                     id="pause-after-an-undecided-pause-keeps-its-start"),
        pytest.param(ON_PAUSE, "resume",
                     FiringState(ACTIVE, NEXT, NOW, T0 + HOUR, paused_ms=T0, resumed_ms=NOW),
                     id="resume-keeps-next-and-wakes-a-buffered-occurrence-now"),
        pytest.param(replace(ON_PAUSE, buffered_ms=None), "resume",
                     FiringState(ACTIVE, NEXT, NEXT, paused_ms=T0, resumed_ms=NOW),
                     id="resume-is-due-at-the-kept-next-occurrence"),
        pytest.param(BUFFERED, "deactivate", FiringState(INACTIVE, NEXT, None),
                     id="deactivate-forgets-buffered-and-pause"),
        pytest.param(ON_PAUSE, "deactivate", FiringState(INACTIVE, NEXT, None),
                     id="deactivate-a-paused-schedule"),
        pytest.param(FiringState(INACTIVE, T0, None), "activate",
                     FiringState(ACTIVE, NEXT, NEXT),
                     id="activate-starts-afresh-after-now"),
        pytest.param(ON_PAUSE, "activate", FiringState(ACTIVE, NEXT, NEXT),
                     id="activate-a-paused-schedule-forgets-pause-and-buffer"),
    ],
)  # fmt: skip
def test_transition_changes_state_and_due_time(
    before: FiringState, action: str, after: FiringState
) -> None:
    assert transition(stored(before), action, NOW) == after


@pytest.mark.parametrize(
    ("before", "action"),
    [
        (RUNNING, "resume"),
        (RUNNING, "activate"),
        (ON_PAUSE, "pause"),
        (OFF, "pause"),
        (OFF, "resume"),
        (OFF, "deactivate"),
        (RUNNING, "explode"),
    ],
)
def test_transition_to_the_state_it_has_changes_nothing(before: FiringState, action: str) -> None:
    assert transition(stored(before), action, NOW) is None


def test_activate_with_no_occurrence_left_is_active_but_never_due() -> None:
    ended = stored(OFF, end_ms=T0 + HOUR)
    assert transition(ended, "activate", NOW) == FiringState(ACTIVE, None, None)


@pytest.mark.parametrize(
    ("state", "next_fire", "buffered", "due"),
    [
        (ACTIVE, NEXT, None, NEXT),
        (ACTIVE, None, None, None),
        (ACTIVE, NEXT, T0, NOW),
        (ACTIVE, None, T0, NOW),
        (ACTIVE, T0, T0, T0),  # an overdue occurrence is due at once anyway
        (PAUSED, NEXT, T0, None),
        (INACTIVE, NEXT, None, None),
    ],
)
def test_due_at_follows_state_and_a_buffered_occurrence_is_due_now(
    state: ScheduleState, next_fire: int | None, buffered: int | None, due: int | None
) -> None:
    assert due_at(state, next_fire, buffered, NOW) == due


# -- occurrences -------------------------------------------------------------------------


def test_first_occurrence_is_never_at_registration() -> None:
    assert first_occurrence_after(record(), T0, T0) == T0 + HOUR
    cron = record(every_ms=None, cron="0 * * * *")
    assert first_occurrence_after(cron, T0, T0) == T0 + HOUR


def test_first_occurrence_respects_start_at_and_end_at() -> None:
    start = T0 + 10 * HOUR
    assert first_occurrence_after(record(start_ms=start), start, T0) == start + HOUR
    assert first_occurrence_after(record(end_ms=T0 + 30 * MINUTE), T0, T0) is None


def test_an_occurrence_past_year_9999_is_refused() -> None:
    last_day = 253_402_214_400_000  # 9999-12-31T00:00:00Z
    with pytest.raises(ConfigError, match="year 9999"):
        first_occurrence_after(record(every_ms=24 * HOUR), last_day, last_day)


@pytest.mark.parametrize(
    ("changes", "now", "occurrence"),
    [
        pytest.param({}, NOW, T0 + HOUR, id="latest-at-or-before-now"),
        pytest.param({}, T0 + HOUR, T0 + HOUR, id="an-occurrence-now-is-current"),
        pytest.param({}, T0 + 10 * MINUTE, T0, id="before-the-first-interval-its-anchor"),
        pytest.param({"end_ms": T0 + HOUR + 1}, T0 + 5 * HOUR, T0 + HOUR,
                     id="past-end-at-the-last-occurrence"),
        pytest.param({"start_ms": T0 + 10 * HOUR}, NOW, NOW, id="before-start-at-now"),
        pytest.param({"every_ms": None, "cron": "*/15 * * * *"}, NOW + 7 * MINUTE,
                     NOW, id="cron-latest-match"),
    ],
)  # fmt: skip
def test_current_occurrence(changes: dict[str, object], now: int, occurrence: int) -> None:
    assert current_occurrence(record(**changes), T0, now) == occurrence


# -- registration ------------------------------------------------------------------------


def test_placement_of_a_new_schedule_starts_from_now() -> None:
    assert placement_on_register(record(), None, NOW) == (NOW, NOW + HOUR)
    start = T0 + 10 * HOUR
    assert placement_on_register(record(start_ms=start), None, NOW) == (start, start + HOUR)


def test_placement_keeps_anchor_and_next_when_the_timing_is_unchanged() -> None:
    again = record(definition="d2", input_json='{"n":2}')
    assert placement_on_register(again, stored(RUNNING), NOW) == (T0, NEXT)


def test_placement_starts_afresh_when_the_timing_changed() -> None:
    faster = record(every_ms=MINUTE, definition="d2")
    assert placement_on_register(faster, stored(RUNNING), NOW) == (NOW, NOW + MINUTE)


def test_placement_drops_a_kept_next_that_new_bounds_exclude() -> None:
    ended = record(end_ms=T0 + HOUR + 30 * MINUTE, definition="d2")
    assert placement_on_register(ended, stored(RUNNING), NOW) == (T0, None)


def test_registering_a_new_key_creates_it_active_and_due_at_its_first_occurrence() -> None:
    plan = registration(record(), None, now_ms=NOW, on_conflict="update", paused=None)
    assert (plan.outcome, plan.revision) == ("created", 1)
    assert plan.row == StoredSchedule(record(), 1, NOW, FiringState(ACTIVE, NOW + HOUR, NOW + HOUR))


def test_registering_a_new_key_paused_is_never_due_and_notes_the_pause() -> None:
    plan = registration(record(), None, now_ms=NOW, on_conflict="update", paused=True)
    assert plan.row is not None
    assert plan.row.firing == FiringState(PAUSED, NOW + HOUR, None, paused_ms=NOW)


@pytest.mark.parametrize("on_conflict", ["update", "error", "keep"])
def test_registering_the_same_definition_changes_nothing(on_conflict: str) -> None:
    plan = registration(record(), stored(RUNNING), now_ms=NOW, on_conflict=on_conflict,
                        paused=None)  # fmt: skip
    assert (plan.outcome, plan.revision, plan.row) == ("unchanged", 3, None)


def test_registering_the_same_definition_paused_pauses_it() -> None:
    plan = registration(record(), stored(RUNNING), now_ms=NOW, on_conflict="update", paused=True)
    assert (plan.outcome, plan.revision) == ("unchanged", 3)
    assert plan.row == stored(FiringState(PAUSED, NEXT, None, paused_ms=NOW))


def test_registering_paused_when_already_paused_writes_nothing() -> None:
    plan = registration(record(), stored(ON_PAUSE), now_ms=NOW, on_conflict="keep", paused=True)
    assert (plan.outcome, plan.row) == ("unchanged", None)


def test_another_definition_with_error_is_a_conflict_and_ignores_paused() -> None:
    other = record(definition="d2")
    plan = registration(other, stored(RUNNING), now_ms=NOW, on_conflict="error", paused=True)
    assert (plan.outcome, plan.revision, plan.row) == ("conflict", 3, None)


def test_another_definition_with_keep_is_kept_but_paused_still_applies() -> None:
    other = record(definition="d2")
    kept = registration(other, stored(RUNNING), now_ms=NOW, on_conflict="keep", paused=None)
    assert (kept.outcome, kept.revision, kept.row) == ("kept", 3, None)
    paused = registration(other, stored(RUNNING), now_ms=NOW, on_conflict="keep", paused=True)
    assert paused.outcome == "kept"
    assert paused.row is not None and paused.row.record == record()  # the old definition
    assert paused.row.firing.state is PAUSED


def test_another_definition_updates_in_place_and_bumps_the_revision() -> None:
    other = record(definition="d2", input_json='{"n":2}')
    plan = registration(other, stored(RUNNING), now_ms=NOW, on_conflict="update", paused=None)
    assert (plan.outcome, plan.revision) == ("updated", 4)
    assert plan.row == StoredSchedule(other, 4, T0, RUNNING)


def test_an_update_keeps_a_paused_schedule_paused_and_not_due() -> None:
    other = record(definition="d2", every_ms=MINUTE)
    plan = registration(other, stored(ON_PAUSE), now_ms=NOW, on_conflict="update", paused=None)
    assert plan.row is not None
    assert plan.row.firing == replace(ON_PAUSE, next_fire_ms=NOW + MINUTE)


def test_an_update_keeps_an_earlier_wake_up_of_a_buffered_occurrence() -> None:
    woken = replace(BUFFERED, due_ms=NOW)  # its earlier run ended: due now
    later = record(definition="d2")
    plan = registration(later, stored(woken), now_ms=NOW, on_conflict="update", paused=None)
    assert plan.row is not None and plan.row.firing.due_ms == NOW


def test_an_update_with_paused_false_resumes() -> None:
    other = record(definition="d2")
    plan = registration(other, stored(ON_PAUSE), now_ms=NOW, on_conflict="update", paused=False)
    assert plan.row is not None
    assert (plan.outcome, plan.revision) == ("updated", 4)
    assert plan.row.firing == FiringState(
        ACTIVE, NEXT, NOW, T0 + HOUR, paused_ms=T0, resumed_ms=NOW
    )
