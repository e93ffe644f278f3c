"""What a sleep's or a wait's checkpoint stands for (``_values/checkpoints.py``): when it ended,
what a wait waits for, and the words every face says them in."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from tickwork import RunInfo, RunStatus, StepInfo
from tickwork._values.checkpoints import (
    WaitingFor,
    ended_at,
    match_words,
    step_took,
    wait_what,
    wait_words,
    waiting_for,
)

T0 = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)
MS = 1_772_366_400_000  # T0 in epoch ms


def a_run(status: RunStatus, finished: datetime | None = None) -> RunInfo:
    return RunInfo(
        id="r", workflow="w", version="1", status=status, input=None, result=None,
        error=None, attempt=1, priority=0, pool="default", schedule_key=None,
        scheduled_for=None, created_at=T0, started_at=T0, finished_at=finished,
    )  # fmt: skip


def a_step(kind: str, status: str, result: Any, name: str = "order.paid") -> StepInfo:
    """A checkpoint as a sleep and a wait are stored: written at T0, when they began."""
    return StepInfo(
        run_id="r", name=name, kind=kind, status=status, result=result, error=None,
        attempts=1, started_at=T0, finished_at=T0,
    )  # fmt: skip


def test_a_match_reads_as_path_value_pairs_with_values_as_json() -> None:
    assert match_words({"order_id": 404, "tier": "gold"}) == 'order_id = 404 and tier = "gold"'
    assert match_words({"n": 1}) != match_words({"n": "1"}) != match_words({"n": True})
    assert match_words(None) == ""


def test_a_wait_says_its_names_its_match_and_until_when_from_now() -> None:
    wait = WaitingFor(("order.paid", "order.cancelled"), {"order_id": 7}, T0)
    assert wait_what(wait) == "order.paid or order.cancelled where order_id = 7"
    now = T0 - timedelta(minutes=9)
    words = wait_words(wait, now, lambda at: at.strftime("%H:%M:%S"))
    assert words == "order.paid or order.cancelled where order_id = 7, until 12:00:00 (in 9 min)"
    endless = WaitingFor(("tick",), None, None)
    assert wait_words(endless, now, str) == "tick, no timeout"


def test_a_wait_stored_without_its_names_reads_them_from_its_key() -> None:
    older = a_step("event", "waiting", {"until": None, "since": MS}, name="a|b#2")
    assert waiting_for(older) == WaitingFor(("a", "b"), None, None)


def test_a_wait_not_over_has_no_end_and_a_duration_so_far() -> None:
    step = a_step("event", "waiting", {"names": ["x"], "match": None, "until": None, "since": MS})
    waiting = a_run(RunStatus.WAITING)
    assert ended_at(step, waiting, asleep=False) is None
    now = T0 + timedelta(minutes=9)
    assert step_took(step, waiting, asleep=False, now=now) == "9 min so far"
    cancelled = a_run(RunStatus.CANCELLED, finished=T0 + timedelta(minutes=3))
    assert ended_at(step, cancelled, asleep=False) == T0 + timedelta(minutes=3)


def test_a_sleep_ends_at_its_wake_or_when_its_run_was_cancelled() -> None:
    step = a_step("sleep", "completed", MS + 3_600_000, name="cool-off")
    later = T0 + timedelta(hours=2)
    assert ended_at(step, a_run(RunStatus.SLEEPING), asleep=True) is None
    done = a_run(RunStatus.COMPLETED, finished=later)
    assert ended_at(step, done, asleep=False) == T0 + timedelta(hours=1)
    assert step_took(step, done, asleep=False, now=later) == "1 h"
    cancelled = a_run(RunStatus.CANCELLED, finished=T0 + timedelta(minutes=5))
    assert step_took(step, cancelled, asleep=False, now=later) == "5 min"
