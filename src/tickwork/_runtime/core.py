"""The runtime one engine's parts share: store, registry, clock, hooks, wake-ups, leases.

``Engine`` builds one; the scheduling side (``Schedules``), the worker loop (``Worker``)
and ``run_until_idle`` all work through it. It sits below all of them, so none of them
needs another's internals: the worker drives scheduling through a small ``Firing``
interface, and ``Engine.start`` hands a run to an idle executor through ``HandOver``.

A ``Runtime`` is immutable: what changes while it lives (the worker whose executors take
runs, whether the schema was migrated) is kept by objects made for it (``HandOver``,
``_Migration``), each with its own lock, so no part swaps a field under another.
"""

from __future__ import annotations

import os
import socket
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Protocol, TypeVar

from .._rules.registry import Registry
from .._store import ClaimedRun, ClaimRequest, NewRun, ReferenceTime, StatsSource, Store, open_store
from .._store.event_records import Emitted, NewEvent
from .._values import clock as _clock
from .._values.checks import check_pool
from .._values.durations import Duration, to_ms
from .._values.ids import new_worker_id
from .._values.logs import log_child_started, log_emitted
from .._values.models import RunInfo, RunStatus, Stats
from ..errors import ConfigError, StoreError
from .context import Context
from .executor import Outcome, execute
from .hooks import ErrorHook, Hooks, Outage

__all__ = ["Executors", "HandOver", "LeaseKeeper", "Runtime"]

_Written = TypeVar("_Written")


class Executors(Protocol):
    """Executor threads that take a run claimed elsewhere in the process (the worker)."""

    def reserve(self, now_ms: int) -> ClaimRequest | None:
        """Keep an idle thread for a run claimed elsewhere; None if all are busy. Every
        reservation is ended by ``hand_over``."""
        ...

    def hand_over(self, claims: Sequence[ClaimedRun]) -> None:
        """Give the reserved thread its run, or give the reservation back."""
        ...


