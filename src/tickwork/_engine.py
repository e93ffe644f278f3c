"""``Engine``: the public API for registering workflows, starting runs and running workers."""

from __future__ import annotations

import contextlib
import logging
import os
import signal
import socket
import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from datetime import datetime
from typing import Any, TypeVar, overload

from . import _clock
from ._apikeys import create_key, revoke_key, verify_key
from ._async_api import twin
from ._declared import (
    config_path,
    deployment_schedules,
    load_config,
    merge,
    workflow_schedules,
)
from ._durations import Duration, to_ms
from ._handle import RunHandle
from ._ids import canonical_json, new_run_id, new_worker_id
from ._models import ApiKeyInfo, HistoryEntry, RunInfo, RunStatus, ScheduleInfo, StepInfo
from ._registry import Registry, WorkflowDef, check_pool, check_priority, inspect_workflow
from ._retry import NO_RETRY, Retry
from ._scheduling import Schedules
from ._store import ClaimedRun, NewRun, Store, open_store
from ._worker import Core, Hook, Hooks, LeaseKeeper, Worker
from .errors import (
    ConfigError,
    UnknownWorkflowError,
)

__all__ = ["DEFAULT_URL", "Engine"]

log = logging.getLogger("tickwork")

DEFAULT_URL = "sqlite:///tickwork.db"
F = TypeVar("F", bound=Callable[..., Any])
_MAX_ID = 200


