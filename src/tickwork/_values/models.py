"""The values tickwork hands out: runs, steps, schedules, events and their statuses,
and the choices a schedule's options carry.

Enum values are the strings stored in the database and sent on the wire. Instants are
``Instant`` (aware UTC datetimes) and lengths of time ``Length`` (timedeltas): the
annotations carry their wire form, so each value's JSON is derived from its fields
(``_wire_values.form``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import date, timedelta
from enum import StrEnum
from typing import Any

from .wire_values import Instant, Length

__all__ = [
    "ACTIVE_STATUSES",
    "ApiKeyInfo",
    "Backfilled",
    "CalendarInfo",
    "DeadlineMissed",
    "Decision",
    "DstGap",
    "DstRepeat",
    "Event",
    "EventInfo",
    "Histogram",
    "HistoryEntry",
    "OnHoliday",
    "Outcome",
    "Overlap",
    "Pruned",
    "RunInfo",
    "RunStatus",
    "ScheduleAction",
    "ScheduleInfo",
    "ScheduleState",
    "Stats",
    "StepInfo",
    "StorageStats",
    "SubscriptionInfo",
    "TableStats",
    "WorkerInfo",
]


# The choices a schedule's options carry: values, so here, below the cron walk and
# the business days that act on them.


class DstGap(StrEnum):
    """A fixed-time job whose wall time a spring-forward gap skips: ``SHIFT`` runs it once
    at the first instant after the gap (Debian cron), ``SKIP`` not at all that day."""

    SHIFT = "shift"
    SKIP = "skip"


class DstRepeat(StrEnum):
    """A fixed-time job whose wall time a fall-back repeats: ``FIRST`` runs it at the
    first of the two instants (Debian cron), ``LAST`` at the second, ``BOTH`` at each."""

    FIRST = "first"
    LAST = "last"
    BOTH = "both"


class OnHoliday(StrEnum):
    """What a schedule with a calendar does with an occurrence on a day off: ``SKIP`` it
    (recorded ``skipped_holiday``), or move it to the ``NEXT`` or ``PREVIOUS`` business
    day at the same local time (recorded ``moved_holiday``, same occurrence id)."""

    SKIP = "skip"
    NEXT = "next"
    PREVIOUS = "previous"


class RunStatus(StrEnum):
    PENDING = "pending"
    RUNNING = "running"
    SLEEPING = "sleeping"
    #: waiting for an event (DESIGN §9): the worker is freed until one comes or it times out
    WAITING = "waiting"
    COMPLETED = "completed"
    FAILED = "failed"
    CANCELLED = "cancelled"


ACTIVE_STATUSES = frozenset(
    {RunStatus.PENDING, RunStatus.RUNNING, RunStatus.SLEEPING, RunStatus.WAITING}
)


@dataclass(frozen=True, slots=True)
class RunInfo:
    """One run of a workflow, as stored. Instants are aware UTC datetimes."""

    id: str
    workflow: str
    version: str
    status: RunStatus
    input: Any
    result: Any
    error: str | None
    attempt: int
    priority: int
    pool: str
    schedule_key: str | None
    scheduled_for: Instant | None
    created_at: Instant
    started_at: Instant | None
    finished_at: Instant | None
    #: the revision of the schedule the run was created under (None when not scheduled)
    schedule_revision: int | None = None
    #: where a run that failed for good failed (the traceback's end, bounded)
    traceback: str | None = None
    #: the run that started this one with ``ctx.start`` / ``ctx.map`` (None: a top-level run)
    parent_id: str | None = None


@dataclass(frozen=True, slots=True)
class Outcome:
    """How a child run ended, as ``ctx.wait(..., settle=True)`` and ``ctx.map(...,
    settle=True)`` return it: ``status`` is ``completed`` (``result`` set), ``failed``
    (``error`` set) or ``cancelled``."""

    run_id: str
    status: RunStatus
    result: Any
    error: str | None


@dataclass(frozen=True, slots=True)
class StepTry:
    """A failed try of a step: its error and traceback (the end of it, bounded)."""

    attempt: int
    error: str
    traceback: str | None
    started_at: Instant
    finished_at: Instant


@dataclass(frozen=True, slots=True)
class StepInfo:
    """One checkpoint of a run: a step, a durable sleep or a recorded ``now()``."""

    run_id: str
    name: str
    kind: str  # "step", "sleep" or "now"
    status: str  # "completed" or "failed"
    result: Any
    error: str | None
    attempts: int
    started_at: Instant
    finished_at: Instant
    #: its failed tries, the last ten, oldest first (a step that succeeded keeps them)
    tries: tuple[StepTry, ...] = ()


class ScheduleState(StrEnum):
    ACTIVE = "active"
    PAUSED = "paused"
    INACTIVE = "inactive"


class ScheduleAction(StrEnum):
    """A state change a user asks of a schedule (``Engine.console.change_state``; the faces'
    pause / resume / activate / deactivate)."""

    PAUSE = "pause"
    RESUME = "resume"
    ACTIVATE = "activate"
    DEACTIVATE = "deactivate"


class Overlap(StrEnum):
    """What to do with an occurrence while an earlier run of the schedule is unfinished."""

    ALLOW = "allow"
    SKIP = "skip"
    BUFFER_ONE = "buffer_one"
    CANCEL_PREVIOUS = "cancel_previous"
    BUFFER_ALL = "buffer_all"


class Decision(StrEnum):
    """What became of an occurrence (one history entry each)."""

    STARTED = "started"
    SKIPPED_OVERLAP = "skipped_overlap"
    BUFFERED = "buffered"
    CANCELLED_PREVIOUS = "cancelled_previous"
    DROPPED_CATCHUP = "dropped_catchup"
    MISSED_PAUSED = "missed_paused"
    TRIGGERED = "triggered"
    ALREADY_STARTED = "already_started"
    BACKFILLED = "backfilled"
    # State changes, each recorded with its note (``_policy.STATE_DECISIONS``); an
    # auto-pause's (``pause_after_failures``) names the last failed run.
    PAUSED = "paused"
    RESUMED = "resumed"
    DEACTIVATED = "deactivated"
    ACTIVATED = "activated"
    AUTO_PAUSED = "auto_paused"
    # DST and business calendars (DESIGN §2, §3): the reason names the zone and its gap,
    # or the calendar and the date.
    SKIPPED_DST = "skipped_dst"
    SKIPPED_HOLIDAY = "skipped_holiday"
    MOVED_HOLIDAY = "moved_holiday"
    #: ``max_runs``: an occurrence not started because the schedule started its runs, and
    #: the schedule deactivating itself (its note as the reason)
    MAX_RUNS_REACHED = "max_runs_reached"
    #: ``deadline``: an occurrence's run had not completed that long after it
    DEADLINE_MISSED = "deadline_missed"


@dataclass(frozen=True, slots=True)
class ScheduleInfo:
    """A stored schedule. ``every`` and ``jitter`` are timedeltas; instants aware UTC."""

    key: str
    workflow: str
    input: Any
    cron: str | None
    every: Length | None
    timezone: str
    overlap: Overlap
    catchup: int | str
    jitter: Length | None
    pool: str
    priority: int
    state: ScheduleState
    revision: int
    next_fire_at: Instant | None
    last_fire_at: Instant | None
    last_run_id: str | None
    last_run_status: RunStatus | None
    created_at: Instant
    updated_at: Instant
    #: why the schedule is in its state: the note of its latest state change (None: none)
    note: str | None = None
    #: when its state last changed (its creation, if never since)
    state_changed_at: Instant | None = None
    #: failed runs in a row after which it pauses itself (None: never)
    pause_after_failures: int | None = None
    #: the most runs it starts, occurrences and backfills (None: no limit)
    max_runs: int | None = None
    #: how many more runs ``max_runs`` lets it start (None without ``max_runs``)
    runs_left: int | None = None
    #: how long after its occurrence a fired run must have completed (None: no deadline)
    deadline: Length | None = None
    #: how late the next occurrence is, undecided (active schedules only; ``_liveness``):
    #: the sign that no worker serves the schedule. None when it is not overdue, and
    #: within the grace (``OVERDUE_GRACE_MS``, 10 s) of the occurrence or a resume.
    overdue_by: Length | None = None
    #: the DST policy of a fixed-time cron (DESIGN §2)
    dst_gap: DstGap = DstGap.SHIFT
    dst_repeat: DstRepeat = DstRepeat.FIRST
    #: the business calendar it follows (None: every day is a business day) and what an
    #: occurrence on a day off does
    calendar: str | None = None
    on_holiday: OnHoliday = OnHoliday.SKIP


@dataclass(frozen=True, slots=True)
class DeadlineMissed:
    """An occurrence's run that had not completed ``deadline`` after the occurrence, as
    ``engine.on_deadline_missed`` hooks receive it (once per run, fleet-wide).

    ``status`` is the run's when the miss was recorded: still ``running`` (or pending,
    sleeping, waiting), ended ``failed``, or ``completed`` late (a cancelled run misses
    none);
    ``reason`` says it in words, as the ``deadline_missed`` history entry does.
    """

    key: str
    run_id: str
    occurrence: Instant
    deadline_at: Instant
    status: RunStatus
    reason: str


@dataclass(frozen=True, slots=True)
class HistoryEntry:
    """One decision about one occurrence (or, with ``count`` > 1, a span of them).

    ``occurrence`` is the occurrence's instant (the first of the span), ``last_occurrence``
    the last of a span, ``run_id`` the run started or concerned, ``reason`` the why.
    """

    key: str
    occurrence: Instant
    decision: Decision
    reason: str
    run_id: str | None
    revision: int
    decided_at: Instant
    count: int = 1
    last_occurrence: Instant | None = None


@dataclass(frozen=True, slots=True)
class Triggered:
    """What a trigger did: ``run_id`` is the run it started, or the run the occurrence
    already had (``started`` False), with that run's ``status`` now."""

    run_id: str
    started: bool
    status: RunStatus


