"""The worker loop: fire due schedules, claim runnable runs, keep their leases, drain.

The loop never polls blindly: it sleeps until the earliest moment something becomes due
(asked of the store by index) or until woken by a change made in this process, and at
most ``poll_interval`` so that changes made by other processes are seen promptly.
"""

from __future__ import annotations

import logging
import queue
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from . import _clock
from ._context import Context
from ._executor import Outcome, execute
from ._models import RunInfo, RunStatus
from ._registry import Registry
from ._store import ClaimedRun, ClaimRequest, Store
from .errors import StoreError

__all__ = ["Core", "Hooks", "LeaseKeeper", "Worker"]

log = logging.getLogger("tickwork")

Hook = Callable[[RunInfo], Any]
ErrorHook = Callable[[BaseException, dict[str, Any]], Any]


@dataclass
class Hooks:
    """Callbacks for run events; their own errors go to ``on_error``, never further."""

    on_error: ErrorHook | None = None
    started: list[Hook] = field(default_factory=list)
    completed: list[Hook] = field(default_factory=list)
    failed: list[Hook] = field(default_factory=list)

    def report(self, error: BaseException, info: dict[str, Any]) -> None:
        """Hand an error to ``on_error``, or log it when there is no hook (never drop it)."""
        if self.on_error is not None:
            try:
                self.on_error(error, info)
                return
            except Exception:
                log.exception("tickwork: the on_error hook itself failed")
        log.error("tickwork: %s", info.get("where", "error"), exc_info=error, extra=info)

    def fire(self, hooks: list[Hook], run: RunInfo) -> None:
        for hook in hooks:
            try:
                hook(run)
            except Exception as exc:
                self.report(
                    exc, {"where": f"hook {getattr(hook, '__name__', hook)}", "run_id": run.id}
                )


@dataclass
class Core:
    """What the loop, the executor threads and ``Engine`` share."""

    store: Store
    registry: Registry
    clock: _clock.Clock
    pools: tuple[str, ...]
    lease_ms: int
    hooks: Hooks
    worker_id: str
    wake: threading.Event = field(default_factory=threading.Event)
    #: set when this process changed a schedule, so the loop fires without waiting
    schedules_changed: threading.Event = field(default_factory=threading.Event)
    finished: threading.Condition = field(default_factory=threading.Condition)
    #: the worker running in this process, if any: ``Engine.start`` may hand it the run
    worker: Worker | None = None

    def now_ms(self) -> int:
        return _clock.now_ms(self.clock)

    def limits(self) -> dict[str, int | None]:
        """Concurrency limit of each workflow this process can execute, by name."""
        return {d.name: d.concurrency for d in self.registry}

    def claim(self, limit: int) -> list[ClaimedRun]:
        return self.store.claim_runs(
            now_ms=self.now_ms(),
            lease_ms=self.lease_ms,
            worker=self.worker_id,
            pools=self.pools,
            limits=self.limits(),
            limit=limit,
        )

    def claim_request(self, now_ms: int) -> ClaimRequest:
        """One more run for an executor thread, claimed as its current run ends."""
        return ClaimRequest(now_ms, self.lease_ms, self.worker_id, self.pools, self.limits())

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
        if not claim.resumed:
            self.hooks.fire(self.hooks.started, claim.info)
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
            )
        finally:
            keeper.drop(claim.info.id)
        for following in outcome.claimed:
            keeper.hold(following.info.id, following.lease_token)
        run = outcome.run
        if run is not None and outcome.finished:
            with self.finished:
                self.finished.notify_all()
            if run.status is RunStatus.COMPLETED:
                self.hooks.fire(self.hooks.completed, run)
            elif run.status is RunStatus.FAILED:
                self.hooks.fire(self.hooks.failed, run)
        return outcome


def _settled(outcome: Outcome) -> bool:
    """Whether a run's ending left the loop nothing new to do: it finished, its ending
    transaction found no other run to take, and it freed no schedule's buffered run."""
    run = outcome.run
    return outcome.looked and outcome.finished and run is not None and run.schedule_key is None


