"""The pure planner for overlap="buffer_all" and for a backfill's occurrences, as tables:
what starts, what joins the queue, what is dropped, and what waits afterwards."""

from __future__ import annotations

from dataclasses import replace

import pytest

from tickwork._rules.backfill import plan_backfill
from tickwork._rules.occurrences import IntervalOccurrences
from tickwork._rules.planning import MAX_WAITING, Plan, PlanInput, plan
from tickwork._values.ids import occurrence_run_id
from tickwork._values.models import Overlap

MIN = 60_000
EVERY_MINUTE = IntervalOccurrences(anchor_ms=0, every_ms=MIN)


def state(**changes: object) -> PlanInput:
    base = PlanInput(
        key="k",
        overlap=Overlap.BUFFER_ALL,
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
        changes["catchup"] = None
    return replace(base, **changes)  # type: ignore[arg-type]


def summary(result: Plan) -> tuple[list[int], list[tuple[str, int]], list[int], int, int | None]:
    """(started, decisions, enqueued, waiting afterwards, queue head), in minutes."""
    return (
        [r.occurrence_ms // MIN for r in result.starts],
        [(d.decision.value, d.occurrence_ms // MIN) for d in result.decisions],
        [o // MIN for o in result.enqueued],
        result.waiting,
        None if result.buffered_ms is None else result.buffered_ms // MIN,
    )


# (situation, input changes, started, decisions, enqueued, waiting, head)
CASES = [
    ("idle: starts", {}, [10], [("started", 10)], [], 0, None),
    (
        "run in flight: waits",
        {"active_run_ids": ("earlier",)},
        [],
        [("buffered", 10)],
        [10],
        1,
        10,
    ),
    (
        "run in flight, two wait: joins behind them",
        {"active_run_ids": ("earlier",), "waiting": 2, "queued_ms": (7 * MIN, 8 * MIN),
         "buffered_ms": 7 * MIN},
        [],
        [("buffered", 10)],
        [10],
        3,
        7,
    ),
    (
        "nothing unfinished, two wait: the oldest starts, the new one joins",
        {"waiting": 2, "queued_ms": (7 * MIN, 8 * MIN), "buffered_ms": 7 * MIN},
        [7],
        [("started", 7), ("buffered", 10)],
        [10],
        2,
        8,
    ),
    (
        "nothing unfinished, the last waits: it starts, the queue empties",
        {"waiting": 1, "queued_ms": (7 * MIN,), "buffered_ms": 7 * MIN, "next_fire_ms": 11 * MIN},
        [7],
        [("started", 7)],
        [],
        0,
        None,
    ),
    (
        "a count without rows (the queue was emptied meanwhile): forgotten",
        {"waiting": 3, "queued_ms": (), "buffered_ms": 7 * MIN, "next_fire_ms": 11 * MIN},
        [],
        [],
        [],
        0,
        None,
    ),
    (
        "catch-up of three, idle: the first starts, two wait",
        {"catchup": 3, "now_ms": 12 * MIN},
        [10],
        [("started", 10), ("buffered", 11), ("buffered", 12)],
        [11, 12],
        2,
        11,
    ),
    (
        "full queue: dropped, recorded",
        {"active_run_ids": ("earlier",), "waiting": MAX_WAITING, "queued_ms": (1, 2),
         "buffered_ms": 1},
        [],
        [("skipped_overlap", 10)],
        [],
        MAX_WAITING,
        0,
    ),
    (
        "one place left, two due: one waits, one dropped",
        {"active_run_ids": ("earlier",), "waiting": MAX_WAITING - 1, "queued_ms": (1, 2),
         "buffered_ms": 1, "catchup": 2, "now_ms": 11 * MIN},
        [],
        [("buffered", 10), ("skipped_overlap", 11)],
        [10],
        MAX_WAITING,
        0,
    ),
    (
        "overlap changed to allow while some wait: the queue still drains one at a time",
        {"overlap": Overlap.ALLOW, "active_run_ids": ("earlier",), "waiting": 1,
         "queued_ms": (7 * MIN,), "buffered_ms": 7 * MIN},
        [10],
        [("started", 10)],
        [],
        1,
        7,
    ),
]  # fmt: skip


@pytest.mark.parametrize(
    ("changes", "started", "decided", "enqueued", "waiting", "head"),
    [case[1:] for case in CASES],
    ids=[case[0] for case in CASES],
)
def test_buffer_all_table(
    changes: dict[str, object],
    started: list[int],
    decided: list[tuple[str, int]],
    enqueued: list[int],
    waiting: int,
    head: int | None,
) -> None:
    result = plan(state(**changes), EVERY_MINUTE)
    assert summary(result) == (started, decided, enqueued, waiting, head)


def test_a_released_occurrence_runs_under_its_own_run_id() -> None:
    result = plan(state(waiting=1, queued_ms=(7 * MIN,), buffered_ms=7 * MIN), EVERY_MINUTE)
    assert result.starts[0].run_id == occurrence_run_id("k", 7 * MIN)
    assert result.released_ms == 7 * MIN


def test_the_dropped_reason_names_the_cap() -> None:
    full = state(active_run_ids=("e",), waiting=MAX_WAITING, queued_ms=(1,), buffered_ms=1)
    (dropped,) = plan(full, EVERY_MINUTE).decisions
    assert "1000 occurrences already wait" in dropped.reason


# -- backfill --------------------------------------------------------------------------------

SPAN = [1 * MIN, 2 * MIN, 3 * MIN]
IDS = [occurrence_run_id("k", o) for o in SPAN]

# (situation, overlap, input changes, started, decisions, enqueued, answer)
BACKFILL = [
    ("allow, idle", Overlap.ALLOW, {}, [1, 2, 3], ["backfilled"] * 3, [], IDS),
    ("allow, run in flight", Overlap.ALLOW, {"active_run_ids": ("e",)}, [1, 2, 3],
     ["backfilled"] * 3, [], IDS),
    ("buffer_all, idle: the first starts", Overlap.BUFFER_ALL, {}, [1],
     ["backfilled"] * 3, [2, 3], IDS),
    ("buffer_all, run in flight: all wait", Overlap.BUFFER_ALL, {"active_run_ids": ("e",)}, [],
     ["backfilled"] * 3, [1, 2, 3], IDS),
    ("buffer_all, others wait: all wait behind", Overlap.BUFFER_ALL,
     {"waiting": 1, "queued_ms": (9 * MIN,), "buffered_ms": 9 * MIN}, [],
     ["backfilled"] * 3, [1, 2, 3], IDS),
    ("skip, idle: the first only", Overlap.SKIP, {}, [1],
     ["backfilled", "skipped_overlap", "skipped_overlap"], [], IDS[:1]),
    ("skip, run in flight: none", Overlap.SKIP, {"active_run_ids": ("e",)}, [],
     ["skipped_overlap"] * 3, [], []),
    ("buffer_one, idle: one starts, one buffered", Overlap.BUFFER_ONE, {}, [1],
     ["backfilled", "backfilled", "skipped_overlap"], [], IDS[:2]),
    ("cancel_previous: only the latest starts", Overlap.CANCEL_PREVIOUS,
     {"active_run_ids": ("e",)}, [3], ["skipped_overlap", "skipped_overlap", "backfilled"], [],
     IDS[2:]),
]  # fmt: skip


@pytest.mark.parametrize(
    ("overlap", "changes", "started", "decided", "enqueued", "answer"),
    [case[1:] for case in BACKFILL],
    ids=[case[0] for case in BACKFILL],
)
def test_backfill_table(
    overlap: Overlap,
    changes: dict[str, object],
    started: list[int],
    decided: list[str],
    enqueued: list[int],
    answer: list[str],
) -> None:
    result = plan_backfill(state(now_ms=100 * MIN, **changes), SPAN, overlap)
    assert [r.occurrence_ms // MIN for r in result.starts] == started
    assert [d.decision.value for d in result.decisions] == decided
    assert [o // MIN for o in result.enqueued] == enqueued
    assert result.backfilled == answer
    assert result.next_fire_ms == 10 * MIN  # the cadence is not moved
    assert all(r.available_ms == 100 * MIN for r in result.starts)  # now, no jitter


def test_cancel_previous_cancels_the_unfinished_runs() -> None:
    result = plan_backfill(state(active_run_ids=("a", "b")), SPAN, Overlap.CANCEL_PREVIOUS)
    assert result.cancel_run_ids == ["a", "b"]


def test_occurrences_with_a_run_or_waiting_are_answered_not_started_again() -> None:
    result = plan_backfill(
        state(),
        SPAN,
        Overlap.ALLOW,
        has_run=frozenset({IDS[0]}),
        queued=frozenset({2 * MIN}),
    )
    assert [r.occurrence_ms // MIN for r in result.starts] == [3]
    assert [d.decision.value for d in result.decisions] == [
        "already_started",
        "already_started",
        "backfilled",
    ]
    assert result.backfilled == IDS


def test_a_backfill_queues_past_the_cap_its_span_is_bounded() -> None:
    full = state(active_run_ids=("e",), waiting=MAX_WAITING, queued_ms=(1,), buffered_ms=1)
    result = plan_backfill(full, SPAN, Overlap.BUFFER_ALL)
    assert result.waiting == MAX_WAITING + 3
    assert result.buffered_ms == 1
