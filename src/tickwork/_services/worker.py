"""The worker loop: fire due schedules, claim runnable runs, keep their leases, drain.

The loop never polls blindly: it sleeps until the earliest moment something becomes due
(asked of the store by index) or until woken by a change made in this process, and at
most ``poll_interval`` so that changes made by other processes are seen promptly.
``run_until_idle`` is the same work in the calling thread, for tests and scripts;
``run_until_signalled`` runs a worker until SIGINT/SIGTERM. Beside the loop, a worker runs
its ``Housekeeping`` (pruning, ``_pruning``) on a thread of its own, stopped with it, and
its ``Heartbeat`` (``_heartbeat``): its record in the store, renewed until it stops.
"""

from __future__ import annotations

import contextlib
import gc
import logging
import os
import queue
import signal
import threading
from collections.abc import Callable, Iterator, Sequence
from typing import Protocol

from .._runtime.core import LeaseKeeper, Runtime
from .._runtime.executor import Outcome
from .._runtime.hooks import Outage
from .._store import ClaimedRun, ClaimRequest, Listening
from .._values import clock as _clock
from .._values.durations import Duration, to_ms
from ..errors import ConfigError, StoreError
from .heartbeat import Heartbeat, renew_interval_ms

__all__ = ["Firing", "Housekeeping", "Worker", "run_until_idle", "run_until_signalled"]

log = logging.getLogger("tickwork")

#: seconds ``in_background`` waits for the worker to record itself before going on
_START_WAIT_S = 10.0


class Firing(Protocol):
    """The firing side as the loop drives it (``_firing.Firing``)."""

    def tick(self) -> list[str]:
        """Fire everything due now; the ids of the runs started."""
        ...

    def next_due_ms(self) -> int | None:
        """When the firing side next has something to do, or None."""
        ...


class Housekeeping(Protocol):
    """Work a worker runs in the background beside its loop (the ``Pruner``)."""

    def start(self, stop: threading.Event, poll_s: float) -> threading.Thread:
        """Run until ``stop`` is set, looking at the clock at least every ``poll_s``."""
        ...

    def join(self, thread: threading.Thread) -> None:
        """Wait for the thread ``start`` returned, once ``stop`` was set."""
        ...


def _left_nothing_to_do(outcome: Outcome) -> bool:
    """Whether a run's ending left the loop nothing new to do: it finished, its ending
    transaction looked for another run and found none, and it freed no schedule's
    buffered run."""
    run = outcome.run
    return (
        outcome.next_claim_asked
        and outcome.finished
        and run is not None
        and run.schedule_key is None
    )


def run_until_idle(runtime: Runtime) -> int:
    """Execute, in this thread, every run runnable now until none is; how many attempts."""
    keeper = LeaseKeeper(runtime)
    executed = 0

    def next_claim(now_ms: int) -> ClaimRequest:
        return runtime.claim_request(now_ms, idle=True)  # one run at a time: always alone

    try:
        claims = runtime.claim(1, idle=True)
        while claims:
            # Each run's ending claims the next one in the same transaction.
            outcome = runtime.run_claimed(claims[0], keeper, next_claim)
            executed += 1
            claims = list(outcome.claimed) or (
                [] if outcome.next_claim_asked else runtime.claim(1, idle=True)
            )
    finally:
        keeper.stop()
    return executed