@dataclass(frozen=True, slots=True)
class Backfilled:
    """What a backfill did: the run id of every occurrence, oldest first; how many of them
    it ``started`` (or queued to start in turn) and how many ``already_had_runs``."""

    run_ids: list[str]
    started: int
    already_had_runs: int


@dataclass(frozen=True, slots=True)
class Pruned:
    """What a pruning pass removed, by table: ended runs, their steps, history entries,
    events (DESIGN §9)."""

    runs: int = 0
    steps: int = 0
    history: int = 0
    events: int = 0

    @property
    def total(self) -> int:
        return self.runs + self.steps + self.history + self.events


@dataclass(frozen=True, slots=True)
class WorkerInfo:
    """A worker process as it recorded itself, renewed every few seconds.

    ``alive`` is False once it missed three renewals or stopped (``stopped_at``, a graceful
    stop); ``last_seen`` is its last renewal. Instants are aware UTC datetimes.
    ``waiting_for_calendars``: the declared schedules it does not register because their
    calendar is not stored, as (key, calendar) pairs by key (``dict(...)`` for a mapping);
    it registers each once its calendar is stored.
    """

    id: str
    host: str
    pid: int
    pools: tuple[str, ...]
    workflows: tuple[str, ...]
    version: str
    started_at: Instant
    last_seen: Instant
    alive: bool
    stopped_at: Instant | None = None
    waiting_for_calendars: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True, slots=True)
