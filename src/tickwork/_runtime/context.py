"""``Context``: what a workflow uses to checkpoint steps, sleep durably and read the time.

A workflow function is re-run from the top whenever its run resumes (after a sleep, a
retry, a crash). Each checkpoint is looked up by (kind, name) in the run's stored log:
found, its stored outcome is returned without running anything; missing, the work is done
and its outcome is stored before the workflow goes on. Calling the same name twice in one
run (a loop) is allowed: the n-th call of "fetch" is stored as "fetch#n".

Leaving the function early (to sleep, to wait for a step retry, because the run was
cancelled or timed out) is done with ``BaseException`` subclasses, so that a workflow's
``except Exception`` cannot swallow them (trio's ``Cancelled`` is the model).
"""

from __future__ import annotations

import asyncio
import hashlib
import inspect
import logging
from collections.abc import Awaitable, Callable, Coroutine, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any, TypeVar

from .._rules.registry import Registry, WorkflowDef
from .._store import ClaimedRun, StepRecord, Store
from .._store.event_records import Emitted, NewEvent
from .._values import clock as _clock
from .._values.durations import Duration, check_instant, describe_duration, instant_after, to_ms
from .._values.events import check_event_name, check_match, event_from_json, payload_json
from .._values.handle import RunHandle
from .._values.ids import canonical_json, from_canonical_json
from .._values.logs import log_run, log_step_failed
from .._values.models import RunInfo, RunStatus, StepTry
from .._values.records import NewRun, tries_from_json, tries_to_json
from .._values.retry import NO_RETRY, Retry
from ..errors import ConfigError, ResultError, StepFailed, WaitTimedOut
from .children import (
    check_key,
    check_max_parallel,
    child_id,
    joined_value,
    map_children,
    new_child,
    waited_ids,
)
from .exits import (
    MAX_TRY_ERROR_CHARS,
    AttemptTimedOut,
    CancelRequested,
    JoinSuspend,
    Suspend,
    WaitSuspend,
    WorkerLost,
    describe_error,
    describe_traceback,
    durable,
    not_a_function,
)

__all__ = ["Context"]

T = TypeVar("T")


@dataclass
class _Lease:
    """The execution's hold on its run, shared with the worker that renews it."""

    store: Store
    token: str
    lease_ms: int
    cancel_requested: bool = False


