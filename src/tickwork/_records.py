"""Plain records that cross the store boundary: what is written, and what is read back.

They sit below the store and the pure policy modules (``_occurrences``, ``_planning``,
``_policy``) so that those can speak of stored schedules without importing the store.
Instants are UTC epoch milliseconds; JSON values are canonical JSON text.
"""

from __future__ import annotations

from dataclasses import dataclass

from ._models import ScheduleState

__all__ = [
    "DueSchedule",
    "FiringState",
    "NewRun",
    "ScheduleRecord",
    "StepRecord",
    "StoredSchedule",
]


@dataclass(frozen=True, slots=True)
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


@dataclass(frozen=True, slots=True)
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
    overlap: str
    catchup: int | None
    catchup_window_ms: int | None
    jitter_ms: int | None
    pool: str
    priority: int
    retry_json: str | None
    start_ms: int | None
    end_ms: int | None
    definition: str


@dataclass(frozen=True, slots=True)
class DueSchedule:
    """A claimed schedule as the planner sees it, with its unfinished runs (oldest first)."""

    record: ScheduleRecord
    revision: int
    anchor_ms: int
    next_fire_ms: int | None
    buffered_ms: int | None
    paused_from_ms: int | None
    resumed_ms: int | None
    active_run_ids: tuple[str, ...]


@dataclass(frozen=True, slots=True)
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


@dataclass(frozen=True, slots=True)
class StoredSchedule:
    """A schedule's row: its definition, revision, interval anchor and firing state."""

    record: ScheduleRecord
    revision: int
    anchor_ms: int
    firing: FiringState