class HandOver:
    """Where a started run meets an idle executor thread of this process's worker: the
    worker attaches its executors while it runs (``Worker.run``), ``insert_run`` asks
    them for a thread. Without a worker attached, nothing is handed over."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._executors: Executors | None = None

    def attach(self, executors: Executors) -> None:
        with self._lock:
            self._executors = executors

    def detach(self, executors: Executors) -> None:
        """Detach ``executors``, if they are the ones attached (a later worker's stay)."""
        with self._lock:
            if self._executors is executors:
                self._executors = None

    def current(self) -> Executors | None:
        with self._lock:
            return self._executors


class _Migration:
    """Whether the schema was migrated by this process: once, on first use."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.done = False


@dataclass(frozen=True)
class Runtime:
    """What the worker loop, its executor threads, scheduling and ``Engine`` share.

    ``store`` migrates the schema on first use, so every path (a worker, a CLI command,
    a server request) finds the tables in place without a step of its own.
    """

    database: Store
    registry: Registry
    clock: _clock.Clock
    pools: tuple[str, ...]
    lease_ms: int
    hooks: Hooks
    worker_id: str
    #: set to make the worker loop look again now (a run or a schedule changed here)
    wake: threading.Event = field(default_factory=threading.Event)
    #: set when this process changed a schedule, so the loop fires without waiting
    schedules_changed: threading.Event = field(default_factory=threading.Event)
    #: notified whenever a run of this process ends (``RunHandle.result`` waits on it)
    finished: threading.Condition = field(default_factory=threading.Condition)
    #: the executors of the worker running in this process, if any: ``insert_run`` may
    #: hand them the run
    hand_over: HandOver = field(default_factory=HandOver)

    _migration: _Migration = field(default_factory=_Migration, init=False, repr=False)

    @classmethod
    def open(
        cls,
        url: str,
        *,
        clock: _clock.Clock | None,
        pools: Sequence[str] | None,
        lease: Duration,
        on_error: ErrorHook | None,
        registry: Registry,
    ) -> Runtime:
        """The runtime over the database at ``url``, its arguments checked."""
        if clock is not None and not isinstance(clock, _clock.Clock):
            raise ConfigError(f"clock must have a now() method, not {clock!r}")
        if isinstance(pools, str) or (pools is not None and not pools):
            raise ConfigError(f"pools must be a non-empty list of pool names, not {pools!r}")
        if on_error is not None and not callable(on_error):
            raise ConfigError(f"on_error must be callable, not {on_error!r}")
        lease_ms = to_ms(lease, "lease")
        checked_pools = tuple(check_pool(p) for p in (pools or ["default"]))
        store = open_store(url, lease_ms=lease_ms)
        if clock is None and isinstance(store, ReferenceTime):
            # A fleet agrees on the database's time, not on each machine's.
            clock = _clock.ReferenceClock(store.read_database_clock)
        clock = clock or _clock.SystemClock()
        runtime = cls(
            database=store,
            registry=registry,
            clock=clock,
            pools=checked_pools,
            lease_ms=lease_ms,
            hooks=Hooks(on_error=on_error),
            worker_id=f"{socket.gethostname()}:{os.getpid()}:{new_worker_id()[:6]}",
        )
        listen = getattr(clock, "add_listener", None)
        if callable(listen):
            listen(runtime.wake.set)  # a FakeClock moved: look again at what is due
        return runtime

    @property
    def store(self) -> Store:
        """The store, its schema migrated (once, on first use)."""
        if not self._migration.done:
            self.migrate()
        return self.database

    def migrate(self) -> int:
        """Apply pending schema migrations now; return the schema version."""
        with self._migration.lock:
            version = self.database.migrate()
            self._migration.done = True
        return version

    def close(self) -> None:
        """Release the database connections."""
        self.database.close()

    def now_ms(self) -> int:
        return _clock.now_ms(self.clock)

    def stats(self) -> Stats:
        """The store's counts and histograms, or none when it keeps no aggregates."""
        store = self.store
        if not isinstance(store, StatsSource):
            return Stats()
        return store.read_stats(now_ms=self.now_ms())

    def limits(self) -> Mapping[str, int | None]:
        """Concurrency limit of each workflow this process can execute, by name."""
        return self.registry.limits()

    def schedule_changed(self) -> None:
        """Tell this process's worker loop to fire now rather than at its next look."""
        self.schedules_changed.set()
        self.wake.set()

    def emitted(self, event_id: str, emitted: Emitted) -> None:
        """After an emit here (``engine.emit`` or a workflow's ``ctx.emit``): this
        process's worker looks for the runs it started or woke at once, rather than at
        its next poll (as ``insert_run`` does for a start), and each is logged; for a
        debounce or batch buffer it opened, its firing loop reads the next due time."""
        if emitted.new and (emitted.started or emitted.woke):
            taken = {claim.info.id for claim in emitted.claimed}
            if not taken.issuperset(emitted.started + emitted.woke):
                self.wake.set()
            log_emitted(emitted.name, event_id, emitted.started, emitted.woke)
        if emitted.buffered:  # the firing loop reads when the new buffer is due
            self.schedule_changed()

    def child_started(self, parent: RunInfo, child_id: str) -> None:
        """After a workflow's ``ctx.start`` here: this process's worker looks for the
        child at once (other processes are told by the store), and it is logged."""
        self.wake.set()
        log_child_started(parent, child_id)

    def run_ended(self) -> None:
        with self.finished:
            self.finished.notify_all()

    def await_end(self, seconds: float, _look: int) -> None:
        """Wait until some run of this process ends, or at most ``seconds`` (capped at
        0.1 s: runs end in other processes too). ``RunHandle.result``'s pause."""
        with self.finished:
            self.finished.wait(min(seconds, 0.1))

    def insert_run(self, run: NewRun) -> RunInfo:
        """Insert the run; an idle executor of this process's worker takes the most urgent
        runnable run in the same transaction, without waiting for the worker loop."""
        stored, _inserted, claimed = self._handing_over(
            run.created_ms, lambda request: self.store.runs.insert_run(run, then_claim=request),
            lambda inserted: inserted[2],
        )  # fmt: skip
        if (not claimed or claimed[0].info.id != run.id) and not self.wake.is_set():
            self.wake.set()  # the worker loop claims it (here or elsewhere)
        return stored

    def emit_event(self, event: NewEvent) -> Emitted:
        """Store the event (``store.events.emit``); an idle executor of this process's
        worker takes a run it started or woke in the same transaction, as ``insert_run``."""
        return self._handing_over(
            event.emitted_ms, lambda request: self.store.events.emit(event, then_claim=request),
            lambda emitted: emitted.claimed,
        )  # fmt: skip

    def _handing_over(
        self,
        now_ms: int,
        write: Callable[[ClaimRequest | None], _Written],
        claimed_of: Callable[[_Written], Sequence[ClaimedRun]],
    ) -> _Written:
        """``write`` with a claim for an idle executor thread of this process's worker,
        if one is free: the thread is given what the write claimed, or nothing."""
        executors = self.hand_over.current()
        request = None if executors is None else executors.reserve(now_ms)
        claimed: Sequence[ClaimedRun] = ()
        try:
            written = write(request)
            claimed = claimed_of(written)
        finally:
            if executors is not None and request is not None:
                executors.hand_over(claimed)
        return written

    def claim(self, limit: int, *, idle: bool = False) -> list[ClaimedRun]:
        """Up to ``limit`` runs; ``idle``: this process has no run in flight, so it may be
        given a suspect to run alone (``RunStore.claim_runs``)."""
        return self.store.runs.claim_runs(self.claim_request(self.now_ms(), limit=limit, idle=idle))

    def claim_or_next_due(self, limit: int, *, idle: bool) -> tuple[list[ClaimedRun], int | None]:
        """``claim``, and when it took fewer than ``limit``, when the next run is due (of
        this worker's, the suspects included if ``idle``), in the claim's transaction."""
        return self.store.runs.claim_or_next_due(
            self.claim_request(self.now_ms(), limit=limit, idle=idle)
        )

    def claim_request(self, now_ms: int, *, limit: int = 1, idle: bool = False) -> ClaimRequest:
        """This worker asking for ``limit`` runs: every claim's request (``claim``, and one
        more run for an executor thread, claimed as its current run ends)."""
        return ClaimRequest(
            now_ms, self.lease_ms, self.worker_id, self.pools, self.limits(), limit, idle
        )

    def run_claimed(
        self,
        claim: ClaimedRun,
        keeper: LeaseKeeper,
        next_claim: Callable[[int], ClaimRequest | None] = lambda _now_ms: None,
    ) -> Outcome:
        """Execute one claimed run, keeping its lease alive, then fire the run hooks.

        The outcome's ``claimed`` runs (see ``execute``'s ``next_claim``) are held from now.
        """
        definition = self.registry.get(claim.info.workflow)
        hooks = self.hooks
        if not claim.resumed and hooks.started:
            hooks.fire(hooks.started, claim.info)
        keeper.hold(claim.info.id, claim.lease_token)
        try:
            outcome = execute(
                claim,
                definition,
                store=self.store,
                clock=self.clock,
                lease_ms=self.lease_ms,
                on_context=lambda ctx: keeper.attach(claim.info.id, ctx),
                next_claim=next_claim,
                on_emitted=self.emitted,
                registry=self.registry,
                on_started=self.child_started,
            )
        finally:
            keeper.drop(claim.info.id)
        for following in outcome.claimed:
            keeper.hold(following.info.id, following.lease_token)
        run = outcome.run
        if run is not None and outcome.finished:
            self.run_ended()
            if run.status is RunStatus.COMPLETED:
                if hooks.completed:
                    hooks.fire(hooks.completed, run)
            elif run.status is RunStatus.FAILED and hooks.failed:
                hooks.fire(hooks.failed, run)
            if outcome.report is not None:  # e.g. a step that kept killing its worker
                self.hooks.report(
                    outcome.report,
                    {"where": "run failed", "run_id": run.id, "workflow": run.workflow},
                )
        return outcome


class LeaseKeeper:
    """Renews the leases of runs being executed, every third of the lease, on a thread."""

    def __init__(self, runtime: Runtime) -> None:
        self._runtime = runtime
        self._held: dict[str, tuple[str, Context | None]] = {}
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def hold(self, run_id: str, token: str) -> None:
        with self._lock:
            self._held[run_id] = (token, None)
            if self._thread is None:
                self._thread = threading.Thread(
                    target=self._loop, name="tickwork-leases", daemon=True
                )
                self._thread.start()

    def attach(self, run_id: str, ctx: Context | None) -> None:
        with self._lock:
            if run_id in self._held:
                self._held[run_id] = (self._held[run_id][0], ctx)

    def drop(self, run_id: str) -> None:
        with self._lock:
            self._held.pop(run_id, None)

    def tokens(self) -> list[str]:
        with self._lock:
            return [token for token, _ in self._held.values()]

    def stop(self) -> None:
        self._stop.set()

    def _loop(self) -> None:
        interval = self._runtime.lease_ms / 3000
        outage = Outage(self._runtime.hooks, "renewing leases")
        while not _clock.wait(self._stop, interval):
            with self._lock:
                held = dict(self._held)
            if not held:
                continue
            try:
                alive = self._runtime.store.runs.renew_leases(
                    tokens={run_id: token for run_id, (token, _) in held.items()},
                    now_ms=self._runtime.now_ms(),
                    lease_ms=self._runtime.lease_ms,
                )
            except StoreError as exc:
                outage.failed(exc)  # once, not at every renewal
                continue
            except Exception as exc:
                self._runtime.hooks.report(exc, {"where": "renewing leases"})
                continue
            outage.succeeded()
            for run_id, cancel in alive.items():
                ctx = held[run_id][1]
                if cancel and ctx is not None:
                    ctx.request_cancel()