class Context:
    """Handed to every workflow call as its first argument."""

    def __init__(
        self,
        *,
        claim: ClaimedRun,
        definition: WorkflowDef,
        store: Store,
        clock: _clock.Clock,
        lease_ms: int,
        input: Any,
        on_emitted: Callable[[str, Emitted], None] = lambda _id, _emitted: None,
        registry: Registry | None = None,
        on_started: Callable[[RunInfo, str], None] = lambda _parent, _child: None,
    ) -> None:
        info = claim.info
        self._on_emitted, self._on_started = on_emitted, on_started
        self._registry = registry
        self.run_id: str = info.id
        self.workflow: str = info.workflow
        self.attempt: int = info.attempt
        self.input: Any = input
        self.schedule_key: str | None = info.schedule_key
        self.scheduled_for: datetime | None = info.scheduled_for
        self._info = info
        self._definition = definition
        self._clock = clock
        self._now_ms = _clock.ms_reader(clock)
        self._lease = _Lease(store, claim.lease_token, lease_ms, claim.cancel_requested)
        self._log: dict[tuple[str, str], _Logged] = {
            (s.kind, s.name): _Logged(s.status, s.result, s.error, s.attempts, s.tries)
            for s in claim.steps
        }
        self._calls: dict[tuple[str, str], int] = {}
        self._claimed_steps = claim.steps
        self._seq = len(claim.steps)
        self._deadline_ms = (
            claim.attempt_started_ms + definition.timeout_ms
            if definition.timeout_ms is not None
            else None
        )
        # max_recoveries reached: the first step this replay would execute is the one that
        # lost the workers; it fails the run instead (WorkerLost).
        limit = definition.max_recoveries
        self._lost_workers = claim.lost_workers
        self._spent_limit = limit if limit is not None and claim.lost_workers >= limit else None
        #: the coroutines handed to an async workflow, each with the call that made it
        self._coroutines: list[tuple[str, Coroutine[Any, Any, Any]]] = []
        #: the children this run started (ctx.start), which its waits may name
        self._started: set[str] = {
            s.result for s in claim.steps if s.kind == "start" and isinstance(s.result, str)
        }

    @property
    def info(self) -> RunInfo:
        """The run as it was when this execution began."""
        return self._info

    def request_cancel(self) -> None:
        """Stop at the next step boundary (called when a lease renewal sees a cancel)."""
        self._lease.cancel_requested = True

    # -- checkpoints -------------------------------------------------------------------

    def step(
        self,
        name: str,
        fn: Callable[..., Any],
        *args: Any,
        retry: Retry | None = None,
        **kwargs: Any,
    ) -> Any:
        """Run ``fn(*args, **kwargs)`` once for this run and return its (stored) result.

        In an ``async def`` workflow, ``await`` it. The result must be a JSON value and is
        returned as stored (a tuple comes back as a list, on the first run as on replays).
        On failure the step alone is tried again after ``retry``'s back-off, durably; when
        its tries run out its exception is raised into the workflow.
        """
        if not callable(fn):
            raise ConfigError(not_a_function(name, fn))
        key = self._key("step", name)
        if retry is not None and not isinstance(retry, Retry):
            raise ConfigError(f"retry must be a tickwork.Retry, not {retry!r}")
        if self._definition.is_async:
            coroutine = self._step_async(key, fn, args, kwargs, retry or NO_RETRY)
            return self._awaitable(f"ctx.step({name!r}, ...)", coroutine)
        replayed = self._replay_step(key, retry or NO_RETRY)
        if replayed is not _MISSING:
            return replayed
        started = self._now_ms()
        try:
            value = fn(*args, **kwargs)
            if type(value) not in _PLAIN and inspect.isawaitable(value):
                value = asyncio.run(_awaited(value))
        except Exception as exc:
            self._record_failure(key, started, exc, retry or NO_RETRY)
            raise
        return self._record_success(key, started, value)

    async def _step_async(
        self, key: str, fn: Callable[..., Any], args: Any, kwargs: Any, retry: Retry
    ) -> Any:
        replayed = self._replay_step(key, retry)
        if replayed is not _MISSING:
            return replayed
        started = self._now_ms()
        try:
            value = fn(*args, **kwargs)
            if inspect.isawaitable(value):
                value = await value
        except Exception as exc:
            self._record_failure(key, started, exc, retry)
            raise
        return self._record_success(key, started, value)

    def sleep(self, name: str, duration: Duration) -> Any:
        """Suspend the run for ``duration``, durably: the worker is freed meanwhile.

        In an ``async def`` workflow, ``await`` it.
        """
        key = self._key("sleep", name)
        wake = self._wake_ms(key, lambda now: instant_after(now, duration, f"sleep {name!r}"))
        return self._sleep_or_suspend(wake, f"ctx.sleep({name!r}, ...)")

    def sleep_until(self, name: str, when: datetime) -> Any:
        """Suspend the run until the aware datetime ``when`` (no wait if it has passed)."""
        if not isinstance(when, datetime) or when.tzinfo is None:
            raise ConfigError(f"sleep_until needs an aware datetime, not {when!r}")
        key = self._key("sleep", name)
        wake = self._wake_ms(
            key, lambda _now: check_instant(_clock.to_ms(when), f"sleep_until {name!r}", when)
        )
        return self._sleep_or_suspend(wake, f"ctx.sleep_until({name!r}, ...)")

    def now(self) -> datetime:
        """The current time, recorded on first call so replays see the same value."""
        key = self._key("now", "now")
        stored = self._log.get(("now", key))
        if stored is not None:
            return _clock.from_ms(int(stored.result))
        now = self._now_ms()
        self._write(
            StepRecord("now", key, self._next_seq(), "completed", str(now), None, 1, now, now)
        )
        return _clock.from_ms(now)

    # -- events (DESIGN §9) ------------------------------------------------------------

    def wait_for_event(
        self,
        name: str | Sequence[str],
        *,
        match: Mapping[str, Any] | None = None,
        timeout: Duration | None = None,
        since: str = "run",
    ) -> Any:
        """Suspend the run (status ``waiting``, the worker freed) until an event of
        ``name`` (or of any of a list of names) whose payload matches ``match`` is
        emitted; return it as an ``Event``, or None once ``timeout`` has passed.
        Checkpointed: a replay returns the same. ``since="run"`` (default) also takes an
        event emitted since the run was created, ``since="wait"`` only later ones.

        In an ``async def`` workflow, ``await`` it.
        """
        names = (name,) if isinstance(name, str) else tuple(name) if name else ()
        if not names or not isinstance(names, tuple):
            raise ConfigError(f"wait_for_event needs an event name or a list of them, not {name!r}")
        for each in names:
            check_event_name(each)
        checked = check_match(match)
        if since not in ("run", "wait"):
            raise ConfigError(f"since must be 'run' or 'wait', not {since!r}")
        if timeout is not None:
            to_ms(timeout, "timeout")  # refused at once, even on a replay that returns
        key = self._key("event", "|".join(names))
        what = f"ctx.wait_for_event({name!r}, ...)"
        stored = self._log.get(("event", key))
        if stored is not None and stored.status == "completed":
            event = None if stored.result is None else event_from_json(stored.result)
            return self._returning(what, event)
        self._check_boundary()
        now = self._now_ms()
        if stored is not None:  # waiting: its timeout came (or it was taken over)
            until, since_ms = stored.result["until"], int(stored.result["since"])
            # where its look back began; none: a run from before migration 0022, whose
            # look back keeps its millisecond rule (the run has no mark)
            after = stored.result.get("after")
            if until is not None and now >= until:  # timed out: it began when it was stored
                began = self._began("event", key, now)
                self._write(StepRecord("event", key, 0, "completed", "null", None, 1, began, now))
                return self._returning(what, None)
        else:
            until = None if timeout is None else instant_after(now, timeout, "timeout")
            since_ms = _clock.to_ms(self._info.created_at) if since == "run" else now
            after = None  # the store's: the run's mark, or the last event's
        raise WaitSuspend(
            names=names, match=checked, since_ms=since_ms, until_ms=until, step=key,
            seq=self._seq_of("event", key), seen=self.seen_events(),
            since_run=since == "run" or stored is not None,
            after=None if after is None else int(after),
        )  # fmt: skip

    def _began(self, kind: str, key: str, default: int) -> int:
        """When the stored checkpoint ``key`` began (a rewrite keeps its start)."""
        for step in self._claimed_steps:
            if step.kind == kind and step.name == key:
                return _clock.to_ms(step.started_at)
        return default

    def seen_events(self) -> frozenset[str]:
        """The ids of the events this run's waits were handed (none is handed twice)."""
        return frozenset(
            s.result["id"]
            for (kind, _), s in self._log.items()
            if kind == "event" and s.status == "completed" and isinstance(s.result, dict)
        )

    def emit(self, name: str, payload: Any = None) -> Any:
        """Emit an event from the workflow, checkpointed: a replay does not emit again
        (its id is derived from the run and the call, so even a retry of a lost
        checkpoint starts nothing twice). Returns the ids of the runs it started.

        In an ``async def`` workflow, ``await`` it.
        """
        check_event_name(name)
        text = payload_json(payload)
        key = self._key("emit", name)
        what = f"ctx.emit({name!r}, ...)"
        stored = self._log.get(("emit", key))
        if stored is not None:
            return self._returning(what, stored.result)
        self._check_boundary()
        now = self._now_ms()
        digest = hashlib.sha256(f"{self.run_id}\x00{key}".encode()).hexdigest()[:32]
        store, event_id = self._lease.store, f"run-{digest}"
        emitted = durable(
            lambda: store.events.emit(NewEvent(event_id, name, text, now)),
            give_up_after=self._lease.lease_ms / 2000,
        )
        self._on_emitted(event_id, emitted)  # this process's worker takes its runs now
        started = list(emitted.started)
        self._write(
            StepRecord("emit", key, self._next_seq(), "completed", canonical_json(started),
                       None, 1, now, self._now_ms())
        )  # fmt: skip
        return self._returning(what, started)

    # -- child runs (DESIGN §10) -----------------------------------------------------------

    def start(
        self,
        workflow: str,
        input: Any = None,
        *,
        key: str | None = None,
        priority: int | None = None,
        pool: str | None = None,
        delay: Duration | None = None,
    ) -> Any:
        """Start a child run of ``workflow`` and return its ``RunHandle``, checkpointed:
        a replay returns the same handle and never starts a second child. ``key``
        (default: the workflow's name, numbered by call) names it among this run's
        children; the child's id is this run's id and the key. Checked as
        ``engine.start``: the workflow known, the input valid, before anything is stored.

        In an ``async def`` workflow, ``await`` it.
        """
        if not isinstance(workflow, str):
            raise ConfigError(f"ctx.start needs a workflow's name, not {workflow!r}")
        step = self._key("start", check_key(key) or workflow)
        what = f"ctx.start({workflow!r}, ...)"
        stored = self._log.get(("start", step))
        if stored is not None:
            return self._returning(what, self._handle(stored.result))
        registry = self._children_registry()
        self._check_boundary()
        now, run_id = self._now_ms(), child_id(self.run_id, step)
        child = new_child(
            registry, self._info, workflow, input, run_id=run_id, now_ms=now,
            priority=priority, pool=pool, delay=delay,
        )  # fmt: skip
        record = StepRecord(
            "start", step, self._next_seq(), "completed", canonical_json(run_id), None, 1, now, now
        )
        lease = self._lease
        inserted = durable(
            lambda: lease.store.children.start_child(
                run_id=self.run_id, token=lease.token, step=record, child=child,
                lease_ms=lease.lease_ms,
            ),
            give_up_after=lease.lease_ms / 2000,
        )  # fmt: skip
        self._log[("start", step)] = _Logged("completed", run_id, None, 1, ())
        self._started.add(run_id)
        if inserted:
            self._on_started(self._info, run_id)
        return self._returning(what, self._handle(run_id))

    def wait(self, handles: Any, *, timeout: Duration | None = None, settle: bool = False) -> Any:
        """Suspend the run (status ``waiting``, the worker and the concurrency slot freed)
        until the child ``handles`` names (a ``RunHandle`` or a list of them) has ended,
        or all of them; return its result (a list, in the handles' order). A child that
        failed or was cancelled raises ``ChildRunFailed``; with ``settle=True`` it returns
        ``Outcome``s instead. Past ``timeout``, ``WaitTimedOut`` (the children go on).
        Checkpointed: a replay returns or raises the same without waiting.

        In an ``async def`` workflow, ``await`` it.
        """
        ids, single = waited_ids(handles, self.run_id, self._started)
        if timeout is not None:
            to_ms(timeout, "timeout")
        step = self._key("join", "wait")
        return self._join("join", step, ids, timeout, settle=settle, single=single)

    def map(
        self,
        workflow: str,
        inputs: Sequence[Any],
        *,
        max_parallel: int | None = None,
        settle: bool = False,
        timeout: Duration | None = None,
        key: str | None = None,
    ) -> Any:
        """Start one child run of ``workflow`` per input (1 to 100,000, inserted in one
        transaction) and wait for all of them; return their results in the inputs'
        order (``Outcome``s with ``settle=True``; else ``ChildRunFailed`` for a child that
        failed). With ``max_parallel=N`` at most N of them are runnable at once: each
        child's end releases the next, durably and across the fleet.

        In an ``async def`` workflow, ``await`` it.
        """
        if not isinstance(workflow, str):
            raise ConfigError(f"ctx.map needs a workflow's name, not {workflow!r}")
        window = check_max_parallel(max_parallel)
        if timeout is not None:
            to_ms(timeout, "timeout")
        step = self._key("map", check_key(key) or workflow)
        prefix = child_id(self.run_id, step) + "/"
        stored = self._log.get(("map", step))
        if stored is not None:
            count = int(stored.result["count"])
            ids = [f"{prefix}{n}" for n in range(count)]
            return self._join("map", step, ids, timeout, settle=settle, single=False)
        registry = self._children_registry()
        children = map_children(
            registry, self._info, workflow, inputs, prefix=prefix, joined=f"map:{step}",
            max_parallel=window, now_ms=self._now_ms(),
        )  # fmt: skip
        ids = [child.id for child in children]
        return self._join(
            "map", step, ids, timeout, settle=settle, single=False, children=children,
            prefix=prefix, released=window,
        )  # fmt: skip

    def _join(
        self,
        kind: str,
        step: str,
        ids: list[str],
        timeout: Duration | None,
        *,
        settle: bool,
        single: bool,
        children: tuple[NewRun, ...] = (),
        prefix: str | None = None,
        released: int | None = None,
    ) -> Any:
        """A wait for the children ``ids``: their value when all have ended (now, or
        read on a replay), ``WaitTimedOut`` past its time, else the run suspended."""
        what = f"ctx.{'wait' if kind == 'join' else 'map'}(...)"
        stored = self._log.get((kind, step))
        if stored is not None and stored.status == "completed":
            if stored.result.get("timed_out"):
                raise WaitTimedOut(list(stored.result["timed_out"]), stored.result["after"])
            found = self._lease.store.children.outcomes(ids)
            return self._returning(what, joined_value(found, ids, settle=settle, single=single))
        self._check_boundary()
        now = self._now_ms()
        if stored is not None:  # waiting: woken by its last child, its timeout, a take-over
            until = stored.result["until"]
        else:
            until = None if timeout is None else instant_after(now, timeout, "timeout")
        if not children:
            found = self._lease.store.children.outcomes(ids)
            if all(outcome is not None for outcome in found):
                self._close(kind, step, now, {"count": len(ids)})
                if stored is not None:  # it waited, and its last child woke it
                    log_run(logging.INFO, self._info, "woken: its %d child run(s) ended", len(ids))
                return self._returning(what, joined_value(found, ids, settle=settle, single=single))
            if until is not None and now >= until:
                late = [run_id for run_id, o in zip(ids, found, strict=True) if o is None]
                after = "its timeout"
                if timeout is not None:
                    after = describe_duration(timedelta(milliseconds=to_ms(timeout, "timeout")))
                self._close(kind, step, now, {"count": len(ids), "timed_out": late, "after": after})
                raise WaitTimedOut(late, after)
        waiting: dict[str, Any] = {"count": len(ids), "until": until}
        if kind == "join":
            waiting["runs"] = ids
        elif children:
            waiting["workflow"] = children[0].workflow
        elif stored is not None:
            waiting["workflow"] = stored.result.get("workflow")
        raise JoinSuspend(
            kind=kind, step=step, seq=self._seq_of(kind, step), child_ids=tuple(ids),
            until_ms=until, waiting_json=canonical_json(waiting), children=children,
            prefix=prefix, released=released,
        )  # fmt: skip

    def _close(self, kind: str, step: str, now: int, result: dict[str, Any]) -> None:
        """Write a wait's checkpoint completed and forget its join."""
        began = self._began(kind, step, now)
        record = StepRecord(
            kind, step, self._seq_of(kind, step), "completed", canonical_json(result), None, 1,
            began, now,
        )  # fmt: skip
        lease = self._lease
        durable(
            lambda: lease.store.children.close_join(
                run_id=self.run_id, token=lease.token, step=record, lease_ms=lease.lease_ms
            ),
            give_up_after=lease.lease_ms / 2000,
        )
        self._log[(kind, step)] = _Logged("completed", result, None, 1, ())

    def _handle(self, run_id: str) -> RunHandle:
        self._started.add(run_id)
        store, now_ms = self._lease.store, self._now_ms
        return RunHandle(
            run_id,
            get_run=store.runs.get_run,
            cancel=lambda child: store.runs.cancel_run(child, now_ms=now_ms()),
            pause=lambda seconds, _look: _clock.sleep(min(seconds, 0.1)),
        )

    def _children_registry(self) -> Registry:
        if self._registry is None:  # a Context built without one (tests of steps alone)
            raise ConfigError("child runs need the engine's registry")
        return self._registry

    def _returning(self, what: str, value: T) -> Any:
        """``value``, or in an ``async def`` workflow an awaitable of it."""
        if self._definition.is_async:
            return self._awaitable(what, _value(value))
        return value

    # -- internals ---------------------------------------------------------------------

    def _key(self, kind: str, name: str) -> str:
        if not isinstance(name, str) or not name:
            raise ConfigError(f"A {kind} needs a non-empty name, not {name!r}")
        count = self._calls.get((kind, name), 0) + 1
        self._calls[(kind, name)] = count
        return name if count == 1 else f"{name}#{count}"

    def _replay_step(self, key: str, retry: Retry) -> Any:
        stored = self._log.get(("step", key))
        if stored is not None:
            if stored.status == "completed":
                return stored.result
            if not retry.allows_another(stored.attempts):
                raise StepFailed(key, stored.error)
        if self._lease.cancel_requested or self._deadline_ms is not None:
            self._check_boundary()
        if self._spent_limit is not None:
            raise WorkerLost(f"step {key!r}", self._lost_workers, self._spent_limit)
        return _MISSING

    def _record_success(self, key: str, started: int, value: Any) -> Any:
        try:
            text = canonical_json(value, what=f"The result of step {key!r}", error=ResultError)
        except ConfigError as exc:
            self._record_failure(key, started, exc, NO_RETRY)
            raise
        before = self._log.get(("step", key))
        if before is None:  # the common case: its first try, which succeeded
            seq, attempts, tries = self._next_seq(), 1, None
        else:  # earlier tries failed: what it took is kept in sight
            seq, attempts = 0, self._previous_tries(key) + 1  # 0: _seq_of's "kept"
            tries = tries_to_json(self._failed_tries(key))
        stored = self._write(
            StepRecord(
                "step", key, seq, "completed", text, None, attempts, started, self._now_ms(),
                tries,
            )
        )  # fmt: skip
        return stored.result  # as stored: a replay returns exactly this

    def _record_failure(self, key: str, started: int, exc: Exception, retry: Retry) -> None:
        attempts = self._previous_tries(key) + 1
        error, now = describe_error(exc), self._now_ms()
        this_try = StepTry(
            attempts,
            error if len(error) <= MAX_TRY_ERROR_CHARS else error[:MAX_TRY_ERROR_CHARS] + "…",
            describe_traceback(exc),
            _clock.from_ms(started),
            _clock.from_ms(now),
        )
        self._write(
            StepRecord(
                "step",
                key,
                self._seq_of("step", key),
                "failed",
                None,
                error,
                attempts,
                started,
                now,
                tries_to_json((*self._failed_tries(key), this_try)),
            )
        )
        log_step_failed(self._info, key, attempts, exc, retry)
        if retry.allows_another(attempts):
            wake = _clock.capped(self._now_ms() + retry.delay_ms(attempts))
            raise Suspend(wake, RunStatus.PENDING)

    def _failed_tries(self, key: str) -> tuple[StepTry, ...]:
        """The step's failed tries in this attempt of the run, oldest first."""
        stored = self._log.get(("step", key))
        return stored.tries if stored is not None and stored.status == "failed" else ()

    def _previous_tries(self, key: str) -> int:
        stored = self._log.get(("step", key))
        return stored.attempts if stored is not None and stored.status == "failed" else 0

    def _wake_ms(self, key: str, compute: Callable[[int], int]) -> int:
        stored = self._log.get(("sleep", key))
        if stored is not None:
            return int(stored.result)
        self._check_boundary()
        now = self._now_ms()
        wake = compute(now)
        self._write(
            StepRecord("sleep", key, self._next_seq(), "completed", str(wake), None, 1, now, now)
        )
        return wake

    def _sleep_or_suspend(self, wake_ms: int, what: str) -> Any:
        if self._now_ms() < wake_ms:
            raise Suspend(wake_ms, RunStatus.SLEEPING)
        return self._awaitable(what, _done()) if self._definition.is_async else None

    def _awaitable(self, what: str, coroutine: Coroutine[Any, Any, T]) -> Coroutine[Any, Any, T]:
        """``coroutine``, kept so that the attempt's end can tell whether it was awaited."""
        self._coroutines.append((what, coroutine))
        return coroutine

    def check_awaited(self) -> None:
        """``ConfigError`` naming the first checkpoint an ``async def`` workflow called
        without ``await``: its coroutine never ran, so its step never did (closed here,
        with the others, so Python does not warn of them again)."""
        forgotten = self.close_unawaited()
        if forgotten:
            raise ConfigError(
                f"{forgotten[0]} was never awaited (its work never ran): in an async def "
                f"workflow write await {forgotten[0]}"
            )

    def close_unawaited(self) -> list[str]:
        """Close the checkpoints' coroutines never awaited, and say which: at the end of
        an ``async def`` workflow, and when it leaves early (a gathered wait suspends the
        run before the awaitables made before it are awaited: no warning of them)."""
        forgotten = []
        for what, coroutine in self._coroutines:
            if inspect.getcoroutinestate(coroutine) == inspect.CORO_CREATED:
                forgotten.append(what)
                coroutine.close()
        self._coroutines.clear()
        return forgotten

    def _check_boundary(self) -> None:
        if self._lease.cancel_requested:
            raise CancelRequested
        if self._deadline_ms is not None and self._now_ms() >= self._deadline_ms:
            raise AttemptTimedOut

    def _write(self, record: StepRecord) -> _Logged:
        lease = self._lease
        cancel = durable(
            lambda: lease.store.runs.record_step(
                run_id=self.run_id,
                token=lease.token,
                step=record,
                now_ms=record.finished_ms,  # read just now: "now" for the lease's renewal
                lease_ms=lease.lease_ms,
            ),
            give_up_after=lease.lease_ms / 2000,
        )
        lease.cancel_requested = lease.cancel_requested or cancel
        failed = record.status == "failed"
        stored = self._log[(record.kind, record.name)] = _Logged(
            record.status,
            None if record.result_json is None else from_canonical_json(record.result_json),
            record.error,
            record.attempts,
            tries_from_json(record.tries_json) if failed else (),  # read only when failed
        )
        return stored

    def _next_seq(self) -> int:
        self._seq += 1
        return self._seq

    def _seq_of(self, kind: str, key: str) -> int:
        """The order of a checkpoint: a new one's is next; one already stored (a step
        tried again) keeps its own (the upsert leaves it), so numbers are never skipped
        and a later attempt, counting the stored rows, goes on where this one stopped."""
        stored = self._log.get((kind, key))
        return self._next_seq() if stored is None else 0  # 0: not written over

    def __repr__(self) -> str:
        return f"<Context run={self.run_id} workflow={self.workflow} attempt={self.attempt}>"


class _Logged:
    """A checkpoint as this execution knows it: what a replay and a step's next try read
    of it (a ``StepInfo``'s datetimes and names are not needed here, and building one
    cost every step)."""

    __slots__ = ("attempts", "error", "result", "status", "tries")

    def __init__(
        self, status: str, result: Any, error: str | None, attempts: int, tries: tuple[StepTry, ...]
    ) -> None:
        self.status, self.result, self.error = status, result, error
        self.attempts, self.tries = attempts, tries


#: what a step's function returns that is surely no awaitable (the common case: no
#: ``inspect.isawaitable``, an ABC check, on every step)
_PLAIN = frozenset({dict, list, str, int, float, bool, type(None), tuple})


class _Missing:
    pass


_MISSING: Any = _Missing()


async def _awaited(value: Awaitable[Any]) -> Any:
    return await value


async def _done() -> None:
    return None


async def _value(value: T) -> T:
    return value