class ApiKeyInfo:
    """An API key as listed: never its secret."""

    id: str
    name: str
    created_at: Instant
    revoked_at: Instant | None


@dataclass(frozen=True, slots=True)
class CalendarInfo:
    """A stored business calendar (DESIGN §3): the weekend's day names (``"SAT"``...),
    the dates listed as holidays, and the ``country`` / ``subdivision`` whose public
    holidays it adds (resolved per year and stored as they are needed)."""

    name: str
    weekend: tuple[str, ...]
    holidays: tuple[date, ...]
    country: str | None
    subdivision: str | None
    updated_at: Instant


@dataclass(frozen=True)
class Histogram:
    """Observations in milliseconds, by bucket (``_buckets``): ``counts[i]`` of them fell in
    bucket ``i`` (above ``bounds[i - 1]``, at most ``bounds[i]``; the last, above all)."""

    counts: tuple[int, ...]
    sum_ms: int

    @property
    def count(self) -> int:
        """Every observation."""
        return sum(self.counts)


@dataclass(frozen=True)
class Stats:
    """The fleet's counts and histograms, for monitoring: counted by the store as events
    happen, so pruning rows never lowers them; and what the schedules say now (by state,
    active ones by pool, the overdue ones), read from their rows without building them."""

    #: (workflow, status) -> unfinished runs now; ended runs ever, for ended statuses
    runs: dict[tuple[str, str], int] = field(default_factory=dict)
    #: state -> schedules
    schedules: dict[str, int] = field(default_factory=dict)
    #: decision -> occurrences decided so (a span of dropped ones counts each)
    firings: dict[str, int] = field(default_factory=dict)
    #: workflow -> created_at - scheduled_for of its scheduled runs
    lateness: dict[str, Histogram] = field(default_factory=dict)
    #: (workflow, status) -> finished_at - started_at of its ended runs that had started
    run_durations: dict[tuple[str, str], Histogram] = field(default_factory=dict)
    #: step status -> finished_at - started_at of each try of a step (not sleeps, not now())
    step_durations: dict[str, Histogram] = field(default_factory=dict)
    #: pool -> active schedules in it (a pool nobody serves is one of these without workers)
    active_pools: dict[str, int] = field(default_factory=dict)
    #: key -> how late the next occurrence of each overdue schedule is (``overdue_by``)
    overdue: dict[str, timedelta] = field(default_factory=dict)
    #: key -> runs of the schedule that missed their ``deadline``, ever
    deadline_misses: dict[str, int] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class TableStats:
    """One table: its rows, and its bytes with its indexes (None when the database
    cannot tell: an SQLite built without the ``dbstat`` table)."""

    name: str
    rows: int
    bytes: int | None


