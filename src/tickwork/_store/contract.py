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

The store is composed of parts, each a Protocol beside its implementation and an
attribute of the store: ``store.runs`` (``run_contract.RunStore``), ``store.schedules``
(``schedule_contract``), ``store.firing`` (``firing_contract``), ``store.deadlines``
(``deadline_contract``), ``store.keys`` (``key_contract``), ``store.calendars``
(``calendar_contract``), ``store.workers`` (``worker_contract``), ``store.events``
(``event_contract``), ``store.children`` (``child_contract``), ``store.pruning``
(``prune_contract``) and ``store.storage`` (``storage_contract``). A new store method is
written twice: in its part's Protocol and in its implementation. The records of a claim
are in ``claim_records``.

The plain records it takes and gives (``NewRun``, ``StepRecord``, ``ScheduleRecord``,
``DueSchedule``) live in ``tickwork._values.records``, below the store, and are re-exported here.
Capabilities only some stores have are Protocols at the end (``Listening``,
``ExclusiveWrites``, ``ReferenceTime``, ``StatsSource``): ask with
``isinstance(store, Listening)``.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Protocol, runtime_checkable

from .._values.clock import Reading
from .._values.models import Stats
from .._values.records import DueSchedule, NewRun, ScheduleRecord, StepRecord, WorkerRecord
from .calendar_contract import CalendarStore
from .child_contract import ChildStore
from .claim_records import ClaimedRun, ClaimRequest, Ended, LeaseLost
from .deadline_contract import DeadlineStore
from .event_contract import EventStore
from .firing_contract import BackfillDecide, FireResult, FiringStore
from .key_contract import KeyStore
from .prune_contract import PruneStore
from .run_contract import RunStore
from .schedule_contract import Registration, ScheduleStore
from .storage_contract import StorageStore
from .worker_contract import WorkerStore

__all__ = [
    "BackfillDecide",
    "CalendarStore",
    "ClaimRequest",
    "ClaimedRun",
    "DeadlineStore",
    "DueSchedule",
    "Ended",
    "EventStore",
    "ExclusiveWrites",
    "FireResult",
    "FiringStore",
    "KeyStore",
    "LeaseLost",
    "Listening",
    "NewRun",
    "PruneStore",
    "ReferenceTime",
    "Registration",
    "RunStore",
    "ScheduleRecord",
    "ScheduleStore",
    "StatsSource",
    "StepRecord",
    "StorageStore",
    "Store",
    "WorkerRecord",
    "WorkerStore",
]


class Store(Protocol):
    """Durable state of runs, their checkpoints, schedules, events, calendars, workers and
    API keys: its parts (read-only, so that a backend's own part types fit), and the few
    things of the whole store."""

    @property
    def runs(self) -> RunStore: ...

    @property
    def schedules(self) -> ScheduleStore: ...

    @property
    def firing(self) -> FiringStore: ...

    @property
    def deadlines(self) -> DeadlineStore: ...

    @property
    def keys(self) -> KeyStore: ...

    @property
    def calendars(self) -> CalendarStore: ...

    @property
    def workers(self) -> WorkerStore: ...

    @property
    def events(self) -> EventStore: ...

    @property
    def children(self) -> ChildStore: ...

    @property
    def pruning(self) -> PruneStore: ...

    @property
    def storage(self) -> StorageStore: ...

    def migrate(self) -> int:
        """Apply pending schema migrations; return the schema version now in force.

        Safe to call from many processes at once: each migration is applied once.
        """
        ...

    def close(self) -> None:
        """Release connections. The store is unusable afterwards."""
        ...


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
