"""The store contract: what every backend (SQLite, PostgreSQL) guarantees.

Rules that hold for every method unless its docstring says otherwise:

- Each method is one transaction: it happens whole or not at all.
- Time is an argument. ``now_ms`` (UTC epoch milliseconds) is always passed in; a store
  never reads a clock and its SQL never calls ``NOW()``. Instants are stored as UTC epoch
  milliseconds, JSON values as canonical JSON text.
- A run being executed is held by a *lease*: a token given by ``claim_runs`` and valid until
  ``lease_expires_at``. Every write on behalf of an execution (``record_step``,
  ``finish_run``, ``reschedule_run``, ``renew_leases``) names the token and changes nothing
  when the token is no longer the run's: the run was taken over after the lease expired, or
  cancelled, or released. So a stale owner can never write a step or a result.
- Driver errors are raised as ``tickwork.errors.StoreError`` with the driver error as cause.
- Schedule rules are pure functions the store calls inside its transaction (``_policy``
  for registration and state changes, ``decide`` for firing): a store reads, calls, writes.
- Retention's rules (which cutoff, what fits in a batch) are pure too (``_retention``);
  ``prune_batch`` applies them a bounded batch at a time.

The plain records it takes and gives (``NewRun``, ``StepRecord``, ``ScheduleRecord``,
``DueSchedule``) live in ``tickwork._records``, below the store, and are re-exported here.
Capabilities only some stores have are Protocols at the end (``Listening``,
``ExclusiveWrites``, ``ReferenceTime``, ``StatsSource``): ask with
``isinstance(store, Listening)``.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

from .._business_days import BusinessDays
from .._clock import Reading
from .._holidays import Holiday
from .._models import (
    ApiKeyInfo,
    CalendarInfo,
    DeadlineMissed,
    HistoryEntry,
    RunInfo,
    RunStatus,
    ScheduleAction,
    ScheduleInfo,
    Stats,
    StepInfo,
    StorageStats,
    Triggered,
    WorkerInfo,
)
from .._planning import Plan
from .._records import DueSchedule, NewRun, ScheduleRecord, StepRecord, WorkerRecord
from .._retention import Cutoffs, PruneBatch, PrunePosition
from .event_contract import EventStore

#: a backfill's pure decision: (the schedule, run ids of the batch that exist, occurrences
#: of the batch already queued) -> the plan (``_planning.plan_backfill``)
BackfillDecide = Callable[[DueSchedule, frozenset[str], frozenset[int]], Plan]

__all__ = [
    "BackfillDecide",
    "ClaimRequest",
    "ClaimedRun",
    "DueSchedule",
    "Ended",
    "ExclusiveWrites",
    "FireResult",
    "LeaseLost",
    "Listening",
    "NewRun",
    "ReferenceTime",
    "Registration",
    "ScheduleRecord",
    "StatsSource",
    "StepRecord",
    "Store",
    "WorkerRecord",
]


class LeaseLost(BaseException):
    """The execution's lease is no longer the run's; the executor must stop writing.

    A ``BaseException`` so that a workflow's ``except Exception`` cannot swallow it.
    """


@dataclass(frozen=True, slots=True)
class ClaimedRun:
    """A run handed to one executor, with the checkpoints recorded so far.

    ``attempt_started_ms`` is when the current attempt first began executing (kept across
    sleeps and take-overs, reset by a retry); ``resumed`` is True when the run had already
    started before this claim; ``cancel_requested`` asks the executor to stop at once;
    ``retry_json`` is a retry policy that overrides the workflow's (from a schedule);
    ``lost_workers`` is how many times in a row the run lost its worker (was taken over
    after its lease expired while running) since its last new completed checkpoint, this
    claim included when it is such a take-over (``max_recoveries``); ``alone``: the run
    lost its worker, and its worker must run no other run while it executes (so that a
    loss is blamed on the run whose step caused it: see ``claim_runs``).
    """

    info: RunInfo
    lease_token: str
    steps: Sequence[StepInfo]
    attempt_started_ms: int
    resumed: bool
    cancel_requested: bool
    retry_json: str | None = None
    lost_workers: int = 0
    alone: bool = False


@dataclass(frozen=True, slots=True)
class ClaimRequest:
    """A worker asking for runs, as ``claim_runs`` takes it (see there)."""

    now_ms: int
    lease_ms: int
    worker: str
    pools: Sequence[str]
    limits: Mapping[str, int | None]
    limit: int = 1
    idle: bool = False


@dataclass(frozen=True, slots=True)
class Ended:
    """A run as its executor left it, and the runs claimed in the same transaction;
    ``auto_paused``: the history entry of its schedule's pause, when the run was the
    ``pause_after_failures``-th failure in a row (``finish_run``)."""

    run: RunInfo
    claimed: Sequence[ClaimedRun] = ()
    auto_paused: HistoryEntry | None = None


class Store(EventStore, Protocol):
    """Durable state of runs, their checkpoints, schedules and API keys."""

    def migrate(self) -> int:
        """Apply pending schema migrations; return the schema version now in force.

        Safe to call from many processes at once: each migration is applied once.
        """
        ...

    def close(self) -> None:
        """Release connections. The store is unusable afterwards."""
        ...

    def insert_run(
        self, run: NewRun, *, then_claim: ClaimRequest | None = None
    ) -> tuple[RunInfo, bool, Sequence[ClaimedRun]]:
        """Insert ``run`` as ``pending`` unless a run with its id exists.

        Returns the stored run, whether it was inserted now, and the runs claimed in the
        same transaction with ``then_claim`` (as by ``claim_runs``: the most urgent
        runnable runs, not necessarily this one). An existing run is returned unchanged
        (whatever its definition): ``start`` is idempotent by run id.
        """
        ...

    def get_run(self, run_id: str) -> RunInfo | None:
        """The run with this id, or None."""
        ...

    def list_runs(
        self,
        *,
        workflow: str | None = None,
        status: RunStatus | None = None,
        schedule_key: str | None = None,
        limit: int = 100,
        before: str | None = None,
    ) -> list[RunInfo]:
        """Runs matching every filter given, newest first (by creation, then id).

        With ``before``, only runs after the run of that id in this order (the next page
        after a page that ended with it); none if there is no such run.
        """
        ...

    def recent_runs(self, keys: Sequence[str], *, limit: int) -> dict[str, list[RunInfo]]:
        """The newest ``limit`` runs of each schedule key, newest first (as ``list_runs``
        with ``schedule_key``), read in one statement (or a few, for many keys) from the
        schedules' index: what each key costs does not grow with its history. Every key
        given is in the result, a key without runs with none."""
        ...

    def list_steps(self, run_id: str) -> list[StepInfo]:
        """The run's checkpoints in the order they were first recorded."""
        ...

    def claim_runs(
        self,
        *,
        now_ms: int,
        lease_ms: int,
        worker: str,
        pools: Sequence[str],
        limits: Mapping[str, int | None],
        limit: int,
        idle: bool = True,
    ) -> list[ClaimedRun]:
        """Take up to ``limit`` runnable runs for ``worker``, each under a new lease.

        Runnable: workflow among ``limits``' keys, pool among ``pools``, and either
        ``pending``/``sleeping`` with ``available_at <= now_ms`` or ``running`` with an
        expired lease (its previous owner is presumed dead). Higher priority first, then
        earlier ``available_at``. A workflow whose limit is N never has more than N runs
        under a live lease, across every process sharing the store. Claimed runs become
        ``running``; a run never started before gets ``started_at = now_ms``.

        Taking over a ``running`` run whose lease expired counts a lost worker, in the
        claim's own write: one more when the run has as many completed checkpoints as at
        its previous take-over (no progress since), else the first. A released lease
        (``release_leases``) or a run handed back (``reschedule_run``) is no loss. Each
        claimed run's ``lost_workers`` is that count, or 0 when the run completed a
        checkpoint since its last take-over. The loss counts only when the run was the
        lost worker's only run in flight (no other run is under a lease of that worker,
        nor was taken over from it since): else it cannot be told whose step killed the
        worker, and the count is neither raised nor cleared.

        A run taken over is a *suspect* (``ClaimedRun.alone``) until that execution ends
        (``finish_run``, ``reschedule_run``): it is claimed only when ``idle`` (the worker
        has no run in flight), and then alone, before any other run; a claim that is not
        ``idle`` passes suspects over.
        """
        ...

    def claim_or_next_due(
        self,
        *,
        now_ms: int,
        lease_ms: int,
        worker: str,
        pools: Sequence[str],
        limits: Mapping[str, int | None],
        limit: int,
        idle: bool = True,
    ) -> tuple[list[ClaimedRun], int | None]:
        """``claim_runs``, and when it takes fewer than ``limit`` runs, ``next_due_ms``
        (of ``limits``' workflows, with the suspects if ``idle``) read in the same
        transaction, after the claim: a worker's poll that finds nothing is one
        transaction. The due time is None when ``limit`` runs were taken."""
        ...

    def renew_leases(
        self, *, tokens: Mapping[str, str], now_ms: int, lease_ms: int
    ) -> dict[str, bool]:
        """Extend the leases of ``{run_id: token}``.

        Returns ``{run_id: cancel_requested}`` for the runs still held; the others are lost.
        """
        ...

    def record_step(
        self, *, run_id: str, token: str, step: StepRecord, now_ms: int, lease_ms: int
    ) -> bool:
        """Store (or replace) one checkpoint if ``token`` still holds the run, atomically.

        The lease is kept alive by ``renew_leases``; a backend may renew it here too.

        Returns True when cancellation of the run was requested. Raises ``LeaseLost``, with
        nothing written, when ``token`` no longer holds the run.
        """
        ...

    def finish_run(
        self,
        *,
        run_id: str,
        token: str,
        status: RunStatus,
        result_json: str | None,
        error: str | None,
        now_ms: int,
        then_claim: ClaimRequest | None = None,
        running: RunInfo | None = None,
        traceback: str | None = None,
    ) -> Ended:
        """End the run as ``completed``, ``failed`` or ``cancelled`` and drop its lease;
        a failed run keeps ``traceback`` (bounded by the caller).

        With ``then_claim``, runs are claimed in the same transaction as by ``claim_runs``
        (an executor takes its next run without a transaction of its own). ``running`` is
        the run as its claim returned it: given, the ended run is built from it instead of
        read back (nothing but status, result, error, traceback and ``finished_at`` changes while a
        lease is held). Raises ``LeaseLost``, with nothing written, when ``token`` no
        longer holds the run.

        A run of a schedule counts toward its ``pause_after_failures``, in the same
        transaction: ``completed`` resets the count of failed runs in a row, ``failed``
        adds one (``cancelled`` does neither). When the count reaches the option on an
        active schedule, the schedule is paused with a note naming this run and
        ``error``, recorded in its history as "auto_paused" (the run as ``run_id``);
        ``Ended.auto_paused`` is that entry. Retries of a run are not ends: only the run's
        last failure counts.
        """
        ...

    def reschedule_run(
        self,
        *,
        run_id: str,
        token: str,
        status: RunStatus,
        available_ms: int,
        attempt: int,
        error: str | None,
        new_attempt: bool,
        then_claim: ClaimRequest | None = None,
    ) -> Ended:
        """Put the run back as ``pending`` or ``sleeping`` until ``available_ms``.

        Used for durable sleeps, retry back-off and handing a run back at shutdown. With
        ``new_attempt`` the failed tries of steps are forgotten and the attempt clock resets
        (completed steps are always kept). ``then_claim`` as in ``finish_run``. Raises
        ``LeaseLost`` when the token is stale.
        """
        ...

    def cancel_run(self, run_id: str, *, now_ms: int) -> bool:
        """Cancel a run: at once when ``pending`` or ``sleeping``; when ``running``, flag it
        so its executor stops at its next step boundary.

        Returns False when the run is unknown or already finished.
        """
        ...

    def release_leases(self, *, tokens: Sequence[str], now_ms: int) -> int:
        """Expire the given leases now so another worker may take the runs at once."""
        ...

    def next_due_ms(
        self, *, pools: Sequence[str], workflows: Sequence[str], suspects: bool = True
    ) -> int | None:
        """The earliest ``available_at`` of any run ``claim_runs`` could take, or None;
        without the suspects unless ``suspects`` (a claim that is not ``idle`` passes
        them over: a busy worker waits for what it could take)."""
        ...

    # -- schedules -------------------------------------------------------------------------

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

    def next_firing_due_ms(
        self, *, pools: Sequence[str], workflows: Sequence[str], ahead_ms: int = 0
    ) -> int | None:
        """When the firing loop next has something to do, or None: the earliest of
        ``next_schedule_due_ms``, ``next_deadline_ms`` and ``next_flush_ms``, read in one
        statement (a worker reads it at every poll)."""
        ...

    # -- deadlines ---------------------------------------------------------------------------

    def record_missed_deadlines(self, *, now_ms: int, limit: int) -> list[DeadlineMissed]:
        """Check up to ``limit`` runs whose deadline (``NewRun.deadline_ms``) is at or
        before ``now_ms``, earliest first: each that had not completed by it (still
        unfinished, failed, cancelled, or completed late) is recorded once as
        ``deadline_missed`` in its schedule's history and counted, in the transaction that
        marks it checked; what it returns is what was recorded. A run that completed by
        its deadline was cleared by ``finish_run`` and is never seen; a run whose schedule
        was removed is marked checked and recorded nowhere. Runs another worker's pass
        holds are skipped, never waited for."""
        ...

    def next_deadline_ms(self) -> int | None:
        """The earliest deadline still to check, or None."""
        ...

    def recent_deadline_misses(self, *, since_ms: int, limit: int) -> list[HistoryEntry]:
        """The ``deadline_missed`` entries of every schedule decided at or after
        ``since_ms``, newest first, at most ``limit`` (an index of those entries only)."""
        ...

    # -- API keys --------------------------------------------------------------------------

    def create_api_key(self, *, key_id: str, name: str, secret_hash: str, now_ms: int) -> bool:
        """Store a key; False (nothing stored) when a live key already has that name."""
        ...

    def api_key_hash(self, key_id: str) -> str | None:
        """The stored hash of a live (not revoked) key's secret, or None."""
        ...

    def list_api_keys(self) -> list[ApiKeyInfo]:
        """Every key, revoked ones included, oldest first."""
        ...

    def revoke_api_key(self, name_or_id: str, *, now_ms: int) -> bool:
        """Revoke the live key with this id, else the live key with this name (never both);
        False when there is none."""
        ...

    # -- business calendars (migration 0016) --------------------------------------------

    def put_calendar(self, calendar: CalendarInfo, *, now_ms: int) -> None:
        """Store ``calendar`` (its ``updated_at`` is ``now_ms``), replacing the one with its
        name whole, and drop that name's resolved years (its country may have changed)."""
        ...

    def get_calendar(self, name: str) -> CalendarInfo | None:
        """The calendar with this name, or None."""
        ...

    def list_calendars(self) -> list[CalendarInfo]:
        """Every calendar, by name."""
        ...

    def delete_calendar(self, name: str) -> bool:
        """Delete the calendar and its resolved years; False when there is none.
        ``CalendarInUse`` (naming their keys, sorted), deleting nothing, while schedules
        use it: checked and deleted in one transaction, under a lock on the calendar's row
        that a registration naming the calendar holds shared (``upsert_schedule(s)``
        refuses with ``ConfigError`` a calendar not stored, in its own transaction), so
        that neither can slip between the other's check and write."""
        ...

    def store_calendar_year(self, name: str, year: int, holidays: Sequence[Holiday]) -> None:
        """Store a calendar's public holidays of ``year``; a year already stored is kept
        (two processes resolving it at once store it once)."""
        ...

    def calendar_year(self, name: str, year: int) -> tuple[Holiday, ...] | None:
        """A calendar's stored public holidays of ``year`` in date order; None when that
        year is not stored."""
        ...

    def calendar_stamps(self) -> dict[str, int]:
        """Every calendar's name and ``updated_at`` (epoch ms): one small read, so that
        the firing loop sees a change without reading the calendars' dates again."""
        ...

    # -- workers ---------------------------------------------------------------------------

    def renew_worker(self, worker: WorkerRecord, *, now_ms: int) -> None:
        """Record ``worker`` as seen at ``now_ms``: insert its row, or rewrite it whole (what
        it serves may have grown; a stop recorded earlier is forgotten). In the same short
        write, forget at most ``_liveness.FORGET_BATCH`` workers not seen for
        ``_liveness.FORGET_AFTER_MS``, oldest first (rows another renewal holds are left to
        it)."""
        ...

    def stop_worker(self, worker_id: str, *, now_ms: int) -> bool:
        """Record that the worker stopped gracefully at ``now_ms`` (listed, not alive, until
        forgotten). False when there is no such worker."""
        ...

    def list_workers(self, *, now_ms: int) -> list[WorkerInfo]:
        """The workers seen within ``_liveness.FORGET_AFTER_MS`` of ``now_ms``, gone ones
        included, oldest start first; ``alive`` as ``_liveness.worker_alive`` says at
        ``now_ms``."""
        ...

    # -- retention -------------------------------------------------------------------------

    def prune_batch(self, *, cutoffs: Cutoffs, budget: int, position: PrunePosition) -> PruneBatch:
        """Remove, in ONE short write transaction, at most ``budget`` rows (runs, steps and
        history entries together) that retention no longer keeps, going on from
        ``position``; return how many went and where the next batch starts.

        Removed: ended runs (``completed``, ``failed``, ``cancelled``) whose ``finished_at``
        is before ``cutoffs.for_workflow(workflow)``, with their steps; history entries
        whose ``decided_at`` is before ``cutoffs.history_ms``. Never removed: unfinished
        runs, a run its schedule names as its latest (``last_run_id``), the run of a
        schedule's latest occurrence that got one (``last_occurrence_at``), a schedule's
        ``KEEP_HISTORY`` newest entries (by id), anything whose cutoff is None. A run goes
        with all its steps in one batch, except a run heavier than a batch: its steps go
        first, ``budget`` at a time. Several stores pruning at once never wait for each
        other nor remove a row twice (rows another transaction holds are skipped, left to
        it); the schedules' positions are on their rows, so nothing fires again.
        A pass starts at ``PrunePosition()`` and ends when ``position.done``.
        """
        ...

    def storage_stats(self, *, cutoffs: Cutoffs) -> StorageStats:
        """Rows and bytes per tickwork table, the oldest ended run's end, and the rows
        ``prune_batch`` would remove under ``cutoffs`` (ended runs; history entries beyond
        each schedule's ``KEEP_HISTORY`` newest), read in one transaction."""
        ...


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


