"""Plain records that cross the store boundary: what is written, and what is read back.

They sit below the store and the pure policy modules (``_occurrences``, ``_planning``,
``_policy``) so that those can speak of stored schedules without importing the store.
Instants are UTC epoch milliseconds; JSON values are canonical JSON text.

The records a firing pass builds for every schedule (``ScheduleRecord``, ``FiringState``,
``StoredSchedule``, ``DueSchedule``, ``NewRun``) are not ``frozen``: a frozen dataclass's
``__init__`` sets each field through ``object.__setattr__``, which made a third of
firing's interpreter work (bench/README.md, "Round four"). Nothing changes one after it
is built; a changed copy is made with ``dataclasses.replace``.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from .business_days import BusinessDays
from .clock import from_ms, to_ms
from .models import DstGap, DstRepeat, OnHoliday, Overlap, ScheduleState, StepTry

__all__ = [
    "OPTIONS",
    "DueSchedule",
    "FiringState",
    "NewJoin",
    "NewRun",
    "ScheduleRecord",
    "StepRecord",
    "StoredSchedule",
    "WorkerRecord",
    "tries_from_json",
    "tries_to_json",
]

#: where a definition's JSON keeps the options that have no column of their own
OPTIONS = "options"

#: failed tries a step keeps, the newest (DESIGN §8)
KEEP_TRIES = 10


@dataclass(slots=True)
class NewRun:
    """A run to insert. ``available_ms`` is when it may first execute."""

    id: str
    workflow: str
    version: str
    input_json: str | None
    priority: int
    pool: str
    created_ms: int
    available_ms: int
    schedule_key: str | None = None
    schedule_revision: int | None = None
    scheduled_for_ms: int | None = None
    retry_json: str | None = None
    #: when it must have completed (an occurrence's fired run under ``deadline``)
    deadline_ms: int | None = None
    #: the run that started it (``ctx.start``, ``ctx.map``)
    parent_id: str | None = None
    #: a map's child: the parent's join (its wait step) it counts itself off when it ends
    joined: str | None = None


@dataclass(frozen=True, slots=True)
class NewJoin:
    """A held parent suspended until its children ``child_ids`` have ended (``ctx.wait``,
    ``ctx.map``): its wait checkpoint (``kind``: "join" or "map", ``step``, ``seq``) is
    written ``waiting`` with
    ``waiting_json``; past ``until_ms`` (None: never) it is woken anyway. For a map,
    ``prefix`` is its children's id prefix (the n-th child's id is ``prefix`` + n) and
    ``released`` how many of them are runnable at first (the rest wait their turn)."""

    run_id: str
    token: str
    kind: str
    step: str
    seq: int
    child_ids: tuple[str, ...]
    until_ms: int | None
    now_ms: int
    attempt: int
    waiting_json: str
    prefix: str | None = None
    released: int | None = None


@dataclass(frozen=True, slots=True)
class StepRecord:
    """A checkpoint to write: ``status`` is "completed" or "failed" (a failed try)."""

    kind: str
    name: str
    seq: int
    status: str
    result_json: str | None
    error: str | None
    attempts: int
    started_ms: int
    finished_ms: int
    #: the step's failed tries (``tries_to_json``); None when it never failed
    tries_json: str | None = None


@dataclass(slots=True)
class ScheduleRecord:
    """A schedule's definition as registered. ``catchup`` None means "all".

    ``definition`` is the canonical JSON of every field that defines the schedule (equal
    strings mean an unchanged definition).
    """

    key: str
    workflow: str
    version: str
    input_json: str | None
    cron: str | None
    every_ms: int | None
    timezone: str
    overlap: Overlap
    catchup: int | None
    catchup_window_ms: int | None
    jitter_ms: int | None
    pool: str
    priority: int
    retry_json: str | None
    start_ms: int | None
    end_ms: int | None
    definition: str
    #: failed runs in a row after which the schedule pauses itself (None: never)
    pause_after_failures: int | None = None
    #: the DST policy of a fixed-time cron (migration 0017)
    dst_gap: DstGap = DstGap.SHIFT
    dst_repeat: DstRepeat = DstRepeat.FIRST
    #: the business calendar's name, and what an occurrence on its days off does
    calendar: str | None = None
    on_holiday: OnHoliday = OnHoliday.SKIP
    #: the most runs it starts, occurrences and backfills (None: no limit)
    max_runs: int | None = None
    #: how long after its occurrence a fired run must have completed (None: no deadline)
    deadline_ms: int | None = None
    #: the calendar's days as last read (not stored: the calendar's own rows are), given
    #: where the rules need them: registering, firing, backfilling. A row read back has
    #: None, and its rules see the calendar's weekend only (``business_days_of``).
    business_days: BusinessDays | None = None

    def business_days_of(self) -> BusinessDays | None:
        """The days the schedule's calendar works, as well as they are known here."""
        if self.calendar is None:
            return None
        if self.business_days is not None and self.business_days.name == self.calendar:
            return self.business_days
        return BusinessDays(self.calendar)

    def option(self, name: str, default: Any = None) -> Any:
        """An option without a column of its own, as the definition's JSON keeps it
        under ``OPTIONS`` (set away from its default), else ``default``."""
        kept = json.loads(self.definition or "{}").get(OPTIONS) or {}
        return kept.get(name, default)