class LeaseKeeper:
    """Renews the leases of runs being executed, every third of the lease, on a thread."""

    def __init__(self, core: Core) -> None:
        self._core = core
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
        interval = self._core.lease_ms / 3000
        outage = False
        while not _clock.wait(self._stop, interval):
            with self._lock:
                held = dict(self._held)
            if not held:
                continue
            try:
                alive = self._core.store.renew_leases(
                    tokens={run_id: token for run_id, (token, _) in held.items()},
                    now_ms=self._core.now_ms(),
                    lease_ms=self._core.lease_ms,
                )
            except StoreError as exc:
                # Like the loop: an outage is reported once, not at every renewal.
                if not outage:
                    outage = True
                    self._core.hooks.report(exc, {"where": "renewing leases", "outage": True})
                continue
            except Exception as exc:
                self._core.hooks.report(exc, {"where": "renewing leases"})
                continue
            outage = False
            for run_id, cancel in alive.items():
                ctx = held[run_id][1]
                if cancel and ctx is not None:
                    ctx.request_cancel()


class Worker:
    """Fires schedules and executes runs on ``threads`` threads until stopped."""

    def __init__(
        self,
        core: Core,
        *,
        threads: int = 8,
        poll_interval: float = 1.0,
        drain_timeout: float = 30.0,
        tick: Callable[[], object] = lambda: None,
        next_tick_ms: Callable[[], int | None] = lambda: None,
    ) -> None:
        self._core = core
        self._threads = threads
        self._poll_ms = max(1, round(poll_interval * 1000))
        self._tick_at = 0  # when the next scheduler pass is due (clock ms)
        self._outage = False
        self._drain_timeout = drain_timeout
        self._tick = tick
        self._next_tick_ms = next_tick_ms
        self._stopping = threading.Event()
        self._queue: queue.Queue[ClaimedRun | None] = queue.Queue()
        self._in_flight = 0
        self._idle = threading.Condition()
        self._keeper = LeaseKeeper(core)

    def stop(self) -> None:
        """Stop claiming; ``run`` then drains in-flight runs and returns."""
        self._stopping.set()
        self._core.wake.set()

    def reserve(self, now_ms: int) -> ClaimRequest | None:
        """Keep an idle executor thread for a run claimed elsewhere in this process (by
        ``Engine.start``, in the transaction that inserts a run); None if all are busy.

        Every reservation is ended by ``hand_over``.
        """
        with self._idle:
            if self._in_flight >= self._threads or self._stopping.is_set():
                return None
            self._in_flight += 1
        return self._core.claim_request(now_ms)

    def hand_over(self, claims: Sequence[ClaimedRun]) -> None:
        """Give the reserved executor thread its run, or give the reservation back."""
        if claims:
            self._keeper.hold(claims[0].info.id, claims[0].lease_token)
            self._queue.put(claims[0])
            return
        with self._idle:
            self._in_flight -= 1
            self._idle.notify_all()

    @property
    def stopping(self) -> bool:
        return self._stopping.is_set()

    def run(self) -> None:
        """The loop, in the calling thread, until ``stop``; then drain and release."""
        pool = [
            threading.Thread(target=self._execute_forever, name=f"tickwork-run-{i}", daemon=True)
            for i in range(self._threads)
        ]
        for thread in pool:
            thread.start()
        self._core.worker = self
        self._start_listening()
        log.info(
            "tickwork: worker %s started (pools %s)",
            self._core.worker_id,
            ", ".join(self._core.pools),
        )
        try:
            while not self._stopping.is_set():
                self._core.wake.clear()
                timeout = self._pass()
                if timeout > 0:
                    _clock.wait(self._core.wake, timeout)
        finally:
            if self._core.worker is self:
                self._core.worker = None
            self._drain(pool)

    def _pass(self) -> float:
        """One pass: fire due schedules, claim into free slots; return how long to sleep."""
        core = self._core
        try:
            now = core.now_ms()
            if now >= self._tick_at or core.schedules_changed.is_set():
                core.schedules_changed.clear()
                self._tick()
                upcoming = self._next_tick_ms()
                now = core.now_ms()
                # Look again at least every poll interval: other processes change schedules.
                self._tick_at = now + self._poll_ms
                if upcoming is not None:
                    self._tick_at = min(self._tick_at, upcoming)
                self._recovered()
            with self._idle:
                free = self._threads - self._in_flight
            if free == 0 or self._stopping.is_set():
                return self._until(self._tick_at, now)  # a run that ends wakes us
            claimed = core.claim(free)
            with self._idle:
                self._in_flight += len(claimed)
            for claim in claimed:
                # Held from now on: released at shutdown even if not started yet.
                self._keeper.hold(claim.info.id, claim.lease_token)
                self._queue.put(claim)
            self._recovered()
            if len(claimed) == free:
                return 0.0  # there may be more right now
            due = core.store.next_due_ms(pools=core.pools, workflows=core.registry.names())
            return self._until(self._tick_at if due is None else min(due, self._tick_at), now)
        except StoreError as exc:
            # Report an outage once, not once per attempt; the loop keeps trying.
            if not self._outage:
                self._outage = True
                core.hooks.report(exc, {"where": "worker loop", "outage": True})
            return self._poll_ms / 1000
        except Exception as exc:
            core.hooks.report(exc, {"where": "worker loop"})
            return self._poll_ms / 1000

    def _recovered(self) -> None:
        if self._outage:
            self._outage = False
            log.warning("tickwork: the database is reachable again")

    def _start_listening(self) -> None:
        """Wake on other processes' changes at once where the store can tell (PostgreSQL
        LISTEN/NOTIFY); the poll interval stays as the fallback for lost notifications."""
        listen = getattr(self._core.store, "listen", None)
        if not callable(listen):
            return
        core = self._core

        def on_notify(payload: str) -> None:
            if payload != "runs":
                core.schedules_changed.set()
            core.wake.set()

        threading.Thread(
            target=listen, args=(on_notify, self._stopping), name="tickwork-listen", daemon=True
        ).start()

    def _until(self, due_ms: int, now_ms: int) -> float:
        """Seconds to sleep until ``due_ms``, at most the poll interval."""
        return min(self._poll_ms, max(0, due_ms - now_ms)) / 1000

    def _execute_forever(self) -> None:
        while True:
            claim = self._queue.get()
            if claim is None:
                return
            # Each run's ending transaction claims this thread's next run, while there is
            # one and the worker is not stopping: no round trip through the loop. A run so
            # claimed is in this thread's hands: a drain lets it finish, like the others.
            settled = False
            while claim is not None:
                try:
                    outcome = self._core.run_claimed(claim, self._keeper, self._next_claim)
                except Exception as exc:
                    self._core.hooks.report(
                        exc, {"where": "executing run", "run_id": claim.info.id}
                    )
                    claim, settled = None, False
                else:
                    claim = outcome.claimed[0] if outcome.claimed else None
                    settled = _settled(outcome)
            with self._idle:
                self._in_flight -= 1
                self._idle.notify_all()
            if not settled:
                self._core.wake.set()  # the loop may have work for the free thread

    def _next_claim(self, now_ms: int) -> ClaimRequest | None:
        return None if self._stopping.is_set() else self._core.claim_request(now_ms)

    def _drain(self, pool: list[threading.Thread]) -> None:
        # Runs claimed but not started yet go back at once; the others may finish.
        while True:
            try:
                claim = self._queue.get_nowait()
            except queue.Empty:
                break
            if claim is not None:
                with self._idle:
                    self._in_flight -= 1
        deadline = _clock.monotonic() + self._drain_timeout
        with self._idle:
            while self._in_flight and _clock.monotonic() < deadline:
                self._idle.wait(max(0.0, deadline - _clock.monotonic()))
            unfinished = self._in_flight
        tokens = self._keeper.tokens()
        if tokens:
            try:
                self._core.store.release_leases(tokens=tokens, now_ms=self._core.now_ms())
            except Exception as exc:
                self._core.hooks.report(exc, {"where": "releasing leases"})
        self._keeper.stop()
        for _ in pool:
            self._queue.put(None)
        log.info(
            "tickwork: worker %s stopped (%d run(s) left to other workers)",
            self._core.worker_id,
            unfinished,
        )
