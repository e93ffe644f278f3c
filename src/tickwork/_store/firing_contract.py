"""The firing part of the store contract (``store.firing``): the transactions that start
runs of schedules (fire the due ones, trigger one, a backfill's batch) and the firing
loop's one question, when it is next due.

``sql_firing.py`` implements it on both backends; registration and state changes are
the schedules part's (``schedule_contract.py``).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Protocol

from .._rules.planning import Plan
from .._values.models import HistoryEntry, Triggered
from .._values.records import DueSchedule, NewRun

__all__ = ["BackfillDecide", "FireResult", "FiringStore"]


#: a backfill's pure decision: (the schedule, run ids of the batch that exist, occurrences
#: of the batch already queued) -> the plan (``_planning.plan_backfill``)
BackfillDecide = Callable[[DueSchedule, frozenset[str], frozenset[int]], Plan]


@dataclass(frozen=True, slots=True)
class FireResult:
    """What one ``fire_due`` did: schedules fired, runs inserted, (key, error) per failure,
    and the decisions it recorded other than a plain start (skipped, buffered, cancelled
    previous, dropped, missed, already started), for the log once committed."""

    fired: int
    run_ids: list[str]
    errors: list[tuple[str, Exception]]
    decisions: Sequence[HistoryEntry] = ()


class FiringStore(Protocol):
    """Firing schedules, and when the firing loop (schedules, deadlines, event buffers)
    next has work."""

    def fire_due(
        self,
        *,
        now_ms: int,
        pools: Sequence[str],
        workflows: Sequence[str],
        limit: int,
        decide: Callable[[DueSchedule, int], Plan],
        ahead_ms: int = 0,
    ) -> FireResult:
        """Fire up to ``limit`` due schedules in ONE transaction.

        Due: ``active``, ``due_at <= now_ms``, workflow among ``workflows`` and pool among
        ``pools``; with ``ahead_ms``, also an ``overlap="allow"`` schedule whose ``due_at``
        is within ``ahead_ms`` after ``now_ms`` (``Engine(fire_ahead=...)``). For each,
        ``decide(schedule, now_ms)`` (pure) returns the plan; the store cancels the runs it
        names, inserts its runs (a run id that exists is not inserted again: the
        occurrence already started, recorded as "already_started"), appends its decisions
        to the history and advances the schedule. Schedules claimed by another
        transaction are skipped, never waited for. When ``decide`` raises for a schedule,
        that schedule alone is postponed by a minute and the error returned.
        """
        ...

    def trigger_schedule(
        self, key: str, *, now_ms: int, occurrence_ms: int, run: NewRun, reason: str
    ) -> Triggered | None:
        """Start ``run`` for the occurrence unless its id exists; say which happened.

        Records "triggered" with ``reason`` (or "already_started") in the history; a run
        started is the schedule's last, created at ``now_ms``. None when unknown.
        """
        ...

    def backfill_schedule(
        self, key: str, *, occurrences: Sequence[int], now_ms: int, decide: BackfillDecide
    ) -> list[str] | None:
        """Decide one batch of a backfill (``occurrences``, oldest first) in ONE
        transaction; the run ids it answers with. None when the key is unknown.

        The schedule's row is locked; ``decide(schedule, existing, queued)`` (pure) gets
        it with its unfinished runs and queue head, the run ids of the batch that exist
        and the occurrences of the batch waiting in its queue. The store cancels the runs
        the plan names, inserts its runs (``ON CONFLICT DO NOTHING``: an occurrence starts
        once), queues what it queues, appends its decisions and keeps the last run
        inserted as the schedule's last. ``next_fire_at`` and ``due_at`` do not change.
        """
        ...

    def next_schedule_due_ms(
        self, *, pools: Sequence[str], workflows: Sequence[str], ahead_ms: int = 0
    ) -> int | None:
        """When ``fire_due`` with ``ahead_ms`` first has something to take, or None: the
        earliest ``due_at`` among the schedules it could take, less ``ahead_ms`` for an
        ``overlap="allow"`` one."""
        ...

    def next_firing_due_ms(
        self, *, pools: Sequence[str], workflows: Sequence[str], ahead_ms: int = 0
    ) -> int | None:
        """When the firing loop next has something to do, or None: the earliest of
        ``next_schedule_due_ms``, ``next_deadline_ms`` and ``next_flush_ms``, read in one
        statement (a worker reads it at every poll)."""
        ...
