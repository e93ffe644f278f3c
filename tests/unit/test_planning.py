"""The pure planner: every overlap and catch-up policy in every situation, as a table."""

from __future__ import annotations

from dataclasses import replace

import pytest

from tickwork._rules.occurrences import IntervalOccurrences
from tickwork._rules.planning import (
    ALREADY_STARTED,
    CATCHUP_BATCH,
    Plan,
    PlanInput,
    PlannedDecision,
    PlannedRun,
    fires_ahead,
    plan,
    settle,
)
from tickwork._values.clock import LAST_MS
from tickwork._values.ids import jitter_ms, occurrence_run_id
from tickwork._values.models import Decision, Overlap

MIN = 60_000
EVERY_MINUTE = IntervalOccurrences(anchor_ms=0, every_ms=MIN)


def state(**changes: object) -> PlanInput:
    base = PlanInput(
        key="k",
        overlap=Overlap.ALLOW,
        catchup=1,
        catchup_window_ms=None,
        jitter_ms=None,
        end_ms=None,
        next_fire_ms=10 * MIN,
        buffered_ms=None,
        paused_ms=None,
        active_run_ids=(),
        now_ms=10 * MIN,
    )
    if changes.get("catchup") == "all":
        changes["catchup"] = None  # the planner's spelling of "all"
    return replace(base, **changes)  # type: ignore[arg-type]


