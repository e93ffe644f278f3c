"""The pure rules of ``max_runs`` and ``deadline``, as tables: what the planner starts
under a limit (firing and backfill), when a schedule deactivates itself and with what
note, when activating it is refused, and whether and why a run missed its deadline."""

from __future__ import annotations

from dataclasses import replace

import pytest

from tickwork._rules.backfill import plan_backfill
from tickwork._rules.occurrences import IntervalOccurrences
from tickwork._rules.planning import PlanInput, plan
from tickwork._rules.policy import deadline_reason, max_runs_note, spent, transition
from tickwork._values.ids import occurrence_run_id
from tickwork._values.models import Decision, Overlap, RunStatus, ScheduleAction, ScheduleState
from tickwork._values.records import FiringState, ScheduleRecord, StoredSchedule
from tickwork.errors import ConfigError

MIN = 60_000
EVERY_MINUTE = IntervalOccurrences(anchor_ms=0, every_ms=MIN)


def state(**changes: object) -> PlanInput:
    base = PlanInput(
        key="k", overlap=Overlap.ALLOW, catchup=None, catchup_window_ms=None, jitter_ms=None,
        end_ms=None, next_fire_ms=10 * MIN, buffered_ms=None, paused_ms=None,
        active_run_ids=(), now_ms=10 * MIN,
    )  # fmt: skip
    return replace(base, **changes)  # type: ignore[arg-type]