class Worker:
    """Fires schedules and executes runs on ``threads`` threads until stopped."""

    def __init__(
        self,
        runtime: Runtime,
        firing: Firing,
        *,
        threads: int = 8,
        poll_interval: Duration = "1s",
        drain_timeout: Duration = "30s",
        housekeeping: Housekeeping | None = None,
        heartbeat: Duration | None = None,
        held_back: Callable[[], tuple[tuple[str, str], ...]] = tuple,
    ) -> None:
        if isinstance(threads, bool) or not isinstance(threads, int) or threads < 1:
            raise ConfigError(f"threads must be an int >= 1, not {threads!r}")
        self._runtime = runtime
        self._firing = firing
        self._threads = threads
        self._poll_ms = to_ms(poll_interval, "poll_interval")
        self._tick_at = 0  # when the next scheduler pass is due (clock ms)
        self._runs_due: int | None = 0  # when a run is next due, as last read (clock ms)
        self._outage = Outage(runtime.hooks, "worker loop")
        self._drain_timeout = to_ms(drain_timeout, "drain_timeout") / 1000
        self._stopping = threading.Event()
        self._queue: queue.Queue[ClaimedRun | None] = queue.Queue()
        self._in_flight = 0
        self._alone = 0  # runs in flight that must run alone: no claim meanwhile
        self._idle = threading.Condition()
        self._keeper = LeaseKeeper(runtime)
        self._housekeeping = housekeeping
        # Renewal interval: given, else $TICKWORK_WORKER_HEARTBEAT, else 5 s.
        renew_ms = renew_interval_ms() if heartbeat is None else to_ms(heartbeat, "heartbeat")
        # Its record says which declared schedules it holds back for a missing calendar.
        self._heartbeat = Heartbeat(runtime, renew_ms, held_back)
        self._started = threading.Event()  # set once the worker has recorded itself

    def stop(self) -> None:
        """Stop claiming; ``run`` then drains in-flight runs and returns."""
        self._stopping.set()
        self._runtime.wake.set()

    def reserve(self, now_ms: int) -> ClaimRequest | None:
        """Keep an idle executor thread for a run claimed elsewhere in this process (by
        ``Engine.start``, in the transaction that inserts a run); None if all are busy.

        Every reservation is ended by ``hand_over``.
        """
        with self._idle:
            if self._in_flight >= self._threads or self._alone or self._stopping.is_set():
                return None
            self._in_flight += 1
        return self._runtime.claim_request(now_ms)

    def hand_over(self, claims: Sequence[ClaimedRun]) -> None:
        """Give the reserved executor thread its run, or give the reservation back."""
        if claims:
            self._count_alone(claims)
            self._keeper.hold(claims[0].info.id, claims[0].lease_token)
            self._queue.put(claims[0])
            return
        with self._idle:
            self._in_flight -= 1
            self._idle.notify_all()

    @property
    def stopping(self) -> bool:
        return self._stopping.is_set()

    @contextlib.contextmanager
    def in_background(self) -> Iterator[Worker]:
        """The loop on a daemon thread for the duration of a ``with`` block; stopped and
        drained at its end."""
        thread = threading.Thread(target=self.run, name="tickwork-worker", daemon=True)
        thread.start()
        # Back to the caller once the worker has recorded itself (list_workers shows it).
        self._started.wait(_START_WAIT_S)
        try:
            yield self
        finally:
            self.stop()
            thread.join()

    @property
    def started(self) -> bool:
        """Whether the loop has recorded the worker (it is then under way)."""
        return self._started.is_set()

    def run(self) -> None:
        """The loop, in the calling thread, until ``stop``; then drain and release."""
        pool = [
            threading.Thread(target=self._execute_forever, name=f"tickwork-run-{i}", daemon=True)
            for i in range(self._threads)
        ]
        for thread in pool:
            thread.start()
        self._runtime.hand_over.attach(self)
        self._start_listening()
        housekeeping, background = self._housekeeping, None
        if housekeeping is not None:  # pruning, on a thread of its own
            background = housekeeping.start(self._stopping, self._poll_ms / 1000)
        self._heartbeat.start(self._poll_ms / 1000)
        self._started.set()
        log.info(
            "worker %s started (pools %s)",
            self._runtime.worker_id,
            ", ".join(self._runtime.pools),
        )
        try:
            woken = True
            while not self._stopping.is_set():
                self._runtime.wake.clear()
                timeout = self._pass(polled=not woken)
                woken = timeout <= 0 or _clock.wait(self._runtime.wake, timeout)
        finally:
            self._runtime.hand_over.detach(self)
            self._drain(pool)
            if housekeeping is not None and background is not None:
                housekeeping.join(background)
            self._heartbeat.stop()  # after the drain: a draining worker is alive

    def _pass(self, *, polled: bool = False) -> float:
        """One pass: fire due schedules, claim into free slots; return how long to sleep.

        ``polled``: nothing woke the loop, its sleep ran out (a look for other processes'
        changes, or a due time reached)."""
        runtime = self._runtime
        try:
            now = runtime.now_ms()
            fired = False
            if now >= self._tick_at or runtime.schedules_changed.is_set():
                runtime.schedules_changed.clear()
                # When is the firing side due (schedules, deadlines, buffers)? Only a due
                # one needs the pass: an idle look is that one read alone.
                upcoming = self._firing.next_due_ms()
                if upcoming is not None and upcoming <= now:
                    fired = bool(self._firing.tick())
                    upcoming = self._firing.next_due_ms()
                now = runtime.now_ms()
                # Look again at least every poll interval: other processes change schedules.
                self._tick_at = now + self._poll_ms
                if upcoming is not None:
                    self._tick_at = min(self._tick_at, upcoming)
                self._outage.succeeded()
            with self._idle:
                # A run that must run alone (it lost its worker) holds every thread.
                free = 0 if self._alone else self._threads - self._in_flight
                idle = self._in_flight == 0
            if free == 0 or self._stopping.is_set():
                return self._until(self._tick_at, now)  # a run that ends wakes us
            if polled and not fired and (self._runs_due is None or self._runs_due > now):
                # A look with no run known to be due: read when one is (a read, which
                # writes nothing) and claim only if one is, so an idle worker's look is
                # the firing side's read and this one, not a claim's write transaction.
                # Runs made due elsewhere since the last read, concurrency slots freed by
                # other processes included, are seen here: it reads the queue itself.
                self._runs_due = runtime.store.runs.next_due_ms(
                    pools=runtime.pools, workflows=runtime.registry.names(), suspects=idle
                )
                if self._runs_due is None or self._runs_due > now:
                    self._outage.succeeded()
                    return self._until(self._next_look(), now)
            # A claim that takes fewer than asked reads when the next run is due in its
            # own transaction (a suspect waits for an idle worker: a busy one does not
            # wait for it): an idle poll is this and the firing side's one read.
            claimed, due = runtime.claim_or_next_due(free, idle=idle)
            self._count_alone(claimed)
            with self._idle:
                self._in_flight += len(claimed)
            for claim in claimed:
                # Held from now on: released at shutdown if still held then.
                self._keeper.hold(claim.info.id, claim.lease_token)
                self._queue.put(claim)
            self._outage.succeeded()
            if len(claimed) == free:
                self._runs_due = now  # there may be more right now
                return 0.0
            if due is not None and due <= now:
                # Due runs this claim could not take: their workflow is at its
                # concurrency limit, or another worker holds them. Looking again at once
                # spun the loop (a core, ~25,000 claims a second); a run ending here
                # wakes it, a slot freed elsewhere is seen at the next look.
                due = None
            self._runs_due = due
            return self._until(self._next_look(), now)
        except StoreError as exc:
            self._outage.failed(exc)  # once, not once per attempt; the loop keeps trying
            return self._poll_ms / 1000
        except Exception as exc:
            runtime.hooks.report(exc, {"where": "worker loop"})
            return self._poll_ms / 1000

    def _count_alone(self, claims: Sequence[ClaimedRun]) -> None:
        """Count the claimed runs that must run alone (``ClaimedRun.alone``): while one
        is in flight, this worker claims nothing more."""
        alone = sum(1 for claim in claims if claim.alone)
        if alone:
            with self._idle:
                self._alone += alone

    def _start_listening(self) -> None:
        """Wake on other processes' changes at once where the store can tell (PostgreSQL
        LISTEN/NOTIFY); the poll interval stays as the fallback for lost notifications."""
        store = self._runtime.store
        if not isinstance(store, Listening):
            return
        runtime = self._runtime

        def on_notify(payload: str) -> None:
            if payload != "runs":
                runtime.schedules_changed.set()
            runtime.wake.set()

        threading.Thread(
            target=store.listen,
            args=(on_notify, self._stopping),
            name="tickwork-listen",
            daemon=True,
        ).start()

    def _next_look(self) -> int:
        """When the loop looks next: the next pass of the firing side, or a run due."""
        due = self._runs_due
        return self._tick_at if due is None else min(due, self._tick_at)

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
                alone = claim.alone
                try:
                    outcome = self._runtime.run_claimed(claim, self._keeper, self._next_claim)
                except Exception as exc:
                    self._runtime.hooks.report(
                        exc, {"where": "executing run", "run_id": claim.info.id}
                    )
                    claim, settled = None, False
                else:
                    claim = outcome.claimed[0] if outcome.claimed else None
                    settled = _left_nothing_to_do(outcome)
                    self._count_alone(outcome.claimed)
                if alone:
                    with self._idle:
                        self._alone -= 1
            with self._idle:
                self._in_flight -= 1
                self._idle.notify_all()
            if not settled:
                self._runtime.wake.set()  # the loop may have work for the free thread

    def _next_claim(self, now_ms: int) -> ClaimRequest | None:
        with self._idle:
            alone = self._alone
        if alone or self._stopping.is_set():
            return None
        return self._runtime.claim_request(now_ms)

    def _drain(self, pool: list[threading.Thread]) -> None:
        # Every run claimed for the threads is in flight, begun or still queued (a firing
        # pass claims what it starts for idle threads: a signal may land before a thread
        # takes one): all may finish until the deadline. Handing the queued ones back left
        # them "running" with no lease, which a fleet stopping at once (a deploy) kept so.
        deadline = _clock.monotonic() + self._drain_timeout
        with self._idle:
            while self._in_flight and _clock.monotonic() < deadline:
                self._idle.wait(max(0.0, deadline - _clock.monotonic()))
        # Past it, those no thread has begun go back unstarted (their leases released with
        # those still executing): a thread must not begin one whose lease is gone.
        while True:
            try:
                claim = self._queue.get_nowait()
            except queue.Empty:
                break
            if claim is not None:
                with self._idle:
                    self._in_flight -= 1
        left = self._release_leases()
        self._keeper.stop()
        for _ in pool:
            self._queue.put(None)
        log.info(
            "worker %s stopped (%d run(s) left to other workers)", self._runtime.worker_id, left
        )

    def _release_leases(self) -> int:
        """Expire the leases of the runs still held, so another worker takes them at once;
        how many were held."""
        tokens = self._keeper.tokens()
        if tokens:
            try:
                self._runtime.store.runs.release_leases(
                    tokens=tokens, now_ms=self._runtime.now_ms()
                )
            except Exception as exc:
                self._runtime.hooks.report(exc, {"where": "releasing leases"})
        return len(tokens)

    def abandon(self) -> None:
        """Give up the runs in flight without waiting for them (a second signal): release
        their leases and record the worker stopped, so other workers take the runs over
        now and ``list_workers`` says it is gone. Their steps may still be running: the
        process is expected to exit right after (their writes then find no lease)."""
        self._stopping.set()
        self._keeper.stop()
        left = self._release_leases()
        self._heartbeat.stop(join_s=1.0)
        log.warning(
            "worker %s stopped without draining (%d run(s) left to other workers)",
            self._runtime.worker_id,
            left,
        )