class Engine:
    """Workflows, runs and workers over one database (SQLite file or PostgreSQL)."""

    def __init__(
        self,
        url: str | None = None,
        *,
        clock: _clock.Clock | None = None,
        pools: Sequence[str] | None = None,
        lease: Duration = "30s",
        on_error: Callable[[BaseException, dict[str, Any]], Any] | None = None,
        schedules: Sequence[Mapping[str, Any]] | None = None,
        config: str | os.PathLike[str] | None = None,
    ) -> None:
        self.url = url or os.environ.get("TICKWORK_DATABASE_URL") or DEFAULT_URL
        if clock is not None and not isinstance(clock, _clock.Clock):
            raise ConfigError(f"clock must have a now() method, not {clock!r}")
        if isinstance(pools, str) or (pools is not None and not pools):
            raise ConfigError(f"pools must be a non-empty list of pool names, not {pools!r}")
        if on_error is not None and not callable(on_error):
            raise ConfigError(f"on_error must be callable, not {on_error!r}")
        store = open_store(self.url)
        reference = getattr(store, "database_now_ms", None)
        if clock is None and callable(reference):
            # A fleet agrees on the database's time, not on each machine's.
            clock = _clock.ReferenceClock(reference)
        self.clock = clock or _clock.SystemClock()
        self._deployment = deployment_schedules(schedules or [], "Engine(schedules=...)")
        self._config = config
        self._registry = Registry()
        self._core = Core(
            store=store,
            registry=self._registry,
            clock=self.clock,
            pools=tuple(check_pool(p) for p in (pools or ["default"])),
            lease_ms=to_ms(lease),
            hooks=Hooks(on_error=on_error),
            worker_id=f"{socket.gethostname()}:{os.getpid()}:{new_worker_id()[:6]}",
        )
        self._schedules = Schedules(self._core)
        self._migrated = False
        self._migrate_lock = threading.Lock()
        listen = getattr(self.clock, "add_listener", None)
        if callable(listen):
            listen(self._core.wake.set)  # a FakeClock moved: look again at what is due

    # -- registration --------------------------------------------------------------------

    @overload
    def workflow(self, name: F, /) -> F: ...

    @overload
    def workflow(
        self,
        name: str | None = None,
        *,
        version: str = "1",
        retry: Retry | None = None,
        concurrency: int | None = None,
        pool: str = "default",
        priority: int = 0,
        timeout: Duration | None = None,
        schedule: Any = None,
    ) -> Callable[[F], F]: ...

    def workflow(
        self,
        name: Any = None,
        *,
        version: str = "1",
        retry: Retry | None = None,
        concurrency: int | None = None,
        pool: str = "default",
        priority: int = 0,
        timeout: Duration | None = None,
        schedule: Any = None,
    ) -> Any:
        """Register a workflow: ``@engine.workflow`` or ``@engine.workflow("name", ...)``."""
        if callable(name):
            return self.workflow()(name)
        if name is not None and (not isinstance(name, str) or not name or len(name) > _MAX_ID):
            raise ConfigError(f"A workflow name must be a non-empty string, not {name!r}")
        if not isinstance(version, str) or not version:
            raise ConfigError(f"version must be a non-empty string, not {version!r}")
        if retry is not None and not isinstance(retry, Retry):
            raise ConfigError(f"retry must be a tickwork.Retry, not {retry!r}")
        if concurrency is not None and (
            isinstance(concurrency, bool) or not isinstance(concurrency, int) or concurrency < 1
        ):
            raise ConfigError(f"concurrency must be an int >= 1 or None, not {concurrency!r}")
        options = dict(
            version=version,
            retry=retry or NO_RETRY,
            concurrency=concurrency,
            pool=check_pool(pool),
            priority=check_priority(priority),
            timeout_ms=None if timeout is None else to_ms(timeout),
            schedule=schedule,
        )

        def register(fn: F) -> F:
            is_async, takes_input, adapter = inspect_workflow(fn)
            workflow_schedules(name or fn.__name__, schedule)  # refuse a bad one now
            definition = WorkflowDef(
                name=name or fn.__name__,
                fn=fn,
                is_async=is_async,
                takes_input=takes_input,
                adapter=adapter,
                **options,
            )
            self._registry.add(definition)
            fn.__tickwork_workflow__ = definition.name  # type: ignore[attr-defined]
            self._core.wake.set()
            return fn

        return register

    def workflows(self) -> list[str]:
        """Names of the workflows registered with this engine."""
        return self._registry.names()

    def on_run_started(self, hook: Hook) -> Hook:
        """Call ``hook(run_info)`` when a run first begins executing."""
        self._core.hooks.started.append(hook)
        return hook

    def on_run_completed(self, hook: Hook) -> Hook:
        """Call ``hook(run_info)`` when a run completes."""
        self._core.hooks.completed.append(hook)
        return hook

    def on_run_failed(self, hook: Hook) -> Hook:
        """Call ``hook(run_info)`` when a run fails for good (its retries spent)."""
        self._core.hooks.failed.append(hook)
        return hook

    # -- runs ----------------------------------------------------------------------------

    def start(
        self,
        workflow: str | Callable[..., Any],
        input: Any = None,
        *,
        run_id: str | None = None,
        priority: int | None = None,
        pool: str | None = None,
        delay: Duration | None = None,
    ) -> RunHandle:
        """Start a run now (or after ``delay``). Idempotent by ``run_id``: starting an id
        that exists returns a handle to the existing run and changes nothing.
        """
        definition = self._definition(workflow)
        value = definition.validate_input(input)
        if run_id is not None and (
            not isinstance(run_id, str) or not run_id or len(run_id) > _MAX_ID
        ):
            raise ConfigError(f"run_id must be a non-empty string of at most {_MAX_ID} chars")
        now = self._now_ms()
        run = NewRun(
            id=run_id or new_run_id(now),
            workflow=definition.name,
            version=definition.version,
            input_json=None if value is None else canonical_json(value),
            priority=definition.priority if priority is None else check_priority(priority),
            pool=definition.pool if pool is None else check_pool(pool),
            created_ms=now,
            available_ms=now + (0 if delay is None else to_ms(delay)),
        )
        stored = self._insert(run)
        return RunHandle(
            stored.id, get_run=self.get_run, cancel=self.cancel, pause=self._await_finish
        )

    def _insert(self, run: NewRun) -> RunInfo:
        """Insert the run; an idle executor of this process's worker takes the most urgent
        runnable run in the same transaction, without waiting for the worker loop."""
        worker = self._core.worker
        request = None if worker is None else worker.reserve(run.created_ms)
        claimed: Sequence[ClaimedRun] = ()
        try:
            stored, _inserted, claimed = self._store.insert_run(run, then_claim=request)
        finally:
            if worker is not None and request is not None:
                worker.hand_over(claimed)
        if not claimed or claimed[0].info.id != run.id:
            self._core.wake.set()  # the worker loop claims it (here or elsewhere)
        return stored

    def _await_finish(self, seconds: float, _look: int) -> None:
        """Wait until some run of this process ends, or at most ``seconds`` (capped at
        0.1 s: runs end in other processes too)."""
        with self._core.finished:
            self._core.finished.wait(min(seconds, 0.1))

    def get_run(self, run_id: str) -> RunInfo | None:
        """The run with this id, or None."""
        return self._store.get_run(run_id)

    def list_runs(
        self,
        *,
        workflow: str | None = None,
        status: RunStatus | str | None = None,
        schedule_key: str | None = None,
        limit: int = 100,
        before: str | None = None,
    ) -> list[RunInfo]:
        """Runs matching every filter given, newest first.

        ``before=<run id>`` gives the next page after a page that ended with that run
        (stable while new runs arrive); none if there is no such run.
        """
        if status is not None:
            try:
                status = RunStatus(status)
            except ValueError:
                raise ConfigError(
                    f"Unknown status {status!r}: expected one of {[s.value for s in RunStatus]}"
                ) from None
        if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= 10_000:
            raise ConfigError(f"limit must be an int from 1 to 10000, not {limit!r}")
        if before is not None and (not isinstance(before, str) or not before):
            raise ConfigError(f"before must be a run id, not {before!r}")
        return self._store.list_runs(
            workflow=workflow, status=status, schedule_key=schedule_key, limit=limit, before=before
        )

    def list_steps(self, run_id: str) -> list[StepInfo]:
        """The checkpoints a run has recorded, in order (steps, sleeps, ``now()``s)."""
        return self._store.list_steps(run_id)

    def cancel(self, run_id: str) -> bool:
        """Cancel a run: at once if pending or sleeping, at its next step if running.

        False when the run is unknown or already finished.
        """
        cancelled = self._store.cancel_run(run_id, now_ms=self._now_ms())
        if cancelled:
            with self._core.finished:
                self._core.finished.notify_all()
        return cancelled

    # -- schedules -----------------------------------------------------------------------

    def schedule(
        self,
        workflow: str | Callable[..., Any],
        input: Any = None,
        *,
        every: Duration | None = None,
        cron: str | None = None,
        timezone: str = "UTC",
        key: str | None = None,
        overlap: str = "allow",
        catchup: int | str = 1,
        catchup_window: Duration | None = None,
        jitter: Duration | None = None,
        paused: bool | None = None,
        pool: str | None = None,
        priority: int | None = None,
        retry: Retry | None = None,
        start_at: datetime | None = None,
        end_at: datetime | None = None,
        on_conflict: str = "update",
    ) -> str:
        """Register a schedule (cron or fixed interval) for ``workflow``; return its key.

        Everything is validated before anything is stored. Registering the same definition
        again changes nothing, so calling this at every start-up is the intended use.
        """
        name = self._definition(workflow).name
        self._ready()
        return self._schedules.register(
            name,
            input,
            every=every,
            cron_expr=cron,
            timezone=timezone,
            key=key,
            overlap=overlap,
            catchup=catchup,
            catchup_window=catchup_window,
            jitter=jitter,
            paused=paused,
            pool=pool,
            priority=priority,
            retry=retry,
            start_at=start_at,
            end_at=end_at,
            on_conflict=on_conflict,
        )

    def sync_schedules(self) -> list[str]:
        """Register every declared schedule; return their keys.

        Declared: ``@engine.workflow(schedule=...)``, then ``Engine(schedules=[...])``, then
        the config file's ``[[schedules]]`` (``Engine(config=...)``, ``$TICKWORK_CONFIG`` or
        ./tickwork.toml), later sources winning by key. Workers call it when they start.
        """
        declared = [call for d in self._registry for call in workflow_schedules(d.name, d.schedule)]
        path = config_path(self._config)
        from_file = load_config(path) if path is not None else []
        keys = []
        for call in merge(declared, self._deployment, from_file):
            options = dict(call)
            workflow = options.pop("workflow")
            keys.append(self.schedule(workflow, **options))
        return keys

    def unschedule(self, key: str) -> bool:
        """Remove a schedule for the whole fleet (its runs stay); False if unknown."""
        self._ready()
        return self._schedules.unschedule(key)

    def pause(self, key: str) -> bool:
        """Stop firing; occurrences meanwhile are missed, handled by catch-up on resume."""
        self._ready()
        return self._schedules.set_state(key, "pause")

    def resume(self, key: str) -> bool:
        """Fire again after a pause; missed occurrences are decided by ``catchup``."""
        self._ready()
        return self._schedules.set_state(key, "resume")

    def deactivate(self, key: str) -> bool:
        """Stop firing; occurrences while inactive never run."""
        self._ready()
        return self._schedules.set_state(key, "deactivate")

    def activate(self, key: str) -> bool:
        """Fire again, from the first occurrence after now."""
        self._ready()
        return self._schedules.set_state(key, "activate")

    def trigger(self, key: str) -> str | None:
        """Start the current occurrence now (idempotent); its run id, or None if unknown."""
        self._ready()
        return self._schedules.trigger(key)

    def get_schedule(self, key: str) -> ScheduleInfo | None:
        self._ready()
        return self._schedules.get(key)

    def list_schedules(self) -> list[ScheduleInfo]:
        self._ready()
        return self._schedules.list_all()

    def schedule_history(self, key: str, limit: int = 100) -> list[HistoryEntry]:
        """Every decision about the schedule's occurrences, newest first."""
        self._ready()
        return self._schedules.history(key, limit)

    # -- API keys ------------------------------------------------------------------------

    def create_api_key(self, name: str) -> str:
        """Create an API key for the HTTP API and dashboard; return it (shown only now)."""
        self._ready()
        return create_key(self._core.store, name, self._now_ms())

    def list_api_keys(self) -> list[ApiKeyInfo]:
        """Every API key, revoked ones included (never their secrets)."""
        self._ready()
        return self._core.store.list_api_keys()

    def revoke_api_key(self, name_or_id: str) -> bool:
        """Revoke the live key with this name or id; False when there is none."""
        self._ready()
        return revoke_key(self._core.store, name_or_id, self._now_ms())

    def verify_api_key(self, key: str) -> str | None:
        """The id of the live API key ``key`` is, or None (checked in constant time)."""
        self._ready()
        return verify_key(self._core.store, key)

    # -- executing -----------------------------------------------------------------------

    def tick(self) -> list[str]:
        """One scheduler pass at ``clock.now()``: fire every due occurrence; return the ids
        of the runs it started."""
        self._ready()
        return self._schedules.tick()

    def run_until_idle(self) -> int:
        """Execute, in this thread, every run runnable at ``clock.now()`` until none is.

        Returns how many run attempts were executed.
        """
        self._ready()
        keeper = LeaseKeeper(self._core)
        executed = 0
        try:
            claims = self._core.claim(1)
            while claims:
                # Each run's ending claims the next one in the same transaction.
                outcome = self._core.run_claimed(claims[0], keeper, self._core.claim_request)
                executed += 1
                claims = list(outcome.claimed) or ([] if outcome.looked else self._core.claim(1))
        finally:
            keeper.stop()
        return executed

    def run_worker(
        self, *, threads: int = 8, drain_timeout: Duration = "30s", poll_interval: Duration = "1s"
    ) -> None:
        """Fire schedules and execute runs until SIGINT or SIGTERM, then drain and return.

        A second signal during the drain exits at once (leases then expire as usual).
        """
        worker = self._make_worker(threads, drain_timeout, poll_interval)
        if threading.current_thread() is not threading.main_thread():
            worker.run()
            return
        _run_until_signalled(worker)

    @contextlib.contextmanager
    def worker(
        self, *, threads: int = 8, drain_timeout: Duration = "30s", poll_interval: Duration = "1s"
    ) -> Iterator[Worker]:
        """The worker loop on a background thread for the duration of a ``with`` block."""
        worker = self._make_worker(threads, drain_timeout, poll_interval)
        thread = threading.Thread(target=worker.run, name="tickwork-worker", daemon=True)
        thread.start()
        try:
            yield worker
        finally:
            worker.stop()
            thread.join()

    def _make_worker(
        self, threads: int, drain_timeout: Duration, poll_interval: Duration
    ) -> Worker:
        if isinstance(threads, bool) or not isinstance(threads, int) or threads < 1:
            raise ConfigError(f"threads must be an int >= 1, not {threads!r}")
        self._ready()
        self.sync_schedules()
        return Worker(
            self._core,
            threads=threads,
            drain_timeout=to_ms(drain_timeout) / 1000,
            poll_interval=to_ms(poll_interval) / 1000,
            tick=self.tick,
            next_tick_ms=self._schedules.next_due_ms,
        )

    # -- cadence preview -----------------------------------------------------------------

    def preview(
        self,
        *,
        cron: str | None = None,
        every: Duration | None = None,
        timezone: str = "UTC",
        after: datetime | None = None,
        count: int = 5,
    ) -> list[datetime]:
        """The next ``count`` occurrences of a cadence after ``after`` (default: now)."""
        from ._cadence import preview

        return preview(
            cron=cron, every=every, timezone=timezone, after=after or self.clock.now(), count=count
        )

    # -- lifecycle -----------------------------------------------------------------------

    def migrate(self) -> int:
        """Apply pending schema migrations now; return the schema version."""
        with self._migrate_lock:
            version = self._core.store.migrate()
            self._migrated = True
        return version

    def close(self) -> None:
        """Release the database connections."""
        self._core.store.close()

    def __enter__(self) -> Engine:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"Engine({self.url!r})"

    # -- async twins: the same calls, awaitable (see _async_api) ------------------------

    start_async = twin(start)
    get_run_async = twin(get_run)
    list_runs_async = twin(list_runs)
    list_steps_async = twin(list_steps)
    cancel_async = twin(cancel)
    schedule_async = twin(schedule)
    unschedule_async = twin(unschedule)
    pause_async = twin(pause)
    resume_async = twin(resume)
    deactivate_async = twin(deactivate)
    activate_async = twin(activate)
    trigger_async = twin(trigger)
    get_schedule_async = twin(get_schedule)
    list_schedules_async = twin(list_schedules)
    schedule_history_async = twin(schedule_history)

    # -- internals -----------------------------------------------------------------------

    @property
    def _store(self) -> Store:
        self._ready()
        return self._core.store

    def _ready(self) -> None:
        if not self._migrated:
            self.migrate()

    def _now_ms(self) -> int:
        return _clock.now_ms(self.clock)

    def _definition(self, workflow: str | Callable[..., Any]) -> WorkflowDef:
        name = getattr(workflow, "__tickwork_workflow__", workflow)
        if not isinstance(name, str):
            raise UnknownWorkflowError(repr(workflow))
        return self._registry.get(name)