# -- optional capabilities: a caller asks with isinstance(store, Listening) ----------------


@runtime_checkable
class Listening(Protocol):
    """A store that can tell its workers, across processes, when work became due."""

    def listen(self, on_notify: Callable[[str], None], stop: threading.Event) -> None:
        """Call ``on_notify(payload)`` for each change ("runs", "schedules", "events": a
        debounce or batch buffer due sooner; "listening" after each (re)connection)
        until ``stop`` is set; blocking.

        Changes made while the connection is down are not reported: callers keep a
        fallback poll.
        """
        ...


@runtime_checkable
class ExclusiveWrites(Protocol):
    """A store whose write transactions take turns (SQLite: one write lock per file): a
    long write holds every other writer up, firing and claiming included, so background
    work (pruning) keeps each of its writes to a few milliseconds."""

    def writes_take_turns(self) -> bool:
        """True (a method, so that ``isinstance`` can ask)."""
        ...

    def copy_log(self) -> None:
        """Copy what the write-ahead log holds into the database now, on the calling
        thread, holding no other writer up: a writer of many pages (pruning) pays for
        its own log between its writes, rather than a firing's commit paying for it."""
        ...


@runtime_checkable
class ReferenceTime(Protocol):
    """A store with a clock every process sharing it agrees on."""

    def database_now_ms(self) -> int:
        """The database server's clock, in UTC epoch milliseconds."""
        ...

    def read_database_clock(self) -> Reading:
        """The database server's clock, with the steady clock's readings around the
        query's own round trip (not the wait for a connection before it)."""
        ...


@runtime_checkable
class StatsSource(Protocol):
    """A store that counts events as they happen, for monitoring."""

    def read_stats(self, *, now_ms: int) -> Stats:
        """The fleet's figures now, in one read transaction, never recounted from history.

        Counters and histograms (buckets of ``_buckets``) count each event once, in the
        transaction that wrote it: a firing decision (``count`` occurrences), a scheduled
        run created (its lateness), a run ended (its duration when it had started), a try
        of a step ended (``kind`` "step"). Deleting runs, steps or history lowers none of
        them. ``runs`` holds the unfinished runs by status now, and for ended statuses
        the runs that ever ended so. ``schedules`` counts schedules by state,
        ``active_pools`` the active ones by pool, and ``overdue`` holds each active
        schedule whose next occurrence is overdue at ``now_ms`` (``_liveness.overdue_ms``:
        past it by more than the grace).
        """
        ...