#: seconds a second signal waits for the abandoned runs' leases to be released
_ABANDON_S = 5.0
_STOP_SIGNALS = {signal.SIGINT, signal.SIGTERM}


def _freeze_what_lives_on(worker: Worker) -> bool:
    """Once the worker has started, leave the objects the process holds so far (modules,
    the app, the registry, the store: some 40,000 that live as long as it) out of the
    garbage collector's full passes (``gc.freeze``). Measured in a ``tickwork worker``
    firing 50 schedules every second: a full pass took 13-22 ms about every 30 s, on
    whichever thread allocated at that moment, most often the firing pass (its runs were
    committed that much later); with them frozen, none above 1 ms. Objects are still
    freed when nothing refers to them; only cycles among the frozen ones would stay. Only
    a process given over to the worker does this (``run_worker``): the heap of an
    application that embeds ``Engine.worker()`` is its own to tune. Returns whether it
    froze (not before the worker has started)."""
    if not worker.started:
        return False
    gc.freeze()
    return True


def run_until_signalled(worker: Worker) -> None:
    """Run ``worker`` until SIGINT/SIGTERM (outside the main thread, which alone receives
    signals: until stopped by other means).

    The loop runs on a thread; the signals are taken synchronously on this one.

    A signal handler runs on top of whatever the main thread was doing, so one that takes
    a lock (``Event.set`` does) can wait forever on a lock its own thread holds. Here the
    signals are blocked and collected with ``sigtimedwait`` instead; the handler installed
    for a signal delivered to some other thread only records it (a list append takes no
    lock). Threads started by the loop inherit the blocked mask. A second signal during
    the drain exits at once, once the abandoned runs' leases are released and the worker
    recorded stopped (``Worker.abandon``; given up on after ``_ABANDON_S`` seconds, when the
    database does not answer: the leases then expire as usual).
    """
    if threading.current_thread() is not threading.main_thread():
        worker.run()
        return
    received: list[int] = []
    handlers = {
        sig: signal.signal(sig, lambda signum, _f: received.append(signum)) for sig in _STOP_SIGNALS
    }
    mask = signal.pthread_sigmask(signal.SIG_BLOCK, _STOP_SIGNALS)
    try:
        loop = threading.Thread(target=worker.run, name="tickwork-loop")
        loop.start()
        frozen = False
        while loop.is_alive():
            signalled = signal.sigtimedwait(_STOP_SIGNALS, 0.25)
            frozen = frozen or _freeze_what_lives_on(worker)
            # Only the signals asked for: after SIGSTOP/SIGCONT the wait can return a
            # result that names no signal, which is not a request to stop.
            if signalled is not None and signalled.si_signo in _STOP_SIGNALS:
                received.append(signalled.si_signo)
            if received and worker.stopping and len(received) > 1:
                log.warning("second signal, exiting without draining")
                _abandon(worker)
                os._exit(1)
            if received and not worker.stopping:
                log.info("%s received, draining", signal.Signals(received[0]).name)
                worker.stop()
        loop.join()
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, mask)
        for sig, handler in handlers.items():
            signal.signal(sig, handler)


def _abandon(worker: Worker) -> None:
    """``worker.abandon()``, given at most ``_ABANDON_S`` seconds (on a thread: a database
    that does not answer must not keep a process asked twice to stop)."""
    thread = threading.Thread(target=worker.abandon, name="tickwork-abandon", daemon=True)
    thread.start()
    thread.join(_ABANDON_S)
