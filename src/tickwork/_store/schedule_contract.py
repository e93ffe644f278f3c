"""The schedules part of the store contract: registration, state and history
(``store.schedules``).

Every method's rules are in its docstring; ``sql_schedules.py`` implements them on both
backends. The rules every part keeps are in ``contract.py``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Protocol

from .._values.business_days import BusinessDays
from .._values.models import (
    HistoryEntry,
    ScheduleAction,
    ScheduleInfo,
)
from .._values.records import DueSchedule, ScheduleRecord

__all__ = ["Registration", "ScheduleStore"]


@dataclass(frozen=True, slots=True)
class Registration:
    """What ``upsert_schedule`` did: "created", "unchanged", "updated", "kept" or
    "conflict" (the key exists with another definition and ``on_conflict="error"``)."""

    outcome: str
    revision: int


class ScheduleStore(Protocol):
    """Schedules: their definitions, states and history (firing them: ``FiringStore``)."""

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

    def schedule_history(self, key: str, *, limit: int = 100) -> list[HistoryEntry]:
        """The schedule's decisions, newest first."""
        ...
