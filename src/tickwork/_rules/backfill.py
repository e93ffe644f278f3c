"""A backfill's occurrences decided (``engine.backfill``): each as if it came due now,
after the one before it, under the schedule's overlap or the backfill's own, by the rules
firing uses (``planning``: ``max_runs``, the calendar, buffer_all's queue). Pure, as
``planning`` is: the store calls it in the transaction that inserts the batch.
"""

from __future__ import annotations

from .._values.ids import occurrence_run_id
from .._values.models import Decision, Overlap
from .planning import (
    ALREADY_STARTED,
    Plan,
    PlanInput,
    PlannedDecision,
    PlannedRun,
    enqueue,
    may_start,
    spent_reason,
)

__all__ = ["plan_backfill"]


def plan_backfill(
    state: PlanInput,
    occurrences: list[int],
    overlap: Overlap,
    *,
    has_run: frozenset[str] = frozenset(),
    queued: frozenset[int] = frozenset(),
) -> Plan:
    """Decide a batch of a backfill's occurrences (oldest first) under ``overlap``.

    Each is decided as if it came due now, after the one before it: ``allow`` starts it;
    ``buffer_all`` queues it behind whatever waits (no cap: the backfill's span is
    bounded), starting the first at once when nothing is unfinished; ``skip`` starts it
    only when nothing of the schedule is unfinished; ``buffer_one`` buffers one more in
    the schedule's single buffer and skips the rest; ``cancel_previous`` cancels the
    unfinished runs and starts only the batch's latest (the earlier ones would each be
    cancelled by the next: they are skipped instead of started and cancelled). An
    occurrence that has a run (``has_run``) or already waits (``queued``) is answered with
    its run id and not started again (``has_run`` holds run ids). The schedule's next
    occurrence is not moved.
    """
    result = Plan(
        next_fire_ms=state.next_fire_ms, buffered_ms=state.buffered_ms, waiting=state.waiting
    )
    active = list(state.active_run_ids)

    def taken(occurrence: int) -> bool:
        return occurrence in queued or occurrence_run_id(state.key, occurrence) in has_run

    fresh = [o for o in occurrences if not taken(o)]
    last_fresh = fresh[-1] if fresh else None
    for occurrence in occurrences:
        own = occurrence_run_id(state.key, occurrence)
        if taken(occurrence):
            why = f"backfill: {ALREADY_STARTED}"
            if occurrence in queued:
                why = "backfill: the occurrence already waits its turn (overlap=buffer_all)"
            result.backfilled.append(own)
            result.decisions.append(PlannedDecision(Decision.ALREADY_STARTED, occurrence, why, own))
            continue
        holiday = None if state.holidays is None else state.holidays.decide(occurrence)
        if holiday is not None and holiday[0] is None:  # the calendar skips it, as firing
            why = f"backfill: {holiday[1]}"
            result.decisions.append(PlannedDecision(Decision.SKIPPED_HOLIDAY, occurrence, why))
            continue
        busy = ", ".join(active) or "waiting occurrences"
        idle = not active and not result.waiting
        starts = overlap is Overlap.ALLOW or (idle and overlap is not Overlap.CANCEL_PREVIOUS)
        replaces = overlap is Overlap.CANCEL_PREVIOUS and occurrence == last_fresh
        if (starts or replaces) and not may_start(state, result):
            why = f"backfill: {spent_reason(state)}"
            result.decisions.append(PlannedDecision(Decision.MAX_RUNS_REACHED, occurrence, why))
        elif starts:
            _backfill_start(state, occurrence, active, result, "backfill", holiday)
        elif overlap is Overlap.BUFFER_ALL:
            result.backfilled.append(own)
            enqueue(
                occurrence,
                f"backfill: waits its turn (overlap=buffer_all) behind {busy}",
                result,
                cap=None,
                decision=Decision.BACKFILLED,
                run_id=own,  # the id its run will have: the backfill answers with it
            )
        elif overlap is Overlap.BUFFER_ONE and result.buffered_ms is None and not result.waiting:
            result.buffered_ms = occurrence
            result.backfilled.append(own)
            result.decisions.append(
                PlannedDecision(
                    Decision.BACKFILLED,
                    occurrence,
                    f"backfill: buffered (overlap=buffer_one) behind {busy}",
                    own,
                )
            )
        elif overlap is Overlap.CANCEL_PREVIOUS and occurrence == last_fresh:
            result.cancel_run_ids.extend(active)
            why = f"backfill; cancelled {busy}" if active else "backfill"
            active.clear()
            _backfill_start(state, occurrence, active, result, why)
        else:
            why = f"backfill: overlap={overlap.value}: earlier run {busy} is unfinished"
            if overlap is Overlap.CANCEL_PREVIOUS:
                why = f"backfill: overlap=cancel_previous: the later {last_fresh} replaces it"
            elif overlap is Overlap.BUFFER_ONE:
                why = "backfill: overlap=buffer_one: an occurrence is already buffered"
            result.decisions.append(PlannedDecision(Decision.SKIPPED_OVERLAP, occurrence, why))
    return result


def _backfill_start(
    state: PlanInput,
    occurrence: int,
    active: list[str],
    result: Plan,
    why: str,
    moved: tuple[int | None, str] | None = None,
) -> None:
    """Start a backfilled occurrence now (its run waits for no jitter: it is late), or
    where its calendar moved it when that is later (recorded ``moved_holiday``)."""
    run_id = occurrence_run_id(state.key, occurrence)
    start, kind = state.now_ms, Decision.BACKFILLED
    if moved is not None and moved[0] is not None:
        start, kind, why = max(start, moved[0]), Decision.MOVED_HOLIDAY, f"{why}: {moved[1]}"
    result.starts.append(PlannedRun(occurrence, run_id, start))
    result.decisions.append(PlannedDecision(kind, occurrence, why, run_id))
    result.backfilled.append(run_id)
    active.append(run_id)