@dataclass(slots=True)
class FiringState:
    """Where a stored schedule stands, as ``_policy.transition`` reads and writes it.

    ``next_fire_ms`` is the earliest occurrence not yet decided; ``due_ms`` is when a
    worker should look at the schedule next (None: never, while paused or inactive);
    ``buffered_ms`` is an occurrence waiting for an earlier run to end; ``paused_ms`` and
    ``resumed_ms`` bound the last pause whose missed occurrences are not yet decided.
    """

    state: ScheduleState
    next_fire_ms: int | None
    due_ms: int | None
    buffered_ms: int | None = None
    paused_ms: int | None = None
    resumed_ms: int | None = None


@dataclass(slots=True)
class StoredSchedule:
    """A schedule's row: its definition, revision, interval anchor and firing state, and
    how many runs it started that ``max_runs`` counts (written only by the transactions
    that insert them)."""

    record: ScheduleRecord
    revision: int
    anchor_ms: int
    firing: FiringState
    runs_counted: int = 0

    @property
    def runs_left(self) -> int | None:
        """How many more runs ``max_runs`` lets it start (None: no limit)."""
        limit = self.record.max_runs
        return None if limit is None else max(0, limit - self.runs_counted)


@dataclass(slots=True)
class DueSchedule:
    """A claimed schedule as the planner sees it: its row, its unfinished runs (oldest
    first), and how many occurrences wait in its ``buffer_all`` queue with the oldest two.
    The row's values keep their one name each (``stored.firing.resumed_ms``)."""

    stored: StoredSchedule
    active_run_ids: tuple[str, ...] = ()
    waiting: int = 0
    queued_ms: tuple[int, ...] = ()

    @property
    def record(self) -> ScheduleRecord:
        return self.stored.record

    @property
    def revision(self) -> int:
        return self.stored.revision

    @property
    def anchor_ms(self) -> int:
        return self.stored.anchor_ms

    @property
    def firing(self) -> FiringState:
        return self.stored.firing


@dataclass(frozen=True, slots=True)
class WorkerRecord:
    """A worker process as it records itself: what it serves, since when, and how often it
    renews the record (``renew_ms``: three renewals missed and it is taken for gone);
    ``waiting``: the declared schedules it holds back for a calendar not stored, (key,
    calendar) pairs by key (migration 0023)."""

    id: str
    host: str
    pid: int
    pools: tuple[str, ...]
    workflows: tuple[str, ...]
    version: str
    started_ms: int
    renew_ms: int
    waiting: tuple[tuple[str, str], ...] = ()


def tries_to_json(tries: Sequence[StepTry]) -> str | None:
    """A step's failed tries as stored (the last ``KEEP_TRIES``); None for none."""
    kept = [
        {
            "attempt": t.attempt,
            "error": t.error,
            "traceback": t.traceback,
            "started_at": to_ms(t.started_at),
            "finished_at": to_ms(t.finished_at),
        }
        for t in tries[-KEEP_TRIES:]
    ]
    return json.dumps(kept, separators=(",", ":")) if kept else None


def tries_from_json(text: str | None) -> tuple[StepTry, ...]:
    """The tries ``tries_to_json`` stored."""
    if text is None:
        return ()
    return tuple(
        StepTry(
            attempt=t["attempt"],
            error=t["error"],
            traceback=t["traceback"],
            started_at=from_ms(t["started_at"]),
            finished_at=from_ms(t["finished_at"]),
        )
        for t in json.loads(text)
    )
