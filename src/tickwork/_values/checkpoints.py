"""What a sleep's or a wait's checkpoint stands for beyond its row: when it really ended,
what a wait for an event waits for, and both in words for people (every face says them
alike: the dashboard, ``tickwork runs show``, the API's step JSON).

Both are written when they begin: a sleep as "completed" with its wake time (epoch ms)
as its result, a wait as "waiting" with ``{"names", "match", "until", "since"}``, so a
row's ``finished_at`` is when it was written, not when the sleep or the wait ended.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from .clock import from_ms
from .durations import describe_duration
from .models import RunInfo, RunStatus, StepInfo

__all__ = [
    "ChildWait",
    "WaitingFor",
    "asleep_in",
    "child_wait",
    "child_wait_words",
    "ended_at",
    "match_words",
    "relative_words",
    "step_took",
    "wait_what",
    "wait_words",
    "waiting_for",
]


@dataclass(frozen=True, slots=True)
class WaitingFor:
    """What a wait for an event waits for: any of ``names``, with a payload matching
    ``match`` (None: any payload), until ``until`` (None: no timeout)."""

    names: tuple[str, ...]
    match: Mapping[str, Any] | None
    until: datetime | None


def waiting_for(step: StepInfo) -> WaitingFor | None:
    """What ``step`` waits for while it waits; None for any other checkpoint."""
    stored = step.result
    if step.kind != "event" or step.status != "waiting" or not isinstance(stored, dict):
        return None
    names = stored.get("names")
    if not isinstance(names, list):  # a wait stored before its names were: its key says
        names = step.name.split("#")[0].split("|")
    until = stored.get("until")
    when = None if type(until) is not int else from_ms(until)
    match = stored.get("match")
    return WaitingFor(tuple(names), match if isinstance(match, dict) else None, when)


@dataclass(frozen=True, slots=True)
class ChildWait:
    """What a wait for child runs (``ctx.wait``, ``ctx.map``) waits for: ``count`` runs
    (of ``workflow``, a map's), until ``until`` (None: no timeout)."""

    count: int
    workflow: str | None
    until: datetime | None


def child_wait(step: StepInfo) -> ChildWait | None:
    """What ``step`` waits for while it waits for children; None for any other."""
    stored = step.result
    if step.kind not in ("join", "map") or step.status != "waiting":
        return None
    if not isinstance(stored, dict) or type(stored.get("count")) is not int:
        return None
    until, workflow = stored.get("until"), stored.get("workflow")
    return ChildWait(
        stored["count"],
        workflow if isinstance(workflow, str) else None,
        None if type(until) is not int else from_ms(until),
    )


def child_wait_words(wait: ChildWait, remaining: int | None) -> str:
    """``17 of 20 runs of resize`` (``… runs`` for a wait on several workflows);
    ``remaining`` None: all of them."""
    left = wait.count if remaining is None else remaining
    of = f" of {wait.workflow}" if wait.workflow else ""
    noun = "run" if wait.count == 1 else "runs"
    return f"{left} of {wait.count} {noun}{of}"


def asleep_in(run: RunInfo, steps: Sequence[StepInfo]) -> StepInfo | None:
    """The sleep ``run`` sleeps in: its last checkpoint while it is ``sleeping``."""
    if run.status is RunStatus.SLEEPING and steps and steps[-1].kind == "sleep":
        return steps[-1]
    return None


def ended_at(step: StepInfo, run: RunInfo, *, asleep: bool) -> datetime | None:
    """When ``step`` ended: a step when it finished, a sleep at its wake, a wait when its
    event came or it timed out; None while it sleeps or waits. A run that ended in a
    sleep or a wait (cancelled) ended them then."""
    if step.kind == "sleep" and type(step.result) is int:
        if asleep:
            return None
        wake = from_ms(step.result)
        return wake if run.finished_at is None else min(wake, run.finished_at)
    if step.kind in ("event", "join", "map") and step.status == "waiting":
        return run.finished_at
    return step.finished_at


def step_took(step: StepInfo, run: RunInfo, *, asleep: bool, now: datetime) -> str:
    """How long ``step`` took (``2 h 5 min``), or has taken so far (``9 min so far``)."""
    end = ended_at(step, run, asleep=asleep)
    if end is None:
        return f"{describe_duration(now - step.started_at, rounded=True)} so far"
    return describe_duration(end - step.started_at, rounded=True)


def relative_words(when: datetime, now: datetime) -> str:
    """``when`` seen from ``now``: ``in 4 min``, ``3 h 5 min ago``, ``now``."""
    seconds = int((when - now).total_seconds())
    if seconds == 0:
        return "now"
    text = describe_duration(timedelta(seconds=abs(seconds)), rounded=abs(seconds) >= 60)
    return f"in {text}" if seconds > 0 else f"{text} ago"


def match_words(match: Mapping[str, Any] | None) -> str:
    """``order_id = 404 and tier = "gold"``: each path with its value as JSON (so ``1``
    reads apart from ``"1"`` and ``true``, as they match apart); "" for no match."""
    return " and ".join(
        f"{path} = {json.dumps(value, ensure_ascii=False, sort_keys=True)}"
        for path, value in (match or {}).items()
    )


def wait_what(wait: WaitingFor) -> str:
    """``order.paid where order_id = 404`` (``a or b`` for a wait for any of two)."""
    words = " or ".join(wait.names)
    return f"{words} where {match_words(wait.match)}" if wait.match else words


def wait_words(wait: WaitingFor, now: datetime, instant: Callable[[datetime], str]) -> str:
    """``order.paid where order_id = 404, until 2026-03-01 01:27:49 UTC (in 9 min)``, the
    instant as the face writes one (``instant``); ``…, no timeout`` without one."""
    if wait.until is None:
        return f"{wait_what(wait)}, no timeout"
    return f"{wait_what(wait)}, until {instant(wait.until)} ({relative_words(wait.until, now)})"