_STOP_SIGNALS = {signal.SIGINT, signal.SIGTERM}


def _run_until_signalled(worker: Worker) -> None:
    """Run ``worker`` on a thread; take SIGINT/SIGTERM synchronously on this one.

    A signal handler runs on top of whatever the main thread was doing, so one that takes
    a lock (``Event.set`` does) can wait forever on a lock its own thread holds. Here the
    signals are blocked and collected with ``sigtimedwait`` instead; the handler installed
    for a signal delivered to some other thread only records it (a list append takes no
    lock). Threads started by the loop inherit the blocked mask.
    """
    received: list[int] = []
    handlers = {
        sig: signal.signal(sig, lambda signum, _f: received.append(signum)) for sig in _STOP_SIGNALS
    }
    mask = signal.pthread_sigmask(signal.SIG_BLOCK, _STOP_SIGNALS)
    try:
        loop = threading.Thread(target=worker.run, name="tickwork-loop")
        loop.start()
        while loop.is_alive():
            signalled = signal.sigtimedwait(_STOP_SIGNALS, 0.25)
            if signalled is not None:
                received.append(signalled.si_signo)
            if received and worker.stopping and len(received) > 1:
                log.warning("tickwork: second signal, exiting without draining")
                os._exit(1)
            if received and not worker.stopping:
                log.info("tickwork: %s received, draining", signal.Signals(received[0]).name)
                worker.stop()
        loop.join()
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, mask)
        for sig, handler in handlers.items():
            signal.signal(sig, handler)