@dataclass(frozen=True, slots=True)
class StorageStats:
    """What the database holds and what retention will remove (``tickwork db stats``).

    ``total_bytes``: SQLite, the file (pages times page size), ``free_bytes`` of it free pages
    that new rows reuse; PostgreSQL, the tables with their indexes (``free_bytes`` None).
    ``prunable_runs`` are ended runs past their retention (a schedule's latest run among
    them is kept) and ``prunable_history`` history entries past it, both waiting for the
    next pass; ``retention`` the engine's (None: everything is kept).
    """

    tables: tuple[TableStats, ...]
    total_bytes: int
    free_bytes: int | None
    oldest_ended_at: Instant | None
    prunable_runs: int
    prunable_history: int
    retention: Length | None = None


# -- events (DESIGN §9): an event as stored, and a stored subscription ---------------


@dataclass(frozen=True, slots=True)
class Event:
    """An event as stored: its name, id, JSON payload and when it was emitted (UTC)."""

    name: str
    id: str
    payload: Any
    emitted_at: Instant


@dataclass(frozen=True, slots=True)
class EventInfo(Event):
    """An event as stored (an ``Event``), with the runs it started and the waiting runs
    it woke."""

    started: tuple[str, ...] = ()
    woke: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class SubscriptionInfo:
    """A stored subscription: events ``name`` matching ``match`` start ``workflow``;
    ``declared`` for ``@engine.workflow(on=...)``, False for ``subscribe()``.

    Its flow control, as ``On(...)`` gave it (all None: a run per event): ``debounce``,
    ``debounce_max``, ``batch``, ``batch_window``, and ``group_key``, ``On``'s ``key=``
    (the payload path whose value picks the buffer; named apart from the subscription's
    own ``key``)."""

    key: str
    workflow: str
    name: str
    match: dict[str, Any] | None
    input: dict[str, str] | None
    declared: bool
    created_at: Instant
    debounce: Length | None = None
    debounce_max: Length | None = None
    group_key: str | None = None
    batch: int | None = None
    batch_window: Length | None = None
