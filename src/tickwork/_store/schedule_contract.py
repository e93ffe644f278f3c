"""The schedules part of the store contract: registration, state, firing and history
(``store.schedules``).

Every method's rules are in its docstring; ``sql_schedules.py`` implements them on both
backends. The rules every part keeps are in ``contract.py``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Protocol

from .._business_days import BusinessDays
from .._models import (
    HistoryEntry,
    ScheduleAction,
    ScheduleInfo,
    Triggered,
)
from .._planning import Plan
from .._records import DueSchedule, NewRun, ScheduleRecord

__all__ = ["BackfillDecide", "FireResult", "Registration", "ScheduleStore"]

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


@dataclass(frozen=True, slots=True)
class Registration:
    """What ``upsert_schedule`` did: "created", "unchanged", "updated", "kept" or
    "conflict" (the key exists with another definition and ``on_conflict="error"``)."""

    outcome: str
    revision: int


class ScheduleStore(Protocol):
    """Schedules: their definitions, states, firings and history."""

    def upsert_schedule(
        self, record: ScheduleRecord, *, now_ms: int, on_conflict: str, paused: bool | None
    ) -> Registration:
        """Register ``record`` under its key, in one transaction (rules: ``_policy``).

        New key: stored as revision 1, ``active`` (``paused`` if ``paused``), its interval
        anchored at now (or ``start_at``) and its first occurrence strictly after now. Same
        definition: nothing changes (cadence, state and history kept). Other definition:
        with ``on_conflict="update"`` the row is updated in place and its revision bumped,
        keeping the next occurrence unless the timing changed (then placed afresh from
        now); "keep" changes nothing; "error" changes nothing and reports "conflict".
        ``paused`` (when not None) then pauses or resumes, in every case but "conflict".
        A buffered occurrence's wake-up survives. Registrations of one key racing each
        other leave one row: one is "created", the others see it as registered.

        ``overlap="buffer_all"``: the occurrences waiting in a schedule's queue
        (``fire_due``) start one at a time, oldest first, each when the schedule has no
        unfinished run; ``deactivate`` and ``activate`` forget them, like a buffered one.
        """
        ...

    def upsert_schedules(
        self, records: Sequence[tuple[ScheduleRecord, str, bool | None]], *, now_ms: int
    ) -> list[Registration]:
        """``upsert_schedule`` of each ``(record, on_conflict, paused)``, in order, in one
        transaction (a worker's declared schedules at start-up: one commit for many).

        The same outcomes, revisions, rows and state changes as registering them one at a
        time, in a few statements whatever their number: one read of the stored rows, one
        insert of the new ones, one ``executemany`` of the changed ones. A key given twice
        is registered twice, in order. Workers registering the same keys at once leave one
        row per key; a key another registered first is a registration of an existing key
        ("unchanged", or "updated" over theirs). Callers keep batches to a few hundred:
        the transaction holds the rows it writes (SQLite: the whole file) until it ends.
        """
        ...

    def get_schedule(self, key: str) -> ScheduleInfo | None:
        """The schedule with this key, with its last run's status, or None."""
        ...

    def list_schedules(
        self, *, workflow: str | None = None, state: str | None = None, limit: int | None = None
    ) -> list[ScheduleInfo]:
        """Schedules matching the filters, by key (all of them without ``limit``)."""
        ...

    def schedule_keys(self, limit: int) -> list[str]:
        """The first ``limit`` schedule keys in key order, and nothing else of them."""
        ...

    def get_schedule_record(self, key: str) -> DueSchedule | None:
        """The schedule's definition and firing state, for computing its occurrences."""
        ...

    def delete_schedule(self, key: str) -> bool:
        """Remove the schedule and its history (its runs stay). False when unknown."""
        ...

    def set_schedule_state(
        self, key: str, *, action: ScheduleAction, now_ms: int, note: str | None = None
    ) -> bool:
        """Apply a pause, resume, deactivate or activate (rules:
        ``_policy.transition``). False when the key is unknown.

        Paused and inactive schedules are never due. ``resume`` keeps ``next_fire_at`` so
        the occurrences missed meanwhile are decided by catch-up (and recorded as missed
        while paused: the pause's start and end are kept until then). ``activate`` starts
        afresh at the first occurrence after ``now_ms``. Applying the state a schedule
        already has (or an unknown action) changes nothing, its note included.

        A change keeps ``note`` (checked by the caller; None: no note, the previous one is
        forgotten) as ``ScheduleInfo.note`` with ``state_changed_at`` = ``now_ms``, and
        starts the count of failed runs in a row afresh. Every change is recorded in the
        history (decision "paused", "resumed", "deactivated" or "activated" at ``now_ms``,
        the note as its reason: empty without one).
        """
        ...

    def change_schedule_state(
        self,
        key: str,
        *,
        action: ScheduleAction,
        now_ms: int,
        note: str | None = None,
        calendars: Mapping[str, BusinessDays] | None = None,
    ) -> bool | None:
        """``set_schedule_state`` saying what it did: True when the state changed, False
        when the schedule already was so (nothing written), None when the key is unknown.
        ``calendars`` are the stored calendars' days by name: a schedule with a calendar
        places its next occurrence (and a ``"previous"`` move's wake-up) by them."""
        ...

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

    def schedule_history(self, key: str, *, limit: int = 100) -> list[HistoryEntry]:
        """The schedule's decisions, newest first."""
        ...

    def next_schedule_due_ms(
        self, *, pools: Sequence[str], workflows: Sequence[str], ahead_ms: int = 0
    ) -> int | None:
        """When ``fire_due`` with ``ahead_ms`` first has something to take, or None: the
        earliest ``due_at`` among the schedules it could take, less ``ahead_ms`` for an
        ``overlap="allow"`` one."""
        ...
