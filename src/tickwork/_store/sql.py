"""The store contract in SQL, shared by every backend: composed parts over one ``Database``.

Each part owns its statements (named constants with a comment each, ``?`` placeholders)
and reads and writes through the dialect's ``Database`` (``transaction.py``): runs, leases
and checkpoints (``sql_runs.py``), schedules (``sql_schedules.py``), firing them and when
the firing loop is next due (``sql_firing.py``), API keys (``sql_keys.py``), workers
(``sql_workers.py``), aggregates (``stats.py``), pruning (``sql_prune.py``), what the
database holds (``sql_storage.py``) and the latest runs of many schedules at once
(``recent_runs.py``). ``SqlStore`` is the ``Store`` they make together. Decisions stay
in Python; the SQL only reads and writes. Where the dialects differ, a part calls its
``Database``'s method for it and never asks which one it has.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import ClassVar, TypeVar

from .._business_days import BusinessDays
from .._event_flow import SubscriptionDecision
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
from .._retention import Cutoffs, PruneBatch, PrunePosition
from .contract import (
    BackfillDecide,
    ClaimedRun,
    ClaimRequest,
    DueSchedule,
    Ended,
    FireResult,
    NewRun,
    Registration,
    ScheduleRecord,
    StepRecord,
    WorkerRecord,
)
from .event_contract import StoredEvent
from .event_records import Emitted, NewEvent, NewWait, SubscriptionRecord
from .recent_runs import RecentRunsSql
from .sql_calendars import CalendarsSql
from .sql_deadlines import DeadlinesSql
from .sql_events import EventsSql
from .sql_firing import FiringSql
from .sql_keys import ApiKeysSql
from .sql_prune import PruneSql
from .sql_runs import RunsSql
from .sql_schedules import SchedulesSql
from .sql_storage import StorageSql
from .sql_workers import WorkersSql
from .stats import StatsSql
from .transaction import Database, Transaction

__all__ = ["SqlStore"]

T = TypeVar("T")


class SqlStore:
    """Every ``Store`` method (and ``read_stats``), each handed to the part that owns it.

    A dialect subclasses it to open its ``Database`` and add what only it offers (the
    fleet's clock and LISTEN on PostgreSQL, the log's copy on SQLite); every difference
    in how the contract is carried out is a method of the ``Database``.
    """

    #: "sqlite" or "postgres", set by the dialect's subclass (for people and tests: no
    #: part reads it)
    dialect: ClassVar[str]

    def __init__(self, db: Database) -> None:
        self._db = db
        self._prune = PruneSql(db)
        self._storage = StorageSql(db)
        self._runs = RunsSql(db)
        self._recent = RecentRunsSql(db)
        self._schedules = SchedulesSql(db)
        #: firing: fire, trigger, backfill, and when the firing loop is next due
        self.firing = FiringSql(db)
        self._deadlines = DeadlinesSql(db)
        self._keys = ApiKeysSql(db)
        self._calendars = CalendarsSql(db)
        self._stats = StatsSql(db)
        self._workers = WorkersSql(db)
        self._events = EventsSql(db, self._runs)

    # -- for tests: a write on the database beneath ----------------------------------------

    def _write(self, work: Callable[[Transaction], T]) -> T:
        """Run ``work`` in a write transaction and return what it returns."""
        return self._db.write(work)

    def migrate(self) -> int:
        return self._db.migrate()

    # -- runs ------------------------------------------------------------------------------

    def insert_run(
        self, run: NewRun, *, then_claim: ClaimRequest | None = None
    ) -> tuple[RunInfo, bool, Sequence[ClaimedRun]]:
        return self._runs.insert_run(run, then_claim=then_claim)

    def get_run(self, run_id: str) -> RunInfo | None:
        return self._runs.get_run(run_id)

    def list_runs(
        self,
        *,
        workflow: str | None = None,
        status: RunStatus | None = None,
        schedule_key: str | None = None,
        limit: int = 100,
        before: str | None = None,
    ) -> list[RunInfo]:
        return self._runs.list_runs(
            workflow=workflow, status=status, schedule_key=schedule_key, limit=limit,
            before=before,
        )  # fmt: skip

    def recent_runs(self, keys: Sequence[str], *, limit: int) -> dict[str, list[RunInfo]]:
        return self._recent.recent_runs(keys, limit=limit)

    def list_steps(self, run_id: str) -> list[StepInfo]:
        return self._runs.list_steps(run_id)

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
        request = ClaimRequest(now_ms, lease_ms, worker, pools, limits, limit, idle)
        return self._runs.claim_runs(request)

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
        request = ClaimRequest(now_ms, lease_ms, worker, pools, limits, limit, idle)
        return self._runs.claim_or_next_due(request)

    def renew_leases(
        self, *, tokens: Mapping[str, str], now_ms: int, lease_ms: int
    ) -> dict[str, bool]:
        return self._runs.renew_leases(tokens=tokens, now_ms=now_ms, lease_ms=lease_ms)

    def record_step(
        self, *, run_id: str, token: str, step: StepRecord, now_ms: int, lease_ms: int
    ) -> bool:
        return self._runs.record_step(
            run_id=run_id, token=token, step=step, now_ms=now_ms, lease_ms=lease_ms
        )

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
        return self._runs.finish_run(
            run_id=run_id, token=token, status=status, result_json=result_json, error=error,
            now_ms=now_ms, then_claim=then_claim, running=running, traceback=traceback,
        )  # fmt: skip

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
        return self._runs.reschedule_run(
            run_id=run_id, token=token, status=status, available_ms=available_ms,
            attempt=attempt, error=error, new_attempt=new_attempt, then_claim=then_claim,
        )  # fmt: skip

    def cancel_run(self, run_id: str, *, now_ms: int) -> bool:
        return self._runs.cancel_run(run_id, now_ms=now_ms)

    def release_leases(self, *, tokens: Sequence[str], now_ms: int) -> int:
        return self._runs.release_leases(tokens=tokens, now_ms=now_ms)

    def next_due_ms(
        self, *, pools: Sequence[str], workflows: Sequence[str], suspects: bool = True
    ) -> int | None:
        return self._runs.next_due_ms(pools=pools, workflows=workflows, suspects=suspects)

    # -- schedules -------------------------------------------------------------------------

    def upsert_schedule(
        self, record: ScheduleRecord, *, now_ms: int, on_conflict: str, paused: bool | None
    ) -> Registration:
        return self._schedules.upsert_schedule(
            record, now_ms=now_ms, on_conflict=on_conflict, paused=paused
        )

    def upsert_schedules(
        self, records: Sequence[tuple[ScheduleRecord, str, bool | None]], *, now_ms: int
    ) -> list[Registration]:
        return self._schedules.upsert_schedules(records, now_ms=now_ms)

    def get_schedule(self, key: str) -> ScheduleInfo | None:
        return self._schedules.get_schedule(key)

    def list_schedules(
        self, *, workflow: str | None = None, state: str | None = None, limit: int | None = None
    ) -> list[ScheduleInfo]:
        return self._schedules.list_schedules(workflow=workflow, state=state, limit=limit)

    def schedule_keys(self, limit: int) -> list[str]:
        return self._schedules.schedule_keys(limit)

    def get_schedule_record(self, key: str) -> DueSchedule | None:
        return self._schedules.get_schedule_record(key)

    def delete_schedule(self, key: str) -> bool:
        return self._schedules.delete_schedule(key)

    def set_schedule_state(
        self, key: str, *, action: ScheduleAction, now_ms: int, note: str | None = None
    ) -> bool:
        changed = self.change_schedule_state(key, action=action, now_ms=now_ms, note=note)
        return changed is not None

    def change_schedule_state(
        self,
        key: str,
        *,
        action: ScheduleAction,
        now_ms: int,
        note: str | None = None,
        calendars: Mapping[str, BusinessDays] | None = None,
    ) -> bool | None:
        return self._schedules.change_schedule_state(
            key, action=action, now_ms=now_ms, note=note, calendars=calendars
        )

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
        return self.firing.fire_due(
            now_ms=now_ms,
            pools=pools,
            workflows=workflows,
            limit=limit,
            decide=decide,
            ahead_ms=ahead_ms,
        )

    def trigger_schedule(
        self, key: str, *, now_ms: int, occurrence_ms: int, run: NewRun, reason: str
    ) -> Triggered | None:
        return self.firing.trigger_schedule(
            key, now_ms=now_ms, occurrence_ms=occurrence_ms, run=run, reason=reason
        )

    def backfill_schedule(
        self, key: str, *, occurrences: Sequence[int], now_ms: int, decide: BackfillDecide
    ) -> list[str] | None:
        return self.firing.backfill_schedule(
            key, occurrences=occurrences, now_ms=now_ms, decide=decide
        )

    def schedule_history(self, key: str, *, limit: int = 100) -> list[HistoryEntry]:
        return self._schedules.schedule_history(key, limit=limit)

    def next_schedule_due_ms(
        self, *, pools: Sequence[str], workflows: Sequence[str], ahead_ms: int = 0
    ) -> int | None:
        return self.firing.next_schedule_due_ms(pools=pools, workflows=workflows, ahead_ms=ahead_ms)

    def next_firing_due_ms(
        self, *, pools: Sequence[str], workflows: Sequence[str], ahead_ms: int = 0
    ) -> int | None:
        return self.firing.next_firing_due_ms(pools=pools, workflows=workflows, ahead_ms=ahead_ms)

    # -- deadlines ---------------------------------------------------------------------------

    def record_missed_deadlines(self, *, now_ms: int, limit: int) -> list[DeadlineMissed]:
        return self._deadlines.record_missed_deadlines(now_ms=now_ms, limit=limit)

    def next_deadline_ms(self) -> int | None:
        return self._deadlines.next_deadline_ms()

    def recent_deadline_misses(self, *, since_ms: int, limit: int) -> list[HistoryEntry]:
        return self._deadlines.recent_deadline_misses(since_ms=since_ms, limit=limit)

    # -- API keys --------------------------------------------------------------------------

    def create_api_key(self, *, key_id: str, name: str, secret_hash: str, now_ms: int) -> bool:
        return self._keys.create_api_key(
            key_id=key_id, name=name, secret_hash=secret_hash, now_ms=now_ms
        )

    def api_key_hash(self, key_id: str) -> str | None:
        return self._keys.api_key_hash(key_id)

    def list_api_keys(self) -> list[ApiKeyInfo]:
        return self._keys.list_api_keys()

    def revoke_api_key(self, name_or_id: str, *, now_ms: int) -> bool:
        return self._keys.revoke_api_key(name_or_id, now_ms=now_ms)

    def put_calendar(self, calendar: CalendarInfo, *, now_ms: int) -> None:
        self._calendars.put_calendar(calendar, now_ms=now_ms)

    def get_calendar(self, name: str) -> CalendarInfo | None:
        return self._calendars.get_calendar(name)

    def list_calendars(self) -> list[CalendarInfo]:
        return self._calendars.list_calendars()

    def delete_calendar(self, name: str) -> bool:
        return self._calendars.delete_calendar(name)

    def calendar_stamps(self) -> dict[str, int]:
        return self._calendars.calendar_stamps()

    def store_calendar_year(self, name: str, year: int, holidays: Sequence[Holiday]) -> None:
        self._calendars.store_calendar_year(name, year, holidays)

    def calendar_year(self, name: str, year: int) -> tuple[Holiday, ...] | None:
        return self._calendars.calendar_year(name, year)

    # -- workers ---------------------------------------------------------------------------

    def renew_worker(self, worker: WorkerRecord, *, now_ms: int) -> None:
        self._workers.renew_worker(worker, now_ms=now_ms)

    def stop_worker(self, worker_id: str, *, now_ms: int) -> bool:
        return self._workers.stop_worker(worker_id, now_ms=now_ms)

    def list_workers(self, *, now_ms: int) -> list[WorkerInfo]:
        return self._workers.list_workers(now_ms=now_ms)

    # -- retention -------------------------------------------------------------------------

    def prune_batch(self, *, cutoffs: Cutoffs, budget: int, position: PrunePosition) -> PruneBatch:
        return self._prune.prune_batch(cutoffs=cutoffs, budget=budget, position=position)

    def storage_stats(self, *, cutoffs: Cutoffs) -> StorageStats:
        return self._storage.storage_stats(cutoffs=cutoffs)

    # -- events ----------------------------------------------------------------------------

    def emit_event(self, event: NewEvent, *, then_claim: ClaimRequest | None = None) -> Emitted:
        return self._events.emit(event, then_claim=then_claim)

    def wait_run(self, wait: NewWait, *, then_claim: ClaimRequest | None) -> Ended:
        return self._events.wait_run(wait, then_claim=then_claim)

    def flush_due(self, *, now_ms: int, limit: int) -> list[str]:
        return self._events.flush_due(now_ms=now_ms, limit=limit)

    def next_flush_ms(self) -> int | None:
        return self._events.next_flush_ms()

    def upsert_subscriptions(self, records: Sequence[SubscriptionRecord]) -> None:
        self._events.upsert_subscriptions(records)

    def delete_subscription(self, key: str) -> bool:
        return self._events.delete_subscription(key)

    def list_subscriptions(self) -> list[SubscriptionRecord]:
        return self._events.list_subscriptions()

    def get_event(self, event_id: str) -> StoredEvent | None:
        return self._events.get_event(event_id)

    def list_events(self, *, name: str | None, limit: int) -> list[StoredEvent]:
        return self._events.list_events(name=name, limit=limit)

    def emit_counts(self) -> dict[str, int]:
        return self._events.emit_counts()

    def subscription_history(self, key: str, *, limit: int) -> list[SubscriptionDecision]:
        return self._events.subscription_history(key, limit=limit)

    def prune_events(self, *, before_ms: int, limit: int) -> int:
        return self._events.prune_events(before_ms=before_ms, limit=limit)

    # -- aggregates ------------------------------------------------------------------------

    def read_stats(self, *, now_ms: int) -> Stats:
        """The fleet's counters, histograms and gauges; see ``StatsSource``."""
        return self._stats.read_stats(now_ms=now_ms)