def minutes(values: list[int]) -> list[int]:
    return [v // MIN for v in values]


def decisions(result: object) -> list[tuple[str, int, int]]:
    return [(d.decision.value, d.occurrence_ms // MIN, d.count) for d in result.decisions]  # type: ignore[attr-defined]


# (situation, policy changes, started minutes, decisions, next fire minute)
SITUATIONS = {
    "on time": dict(now_ms=10 * MIN),
    "late by 30 s": dict(now_ms=10 * MIN + 30_000),
    "long outage": dict(now_ms=20 * MIN),
    "paused": dict(now_ms=20 * MIN, paused_ms=12 * MIN + 1),
    "run in flight": dict(active_run_ids=("earlier",)),
    "buffered present": dict(active_run_ids=("earlier",), buffered_ms=9 * MIN),
}

CASES = [
    # catch-up policies, nothing in flight
    ("on time", {"catchup": 1}, [10], [("started", 10, 1)], 11),
    ("late by 30 s", {"catchup": 1}, [10], [("started", 10, 1)], 11),
    ("long outage", {"catchup": 1}, [20], [("dropped_catchup", 10, 10), ("started", 20, 1)], 21),
    (
        "long outage",
        {"catchup": 3},
        [18, 19, 20],
        [("dropped_catchup", 10, 8), ("started", 18, 1), ("started", 19, 1), ("started", 20, 1)],
        21,
    ),
    (
        "long outage",
        {"catchup": "all"},
        list(range(10, 21)),
        [("started", m, 1) for m in range(10, 21)],
        21,
    ),
    (
        "long outage",
        {"catchup": 1, "catchup_window_ms": 5 * MIN},
        [20],
        [("dropped_catchup", 10, 10), ("started", 20, 1)],
        21,
    ),
    (
        "long outage",
        {"catchup": "all", "catchup_window_ms": 2 * MIN},
        [18, 19, 20],
        [("dropped_catchup", 10, 8)] + [("started", m, 1) for m in (18, 19, 20)],
        21,
    ),
    (
        "paused",
        {"catchup": 1},
        [20],
        [("dropped_catchup", 10, 3), ("missed_paused", 13, 7), ("started", 20, 1)],
        21,
    ),
    # overlap policies with an earlier run in flight
    ("run in flight", {"overlap": Overlap.ALLOW}, [10], [("started", 10, 1)], 11),
    ("run in flight", {"overlap": Overlap.SKIP}, [], [("skipped_overlap", 10, 1)], 11),
    ("run in flight", {"overlap": Overlap.BUFFER_ONE}, [], [("buffered", 10, 1)], 11),
    (
        "run in flight",
        {"overlap": Overlap.CANCEL_PREVIOUS},
        [10],
        [("cancelled_previous", 10, 1), ("started", 10, 1)],
        11,
    ),
    ("buffered present", {"overlap": Overlap.BUFFER_ONE}, [], [("skipped_overlap", 10, 1)], 11),
    # overlap within one catch-up: the first start is itself "in flight" for the next
    (
        "long outage",
        {"catchup": 3, "overlap": Overlap.SKIP},
        [18],
        [
            ("dropped_catchup", 10, 8),
            ("started", 18, 1),
            ("skipped_overlap", 19, 1),
            ("skipped_overlap", 20, 1),
        ],
        21,
    ),
    (
        "long outage",
        {"catchup": 3, "overlap": Overlap.BUFFER_ONE},
        [18],
        [
            ("dropped_catchup", 10, 8),
            ("started", 18, 1),
            ("buffered", 19, 1),
            ("skipped_overlap", 20, 1),
        ],
        21,
    ),
]


@pytest.mark.parametrize(
    ("situation", "policy", "started", "expected", "next_fire"),
    CASES,
    ids=[f"{c[0]}-{c[1]}" for c in CASES],
)
def test_policy_in_situation(
    situation: str,
    policy: dict[str, object],
    started: list[int],
    expected: list[tuple[str, int, int]],
    next_fire: int,
) -> None:
    result = plan(state(**SITUATIONS[situation], **policy), EVERY_MINUTE)
    assert minutes([r.occurrence_ms for r in result.starts]) == started
    assert decisions(result) == expected
    assert result.next_fire_ms == next_fire * MIN


def test_cancel_previous_names_the_runs_to_cancel() -> None:
    result = plan(state(overlap=Overlap.CANCEL_PREVIOUS, active_run_ids=("a", "b")), EVERY_MINUTE)
    assert result.cancel_run_ids == ["a", "b"]


def test_buffered_occurrence_starts_once_the_earlier_run_ended() -> None:
    result = plan(
        state(
            overlap=Overlap.BUFFER_ONE,
            buffered_ms=9 * MIN,
            next_fire_ms=10 * MIN,
            now_ms=9 * MIN + 5,
        ),
        EVERY_MINUTE,
    )
    assert minutes([r.occurrence_ms for r in result.starts]) == [9]
    assert result.buffered_ms is None
    assert result.next_fire_ms == 10 * MIN  # the cadence itself is not yet due


def test_buffer_released_then_due_occurrence_meets_overlap() -> None:
    result = plan(
        state(overlap=Overlap.BUFFER_ONE, buffered_ms=9 * MIN, now_ms=10 * MIN), EVERY_MINUTE
    )
    assert minutes([r.occurrence_ms for r in result.starts]) == [9]
    assert decisions(result)[1] == ("buffered", 10, 1)
    assert result.buffered_ms == 10 * MIN


def test_nothing_due_changes_nothing() -> None:
    result = plan(state(now_ms=10 * MIN - 1), EVERY_MINUTE)
    assert result.starts == [] and result.decisions == []
    assert result.next_fire_ms == 10 * MIN


def test_catchup_all_is_batched_and_resumes_where_it_stopped() -> None:
    outage = state(catchup="all", now_ms=(10 + 3 * CATCHUP_BATCH) * MIN)
    first = plan(replace(outage, catchup=None), EVERY_MINUTE)
    assert len(first.starts) == CATCHUP_BATCH
    assert first.starts[0].occurrence_ms == 10 * MIN
    assert first.next_fire_ms == (10 + CATCHUP_BATCH) * MIN
    second = plan(replace(outage, catchup=None, next_fire_ms=first.next_fire_ms), EVERY_MINUTE)
    assert second.starts[0].occurrence_ms == (10 + CATCHUP_BATCH) * MIN


def test_end_at_stops_the_schedule() -> None:
    result = plan(state(now_ms=20 * MIN, end_ms=12 * MIN, catchup=5), EVERY_MINUTE)
    assert minutes([r.occurrence_ms for r in result.starts]) == [10, 11, 12]
    assert result.next_fire_ms is None


def test_run_ids_are_deterministic_and_jitter_delays_without_changing_them() -> None:
    jittered = plan(state(jitter_ms=30_000), EVERY_MINUTE)
    plain = plan(state(), EVERY_MINUTE)
    (run,) = jittered.starts
    assert run.run_id == plain.starts[0].run_id == occurrence_run_id("k", 10 * MIN)
    assert run.available_ms == 10 * MIN + jitter_ms("k", 10 * MIN, 30_000)
    assert 0 <= run.available_ms - 10 * MIN < 30_000


def test_jitter_is_spread_over_its_whole_range() -> None:
    delays = {jitter_ms("k", n * MIN, 10) for n in range(200)}
    assert delays == set(range(10))


def test_huge_outage_is_summarised_not_enumerated() -> None:
    year = 525_600 * MIN
    result = plan(state(now_ms=10 * MIN + year), EVERY_MINUTE)
    (dropped, started) = result.decisions
    assert dropped.decision is Decision.DROPPED_CATCHUP
    assert dropped.count == 10_000 and "at least" in dropped.reason
    assert started.occurrence_ms == 10 * MIN + year


def test_settle_turns_a_start_whose_run_exists_into_already_started() -> None:
    planned = Plan(
        starts=[PlannedRun(1, "r1", 1), PlannedRun(2, "r2", 2)],
        decisions=[
            PlannedDecision(Decision.STARTED, 1, "due", "r1"),
            PlannedDecision(Decision.STARTED, 2, "due", "r2"),
            PlannedDecision(Decision.SKIPPED_OVERLAP, 3, "busy"),
        ],
    )
    settled = settle(planned, {"r1"})
    assert [run.run_id for run in settled.starts] == ["r2"]
    assert [(d.decision, d.reason) for d in settled.decisions] == [
        (Decision.ALREADY_STARTED, ALREADY_STARTED),
        (Decision.STARTED, "due"),
        (Decision.SKIPPED_OVERLAP, "busy"),
    ]
    assert settle(planned, set()).starts == planned.starts


def test_settle_keeps_a_triggers_reason_before_the_explanation() -> None:
    planned = Plan(decisions=[PlannedDecision(Decision.TRIGGERED, 1, "manual: ops", "r1")])
    (decision,) = settle(planned, {"r1"}).decisions
    assert decision.decision is Decision.ALREADY_STARTED
    assert decision.reason == "manual: ops: the occurrence already has this run"


def test_only_allow_fires_ahead() -> None:
    assert [o for o in Overlap if fires_ahead(o)] == [Overlap.ALLOW]


def test_an_occurrence_near_year_9999_starts_by_the_last_instant_whatever_its_jitter() -> None:
    """Its run may start at the last instant a datetime holds, never after (a jitter
    added past it stored an instant no read survives)."""
    late = LAST_MS - 1000
    day = 86_400_000
    occurrences = IntervalOccurrences(anchor_ms=late - day, every_ms=day)
    result = plan(state(next_fire_ms=late, now_ms=late, jitter_ms=day), occurrences)
    (run,) = result.starts
    assert run.occurrence_ms == late and late <= run.available_ms <= LAST_MS


def test_a_schedule_whose_next_occurrence_passes_year_9999_has_none_left() -> None:
    late = LAST_MS - 1000
    occurrences = IntervalOccurrences(anchor_ms=late - MIN, every_ms=MIN)
    result = plan(state(next_fire_ms=late, now_ms=late), occurrences)
    assert [r.occurrence_ms for r in result.starts] == [late]
    assert result.next_fire_ms is None  # as past end_at: nothing more to fire