def summary(result: object) -> list[tuple[str, int]]:
    return [(d.decision.value, d.occurrence_ms // MIN) for d in result.decisions]  # type: ignore[attr-defined]


# (what is due, max_runs, runs counted, the decisions, the minutes started)
FIRING = [
    ("one due, no limit", {}, None, 0, [("started", 10)], [10]),
    ("one due, runs left", {}, 3, 2, [("started", 10)], [10]),
    ("one due, none left", {}, 3, 3, [("max_runs_reached", 10)], []),
    ("one due, counted past a lowered limit", {}, 2, 5, [("max_runs_reached", 10)], []),
    (
        "catch-up of four, two left",
        {"now_ms": 13 * MIN},
        5,
        3,
        [("started", 10), ("started", 11), ("max_runs_reached", 12), ("max_runs_reached", 13)],
        [10, 11],
    ),
    (
        "overlap skip does not spend the limit",
        {"overlap": Overlap.SKIP, "active_run_ids": ("earlier",), "now_ms": 11 * MIN},
        1,
        0,
        [("skipped_overlap", 10), ("skipped_overlap", 11)],
        [],
    ),
    (
        "a triggered occurrence's own run counts nothing",
        {"active_run_ids": (occurrence_run_id("k", 10 * MIN),), "now_ms": 11 * MIN},
        1,
        0,
        [("started", 10), ("started", 11)],
        [10, 11],
    ),
    (
        "a buffered occurrence waits for none left",
        {"buffered_ms": 9 * MIN, "overlap": Overlap.BUFFER_ONE, "next_fire_ms": 11 * MIN},
        4,
        4,
        [],
        [],
    ),
    (
        "a buffered occurrence starts with one left, the due one does not",
        {"buffered_ms": 9 * MIN, "overlap": Overlap.BUFFER_ONE},
        4,
        3,
        [("started", 9), ("max_runs_reached", 10)],
        [9],
    ),
]


@pytest.mark.parametrize(
    ("changes", "max_runs", "counted", "expected", "started"),
    [pytest.param(*case[1:], id=case[0]) for case in FIRING],
)
def test_the_planner_starts_no_more_than_the_runs_left(
    changes: dict[str, object],
    max_runs: int | None,
    counted: int,
    expected: list[tuple[str, int]],
    started: list[int],
) -> None:
    result = plan(state(max_runs=max_runs, runs_counted=counted, **changes), EVERY_MINUTE)
    assert summary(result) == expected
    assert [run.occurrence_ms // MIN for run in result.starts] == started
    for decision in result.decisions:
        if decision.decision is Decision.MAX_RUNS_REACHED:
            assert f"max_runs={max_runs}" in decision.reason


@pytest.mark.parametrize(
    ("overlap", "counted", "expected"),
    [
        (Overlap.ALLOW, 1, [("backfilled", 1), ("backfilled", 2), ("max_runs_reached", 3)]),
        (
            Overlap.ALLOW,
            3,
            [("max_runs_reached", 1), ("max_runs_reached", 2), ("max_runs_reached", 3)],
        ),
        (
            Overlap.CANCEL_PREVIOUS,
            3,
            [("skipped_overlap", 1), ("skipped_overlap", 2), ("max_runs_reached", 3)],
        ),
        # buffer_all starts the first and queues the rest: each counts when its turn comes
        # (firing decides it then); with none left, none starts, so none waits
        (Overlap.BUFFER_ALL, 2, [("backfilled", 1), ("backfilled", 2), ("backfilled", 3)]),
        (
            Overlap.BUFFER_ALL,
            3,
            [("max_runs_reached", 1), ("max_runs_reached", 2), ("max_runs_reached", 3)],
        ),
    ],
)
def test_a_backfill_starts_no_more_than_the_runs_left(
    overlap: Overlap, counted: int, expected: list[tuple[str, int]]
) -> None:
    result = plan_backfill(
        state(max_runs=3, runs_counted=counted), [1 * MIN, 2 * MIN, 3 * MIN], overlap
    )
    assert summary(result) == expected
    started = [run.run_id for run in result.starts]
    assert all(run_id in result.backfilled for run_id in started)
    assert len(started) <= 3 - counted


def stored(
    max_runs: int | None, counted: int, state: ScheduleState = ScheduleState.ACTIVE
) -> StoredSchedule:
    record = ScheduleRecord(
        key="k", workflow="w", version="1", input_json=None, cron=None, every_ms=MIN,
        timezone="UTC", overlap=Overlap.ALLOW, catchup=1, catchup_window_ms=None,
        jitter_ms=None, pool="default", priority=0, retry_json=None, start_ms=None,
        end_ms=None, definition="", max_runs=max_runs,
    )  # fmt: skip
    due = 5 * MIN if state is ScheduleState.ACTIVE else None
    return StoredSchedule(record, 1, 0, FiringState(state, 5 * MIN, due, 4 * MIN), counted)


@pytest.mark.parametrize(
    ("max_runs", "counted", "state", "deactivates"),
    [
        (None, 1_000, ScheduleState.ACTIVE, False),
        (3, 2, ScheduleState.ACTIVE, False),
        (3, 3, ScheduleState.ACTIVE, True),
        (3, 4, ScheduleState.ACTIVE, True),  # the limit was lowered below the count
        (3, 3, ScheduleState.PAUSED, True),
        (3, 3, ScheduleState.INACTIVE, False),  # already so: nothing to write
    ],
)
def test_a_schedule_deactivates_itself_once_its_runs_are_spent(
    max_runs: int | None, counted: int, state: ScheduleState, deactivates: bool
) -> None:
    firing = spent(stored(max_runs, counted, state), now_ms=6 * MIN)
    if not deactivates:
        assert firing is None
        return
    assert firing is not None
    assert (firing.state, firing.due_ms, firing.buffered_ms) == (ScheduleState.INACTIVE, None, None)


@pytest.mark.parametrize(
    ("max_runs", "note"),
    [(1, "started its 1 run (max_runs=1)"), (10, "started its 10 runs (max_runs=10)")],
)
def test_the_note_says_how_many_runs_it_started(max_runs: int, note: str) -> None:
    assert max_runs_note(max_runs) == note


def test_activating_a_spent_schedule_is_refused_and_one_with_runs_left_is_not() -> None:
    with pytest.raises(ConfigError, match=r"'k' started its 3 runs \(max_runs=3\)"):
        transition(stored(3, 3, ScheduleState.INACTIVE), ScheduleAction.ACTIVATE, 6 * MIN)
    activated = transition(stored(4, 3, ScheduleState.INACTIVE), ScheduleAction.ACTIVATE, 6 * MIN)
    assert activated is not None and activated.state is ScheduleState.ACTIVE


DEADLINE = 100 * MIN
# (status, finished at, now, missed?, words in the reason)
DEADLINES = [
    (RunStatus.COMPLETED, DEADLINE - MIN, DEADLINE + MIN, None),
    (RunStatus.COMPLETED, DEADLINE, DEADLINE + MIN, None),  # at the deadline: in time
    (RunStatus.COMPLETED, DEADLINE + 3 * MIN, DEADLINE + 5 * MIN, "completed 3 min late"),
    (RunStatus.RUNNING, None, DEADLINE + 2 * MIN, "still running 2 min after it"),
    (RunStatus.PENDING, None, DEADLINE, "still pending"),
    (RunStatus.SLEEPING, None, DEADLINE + 1000, "still sleeping 1 s after it"),
    (RunStatus.WAITING, None, DEADLINE + MIN, "still waiting"),
    (RunStatus.FAILED, DEADLINE - 10 * MIN, DEADLINE, "ended failed"),
    (RunStatus.CANCELLED, DEADLINE - 10 * MIN, DEADLINE, None),  # decided: no miss
    (RunStatus.CANCELLED, DEADLINE + 10 * MIN, DEADLINE + 10 * MIN, None),
    (RunStatus.RUNNING, None, DEADLINE - 1, None),  # not yet passed
    (RunStatus.FAILED, DEADLINE - 10 * MIN, DEADLINE - 1, None),  # not yet passed
]


@pytest.mark.parametrize(("status", "finished", "now", "words"), DEADLINES)
def test_whether_and_why_a_run_missed_its_deadline(
    status: RunStatus, finished: int | None, now: int, words: str | None
) -> None:
    reason = deadline_reason("k@x", status, finished, DEADLINE, now)
    if words is None:
        assert reason is None
        return
    assert reason is not None and words in reason
    assert reason.startswith("run k@x had not completed by its deadline 1970-01-01T01:40:00Z")
