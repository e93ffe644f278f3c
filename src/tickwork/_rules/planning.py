"""Pure firing decisions: (schedule, its unfinished runs, now) -> what to start and why.

No I/O and no clock here: the store calls ``plan`` inside the one transaction that claims a
due schedule, inserts the planned runs and advances the schedule (procrastinate's
"hoist the I/O"). Every occurrence gets a decision, written to the schedule's history;
long spans of dropped occurrences are summarised in one entry with a count.

``overlap="buffer_all"`` keeps a queue of waiting occurrences in the store (no run yet,
like ``buffer_one``'s single buffered occurrence); the planner sees how many wait and the
oldest two, starts the oldest when the schedule has no unfinished run, and says what
joins the queue. ``plan_backfill`` decides a backfill's occurrences by the same rules.

A schedule with a calendar decides each occurrence it would start by its ``HolidayRule``
first: on a day off it is skipped (``skipped_holiday``) or moved (``moved_holiday``: the
same occurrence and run id, its run available on the business day it moved to). With
``on_holiday="previous"`` an occurrence is decided when its move comes due, before its own
instant (``Plan.wake_ms``). Under ``dst_gap="skip"`` the occurrences a spring-forward gap
drops are recorded ``skipped_dst`` as they pass (the walk itself never yields them).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Protocol

from .._values.clock import LAST_MS, capped
from .._values.ids import jitter_ms, occurrence_run_id
from .._values.models import Decision, OnHoliday, Overlap
from .occurrences import HolidayRule

__all__ = [
    "MAX_WAITING",
    "Occurrences",
    "Plan",
    "PlanInput",
    "PlannedDecision",
    "PlannedRun",
    "Settled",
    "enqueue",
    "fires_ahead",
    "may_start",
    "plan",
    "settle",
    "spent_reason",
]

#: occurrences started per schedule per pass with ``catchup="all"``, so that an outage
#: does not turn into a stampede; the rest follow on the next passes.
CATCHUP_BATCH = 100
#: how far a span of dropped occurrences is counted one by one before "at least N".
COUNT_CAP = 10_000
#: occurrences ``overlap="buffer_all"`` keeps waiting; past that each is dropped (recorded)
MAX_WAITING = 1000
#: why an occurrence starts nothing: its run exists (a trigger or another worker got there)
ALREADY_STARTED = "the occurrence already has this run"


class Occurrences(Protocol):
    """Occurrences of a schedule as UTC epoch milliseconds."""

    def next_after(self, ms: int) -> int | None:
        """The first occurrence strictly after ``ms``."""
        ...

    def latest_at_or_before(self, ms: int) -> int | None:
        """The latest occurrence at or before ``ms``, or None."""
        ...

    def count_between(self, first: int, last: int, cap: int) -> int:
        """How many occurrences lie in ``[first, last]``, counting at most to ``cap``."""
        ...

    def dst_skipped(self, first: int, last: int) -> list[tuple[int, str]]:
        """The occurrences ``dst_gap="skip"`` drops in ``[first, last]``, with why."""
        ...

    def next_dst_skipped(self, ms: int) -> int | None:
        """The first such dropped occurrence after ``ms``, if it comes before the next
        occurrence."""
        ...


@dataclass(slots=True)  # not frozen: built per schedule fired (_values/records.py says why)
class PlanInput:
    """What the planner needs to know of one schedule at ``now_ms``.

    ``next_fire_ms`` is the earliest occurrence not yet decided; ``catchup`` None means
    "all"; ``paused_ms`` and ``resumed_ms`` bound the last pause whose misses
    are not yet decided (``resumed_ms`` None: up to now); ``active_run_ids`` are the
    schedule's unfinished runs, oldest first.
    """

    key: str
    overlap: Overlap
    catchup: int | None
    catchup_window_ms: int | None
    jitter_ms: int | None
    end_ms: int | None
    next_fire_ms: int | None
    buffered_ms: int | None
    paused_ms: int | None
    active_run_ids: tuple[str, ...]
    now_ms: int
    resumed_ms: int | None = None
    #: occurrences waiting in the buffer_all queue, and the oldest two of them (the oldest
    #: is also ``buffered_ms``)
    waiting: int = 0
    queued_ms: tuple[int, ...] = ()
    #: the calendar's rule (None: every day is a business day)
    holidays: HolidayRule | None = None
    #: ``max_runs`` (None: no limit) and the runs it counted so far
    max_runs: int | None = None
    runs_counted: int = 0


@dataclass(slots=True)
class PlannedRun:
    occurrence_ms: int
    run_id: str
    available_ms: int
    #: where a calendar moved the occurrence (None: not moved): its deadline counts from it
    moved_ms: int | None = None


@dataclass(slots=True)
class PlannedDecision:
    decision: Decision
    occurrence_ms: int
    reason: str
    run_id: str | None = None
    count: int = 1
    last_occurrence_ms: int | None = None


@dataclass
class Plan:
    starts: list[PlannedRun] = field(default_factory=list)
    cancel_run_ids: list[str] = field(default_factory=list)
    decisions: list[PlannedDecision] = field(default_factory=list)
    next_fire_ms: int | None = None
    buffered_ms: int | None = None
    #: the buffer_all queue: how many wait afterwards, what joins it, what left it
    waiting: int = 0
    enqueued: list[int] = field(default_factory=list)
    released_ms: int | None = None
    #: a backfill's answer: the run id of each occurrence it started, queued or found
    #: started already, oldest first
    backfilled: list[str] = field(default_factory=list)
    #: when to look at the schedule again, when earlier than ``next_fire_ms``: a later
    #: occurrence moves to the previous business day (None: at ``next_fire_ms``)
    wake_ms: int | None = None

    @property
    def due_ms(self) -> int | None:
        """When the schedule is due next (before any buffered occurrence's wake-up)."""
        return self.next_fire_ms if self.wake_ms is None else self.wake_ms


def fires_ahead(overlap: Overlap) -> bool:
    """Whether a schedule may be fired before its occurrence (``fire_ahead``): only
    ``allow``, whose decision does not depend on the run in flight when it comes due."""
    return overlap is Overlap.ALLOW


def plan(state: PlanInput, occurrences: Occurrences) -> Plan:
    """Decide every occurrence of ``state`` due at ``state.now_ms``."""
    result = Plan(
        next_fire_ms=state.next_fire_ms, buffered_ms=state.buffered_ms, waiting=state.waiting
    )
    active = list(state.active_run_ids)
    if state.waiting:
        if not active and may_start(state, result):
            _release(state, active, result)
    elif state.buffered_ms is not None and not active and may_start(state, result):
        why = "buffered occurrence started: the earlier run ended"
        run, why = _released(state, state.buffered_ms, why)
        result.starts.append(run)
        result.decisions.append(
            PlannedDecision(Decision.STARTED, state.buffered_ms, why, run.run_id)
        )
        result.buffered_ms = None
        active.append(run.run_id)
    first = state.next_fire_ms
    if first is None:
        return result
    if first <= state.now_ms:
        _decide_due(state, occurrences, first, active, result)
    _decide_early(state, occurrences, active, result)
    if result.next_fire_ms is not None and result.next_fire_ms > LAST_MS:
        # No occurrence left that a datetime holds: the schedule has ended, as past end_at.
        result.next_fire_ms = None
    if state.holidays is not None and result.next_fire_ms is not None:
        wake = state.holidays.wake(occurrences, result.next_fire_ms)
        result.wake_ms = wake if wake < result.next_fire_ms else None
    return result


def _decide_due(
    state: PlanInput, occurrences: Occurrences, first: int, active: list[str], result: Plan
) -> None:
    """Decide the occurrences from ``first`` up to now (and ``end_at``)."""
    last = state.now_ms if state.end_ms is None else min(state.now_ms, state.end_ms)
    to_start, skipped_days = _choose(state, occurrences, first, last, result)
    for occurrence in to_start:
        if occurrence in skipped_days:
            _skip_day(state, occurrences, skipped_days[occurrence], occurrence, result)
        else:
            _decide(state, occurrence, active, result)
    if state.catchup is None and to_start and len(to_start) == CATCHUP_BATCH:
        result.next_fire_ms = occurrences.next_after(to_start[-1])
        if result.next_fire_ms is not None and result.next_fire_ms > last:
            result.next_fire_ms = occurrences.next_after(last)
    else:
        result.next_fire_ms = occurrences.next_after(last)
    # What dst_gap="skip" dropped on the way is recorded as it passes; the schedule wakes
    # for the next one before its next occurrence, so that none goes unrecorded.
    upto = last if result.next_fire_ms is None else min(last, result.next_fire_ms - 1)
    for occurrence, why in occurrences.dst_skipped(first, upto):
        result.decisions.append(PlannedDecision(Decision.SKIPPED_DST, occurrence, why))
    skipped = occurrences.next_dst_skipped(last)
    if skipped is not None:
        result.next_fire_ms = skipped
    ended = state.end_ms is not None and (result.next_fire_ms or 0) > state.end_ms
    if ended:
        result.next_fire_ms = None


def _decide_early(
    state: PlanInput, occurrences: Occurrences, active: list[str], result: Plan
) -> None:
    """With ``on_holiday="previous"``: decide the occurrences after now whose wake-up has
    come (one of them moves to a business day at or before now), in order, at most
    ``CATCHUP_BATCH`` a pass. Not catch-up: they are on time."""
    rule = state.holidays
    if rule is None or rule.policy is not OnHoliday.PREVIOUS:
        return
    upcoming = result.next_fire_ms
    for _ in range(CATCHUP_BATCH):
        if upcoming is None or (state.end_ms is not None and upcoming > state.end_ms):
            upcoming = None
            break
        if upcoming <= state.now_ms or rule.wake(occurrences, upcoming) > state.now_ms:
            break
        if occurrences.next_after(upcoming - 1) == upcoming:
            missed = _moved_into_pause(state, upcoming)
            if missed is None:
                _decide(state, upcoming, active, result)
            else:
                result.decisions.append(PlannedDecision(Decision.MISSED_PAUSED, upcoming, missed))
        else:  # dst_gap="skip" drops it: decided early with the ones after it, not moved
            for occurrence, why in occurrences.dst_skipped(upcoming, upcoming):
                result.decisions.append(PlannedDecision(Decision.SKIPPED_DST, occurrence, why))
        following = occurrences.next_after(upcoming)
        skipped = occurrences.next_dst_skipped(upcoming)
        upcoming = following if skipped is None else skipped
    result.next_fire_ms = upcoming


def _moved_into_pause(state: PlanInput, occurrence: int) -> str | None:
    """Why ``occurrence`` is missed: the previous business day its run moved to passed
    while the schedule was paused (as an occurrence in the pause is); None otherwise."""
    rule, paused, resumed = state.holidays, state.paused_ms, state.resumed_ms
    if rule is None or paused is None or resumed is None:
        return None
    decided = rule.decide(occurrence)
    if decided is None or decided[0] is None or not paused <= decided[0] < resumed:
        return None
    return f"missed while paused: {decided[1]}, a time that passed during the pause"


def _decide(state: PlanInput, occurrence: int, active: list[str], result: Plan) -> None:
    """Decide one occurrence: its calendar first (skip it, or move its run), then
    ``max_runs`` (no start past it), then its overlap policy."""
    holiday = None if state.holidays is None else state.holidays.decide(occurrence)
    moved = None if holiday is None else holiday[0]
    if holiday is not None and moved is None:
        result.decisions.append(PlannedDecision(Decision.SKIPPED_HOLIDAY, occurrence, holiday[1]))
    elif not may_start(state, result, occurrence):
        result.decisions.append(
            PlannedDecision(Decision.MAX_RUNS_REACHED, occurrence, spent_reason(state))
        )
    elif holiday is None or moved is None:
        _apply_overlap(state, occurrence, active, result)
    else:
        _apply_overlap(state, occurrence, active, result, moved=(moved, holiday[1]))


def _choose(
    state: PlanInput, occurrences: Occurrences, first: int, last: int, result: Plan
) -> tuple[list[int], dict[int, int]]:
    """Occurrences in ``[first, last]`` to decide, oldest first; record the dropped ones.
    With ``catchup=N`` a day the calendar skips is one of them, its latest occurrence,
    mapped to its first in the second value (decided as one ``skipped_holiday`` entry)."""
    skipped_days: dict[int, int] = {}
    if first > last:
        return [], skipped_days
    window_start = first
    if state.catchup_window_ms is not None:
        window_start = max(first, state.now_ms - state.catchup_window_ms)
    chosen: list[int] = []
    if state.catchup is None:
        occurrence = occurrences.next_after(window_start - 1)
        while occurrence is not None and occurrence <= last and len(chosen) < CATCHUP_BATCH:
            chosen.append(occurrence)
            occurrence = occurrences.next_after(occurrence)
        earliest = chosen[0] if chosen else last + 1
    else:
        # catchup=N: the N latest that would run. A day the calendar skips is stepped
        # over whole (recorded as one entry, counted as no run): a dense cadence over a
        # weekend must not use up the walk's bound before it reaches a business day.
        occurrence, counted = occurrences.latest_at_or_before(last), 0
        earliest = last + 1
        while (
            occurrence is not None
            and occurrence >= window_start
            and counted < state.catchup
            and len(chosen) < COUNT_CAP
        ):
            chosen.append(occurrence)
            earliest = occurrence
            if _calendar_skips(state, occurrence):
                assert state.holidays is not None
                day_first = occurrences.next_after(
                    max(window_start, state.holidays.day_start(occurrence)) - 1
                )
                earliest = skipped_days[occurrence] = day_first or occurrence
            else:
                counted += 1
            occurrence = occurrences.latest_at_or_before(earliest - 1)
        chosen.reverse()
    _record_dropped(state, occurrences, first, earliest - 1, result)
    return chosen, skipped_days


def _skip_day(
    state: PlanInput, occurrences: Occurrences, day_first: int, day_last: int, result: Plan
) -> None:
    """Record a day's occurrences ``[day_first, day_last]`` that the calendar skips, in
    one entry (with their count) when there are several."""
    assert state.holidays is not None
    decided = state.holidays.decide(day_last)
    assert decided is not None
    count = occurrences.count_between(day_first, day_last, COUNT_CAP)
    why = decided[1] if count < COUNT_CAP else f"{decided[1]} (at least {COUNT_CAP} occurrences)"
    last = day_last if count > 1 else None
    result.decisions.append(
        PlannedDecision(Decision.SKIPPED_HOLIDAY, day_first, why, None, max(count, 1), last)
    )


def _calendar_skips(state: PlanInput, occurrence: int) -> bool:
    """Whether the schedule's calendar skips ``occurrence`` (``on_holiday="skip"``)."""
    rule = state.holidays
    if rule is None or rule.policy is not OnHoliday.SKIP:
        return False
    return rule.decide(occurrence) is not None


def _record_dropped(
    state: PlanInput, occurrences: Occurrences, first: int, last: int, result: Plan
) -> None:
    """Summarise the occurrences in ``[first, last]`` that will never run."""
    if first > last:
        return
    spans = [(first, last, Decision.DROPPED_CATCHUP)]
    pause, resumed = state.paused_ms, state.resumed_ms
    if pause is not None and pause <= last:
        until = last if resumed is None else min(last, resumed)
        spans = [
            (first, min(last, pause - 1), Decision.DROPPED_CATCHUP),
            (max(first, pause), until, Decision.MISSED_PAUSED),
            (max(first, until + 1), last, Decision.DROPPED_CATCHUP),
        ]
    policy = "all" if state.catchup is None else str(state.catchup)
    for lo, hi, decision in spans:
        if lo > hi:
            continue
        start = occurrences.next_after(lo - 1)
        if start is None or start > hi:
            continue
        end = occurrences.latest_at_or_before(hi)
        count = occurrences.count_between(start, hi, COUNT_CAP)
        if decision is Decision.MISSED_PAUSED:
            why = f"missed while paused; catchup={policy} did not start it"
        elif state.catchup_window_ms is not None and hi < state.now_ms - state.catchup_window_ms:
            why = "older than catchup_window"
        else:
            why = f"missed (no worker fired it in time); catchup={policy} starts only the latest"
        if count >= COUNT_CAP:
            why += f" (at least {COUNT_CAP} occurrences)"
        result.decisions.append(
            PlannedDecision(decision, start, why, None, count, end if count > 1 else None)
        )


def may_start(state: PlanInput, result: Plan, occurrence: int | None = None) -> bool:
    """Whether ``max_runs`` lets the plan start one more run: the runs it counted and the
    plan's starts so far stay under it. An occurrence whose run exists already (a trigger
    started it) inserts nothing, so it counts nothing."""
    if state.max_runs is None:
        return True
    if occurrence is not None and occurrence_run_id(state.key, occurrence) in state.active_run_ids:
        return True
    planned = sum(run.run_id not in state.active_run_ids for run in result.starts)
    return state.runs_counted + planned < state.max_runs


def spent_reason(state: PlanInput) -> str:
    """Why an occurrence does not start under ``max_runs``."""
    return f"max_runs={state.max_runs}: the schedule started its {state.max_runs} run(s)"


def _apply_overlap(
    state: PlanInput,
    occurrence: int,
    active: list[str],
    result: Plan,
    moved: tuple[int, str] | None = None,
) -> None:
    """Start ``occurrence``, or not, as its overlap policy says; ``moved`` is where a
    calendar moved its run to, and why (recorded ``moved_holiday`` when it starts)."""
    own = occurrence_run_id(state.key, occurrence) if active else ""  # none: none to find
    # The history says both: where the calendar moved it, and what overlap did with it.
    said = "" if moved is None else f"{moved[1]}; "
    if own in active:
        # A trigger started this very occurrence: its run is no earlier run to overlap
        # with (the store records "already_started" for it).
        result.starts.append(_run(state, occurrence))
        result.decisions.append(PlannedDecision(Decision.STARTED, occurrence, "due", own))
        return
    if not active or state.overlap is Overlap.ALLOW:
        _start(state, occurrence, active, result, "due", moved)
        return
    busy = ", ".join(active)
    if state.overlap is Overlap.SKIP:
        result.decisions.append(
            PlannedDecision(
                Decision.SKIPPED_OVERLAP,
                occurrence,
                f"{said}overlap=skip: earlier run {busy} is unfinished",
            )
        )
    elif state.overlap is Overlap.BUFFER_ONE:
        if result.buffered_ms is None:
            result.buffered_ms = occurrence
            result.decisions.append(
                PlannedDecision(
                    Decision.BUFFERED,
                    occurrence,
                    f"{said}overlap=buffer_one: waits for earlier run {busy}",
                )
            )
        else:
            result.decisions.append(
                PlannedDecision(
                    Decision.SKIPPED_OVERLAP,
                    occurrence,
                    f"{said}overlap=buffer_one: an occurrence is already buffered",
                )
            )
    elif state.overlap is Overlap.BUFFER_ALL:
        enqueue(occurrence, f"{said}overlap=buffer_all: waits for earlier run {busy}", result)
    else:
        result.cancel_run_ids.extend(active)
        result.decisions.append(
            PlannedDecision(
                Decision.CANCELLED_PREVIOUS,
                occurrence,
                f"overlap=cancel_previous: cancelled {busy}",
                active[-1],
            )
        )
        active.clear()
        _start(state, occurrence, active, result, "due; previous run cancelled", moved)


def _start(
    state: PlanInput,
    occurrence: int,
    active: list[str],
    result: Plan,
    why: str,
    moved: tuple[int, str] | None = None,
) -> None:
    run = _run(state, occurrence, None if moved is None else moved[0])
    result.starts.append(run)
    kind = Decision.STARTED
    if moved is not None:
        kind, why = Decision.MOVED_HOLIDAY, moved[1]
    result.decisions.append(PlannedDecision(kind, occurrence, why, run.run_id))
    active.append(run.run_id)


def _released(state: PlanInput, occurrence: int, why: str) -> tuple[PlannedRun, str]:
    """The run of a buffered or queued occurrence whose turn came, and why: available
    where its calendar moves it (decided again now: a calendar change applies), so that a
    run buffered on a holiday does not start on it."""
    holiday = None if state.holidays is None else state.holidays.decide(occurrence)
    if holiday is None or holiday[0] is None:
        return _run(state, occurrence), why
    return _run(state, occurrence, holiday[0]), f"{why}; {holiday[1]}"


def _run(state: PlanInput, occurrence: int, moved_ms: int | None = None) -> PlannedRun:
    """The run of ``occurrence``: its id is the occurrence's; it may start at the
    occurrence (or where a calendar moved it) plus its jitter."""
    delay = 0 if not state.jitter_ms else jitter_ms(state.key, occurrence, state.jitter_ms)
    start = occurrence if moved_ms is None else moved_ms
    run_id = occurrence_run_id(state.key, occurrence)
    return PlannedRun(occurrence, run_id, capped(start + delay), moved_ms)


# -- buffer_all's queue ----------------------------------------------------------------------


def _release(state: PlanInput, active: list[str], result: Plan) -> None:
    """Start the oldest waiting occurrence: the schedule has no unfinished run."""
    if not state.queued_ms:  # nothing readable waits after all: forget the count
        result.waiting, result.buffered_ms = 0, None
        return
    head = state.queued_ms[0]
    why = "its turn came (overlap=buffer_all): the earlier run ended"
    run, why = _released(state, head, why)
    result.starts.append(run)
    result.decisions.append(PlannedDecision(Decision.STARTED, head, why, run.run_id))
    result.released_ms = head
    result.waiting = state.waiting - 1
    following = state.queued_ms[1:2] if result.waiting else ()
    result.buffered_ms = following[0] if following else None
    if not following:
        result.waiting = 0
    active.append(run.run_id)


def enqueue(
    occurrence: int,
    why: str,
    result: Plan,
    *,
    cap: int | None = MAX_WAITING,
    decision: Decision = Decision.BUFFERED,
    run_id: str | None = None,
) -> bool:
    """Add ``occurrence`` to the queue unless ``cap`` occurrences wait (then it is
    dropped, recorded as skipped); whether it was added."""
    if cap is not None and result.waiting >= cap:
        result.decisions.append(
            PlannedDecision(
                Decision.SKIPPED_OVERLAP,
                occurrence,
                f"overlap=buffer_all: {cap} occurrences already wait; dropped",
            )
        )
        return False
    result.enqueued.append(occurrence)
    result.waiting += 1
    if result.buffered_ms is None or occurrence < result.buffered_ms:
        result.buffered_ms = occurrence  # the queue's oldest: what a run's end wakes
    result.decisions.append(PlannedDecision(decision, occurrence, why, run_id))
    return True


# -- settling ----------------------------------------------------------------------------------


#: the decisions that start a run (a run that exists already makes them "already_started")
_STARTS = (Decision.STARTED, Decision.TRIGGERED, Decision.MOVED_HOLIDAY)


@dataclass(frozen=True, slots=True)
class Settled:
    """A plan as it is written: its decisions, and the runs it really inserts."""

    decisions: list[PlannedDecision]
    starts: list[PlannedRun]


def settle(plan: Plan, existing: frozenset[str] | set[str]) -> Settled:
    """``plan`` once the store has seen which of its runs ``existing`` already holds: a
    start (or trigger) of a run that exists becomes ``already_started`` and inserts
    nothing. A trigger keeps its own reason before the explanation."""
    if not existing:
        return Settled(plan.decisions, plan.starts)
    decisions = []
    for decision in plan.decisions:
        kind = decision.decision
        if decision.run_id in existing and kind in _STARTS:
            why = ALREADY_STARTED
            if kind is Decision.TRIGGERED:
                why = f"{decision.reason}: {ALREADY_STARTED}"
            decision = replace(decision, decision=Decision.ALREADY_STARTED, reason=why)
        decisions.append(decision)
    return Settled(decisions, [run for run in plan.starts if run.run_id not in existing])
