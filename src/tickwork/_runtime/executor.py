"""One attempt of one run: call the workflow and store what came of it."""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from .._rules.registry import Registry, WorkflowDef
from .._store import ClaimedRun, ClaimRequest, Ended, LeaseLost, Store
from .._store.event_records import Emitted, NewWait
from .._values import clock as _clock
from .._values.checkpoints import WaitingFor, wait_what
from .._values.clock import capped
from .._values.ids import canonical_json
from .._values.logs import RUNS, elapsed, instant, log_decision, log_run
from .._values.models import HistoryEntry, RunInfo, RunStatus
from .._values.records import NewJoin
from .._values.retry import Retry
from ..errors import ConfigError, ResultError, StoreError
from .context import Context
from .exits import (
    AttemptTimedOut,
    CancelRequested,
    JoinSuspend,
    StoreUnavailable,
    Suspend,
    WaitSuspend,
    WorkerLost,
    describe_error,
    describe_traceback,
    durable,
    storable_text,
)

__all__ = ["Outcome", "execute"]

#: the level of the line each way an attempt can leave its run (``log_outcome``)
_OUTCOME_LEVELS = {RunStatus.FAILED: logging.ERROR, RunStatus.PENDING: logging.WARNING}


@dataclass(frozen=True)
class Outcome:
    """What one execution did: the run as stored after it (None if the lease was lost),
    and the runs claimed in the same transaction for the caller to execute next."""

    run: RunInfo | None
    finished: bool
    claimed: Sequence[ClaimedRun] = ()
    #: the ending transaction asked for a next run (and found ``claimed``)
    next_claim_asked: bool = False
    #: why the run ended, for ``on_error``, when its operators must hear of it (not a
    #: workflow's own failure: a step that kept killing its worker)
    report: BaseException | None = None
    #: its schedule paused itself at this failure (``pause_after_failures``)
    auto_paused: HistoryEntry | None = None

    @classmethod
    def of(
        cls,
        ended: Ended,
        *,
        finished: bool,
        next_claim_asked: bool,
        report: BaseException | None = None,
    ) -> Outcome:
        return cls(ended.run, finished, ended.claimed, next_claim_asked, report, ended.auto_paused)


def execute(
    claim: ClaimedRun,
    definition: WorkflowDef,
    *,
    store: Store,
    clock: _clock.Clock,
    lease_ms: int,
    on_context: Callable[[Context | None], None] = lambda _ctx: None,
    next_claim: Callable[[int], ClaimRequest | None] = lambda _now_ms: None,
    on_emitted: Callable[[str, Emitted], None] = lambda _id, _emitted: None,
    registry: Registry | None = None,
    on_started: Callable[[RunInfo, str], None] = lambda _parent, _child: None,
) -> Outcome:
    """Execute the claimed run until it finishes, suspends or fails this attempt.

    ``on_context`` receives the context while it runs (and None after) so the caller can
    flag a cancellation seen by a lease renewal. ``next_claim(now_ms)`` says which runs
    to claim in the transaction that ends this attempt (None: claim nothing).
    ``on_emitted(event_id, emitted)`` hears of each event the workflow's ``ctx.emit``
    stored; ``registry`` is where ``ctx.start`` / ``ctx.map`` find their children's
    workflows, and ``on_started(parent, child_id)`` hears of each child started.
    """
    attempt = _Attempt(claim, definition, store, clock, lease_ms, next_claim, on_emitted)
    attempt.registry, attempt.on_started = registry, on_started
    try:
        if claim.cancel_requested:
            outcome = attempt.end(RunStatus.CANCELLED)
        else:
            _log_claim(claim, _clock.now_ms(clock))
            lost = _lost_outside_steps(claim, definition)
            outcome = attempt.run(on_context) if lost is None else attempt.lost_too_often(lost)
    except LeaseLost:
        # Another worker took the run (our lease expired) or it was cancelled; whatever
        # we did not write is theirs to do.
        log_run(logging.WARNING, claim.info, "lost its lease: left to the worker that took it")
        return Outcome(None, False)
    except StoreUnavailable as exc:
        # Nothing can be written: once the lease expires, a worker takes the run over.
        log_run(logging.WARNING, claim.info, "abandoned: database unreachable: %s", exc)
        return Outcome(None, False)
    except StoreError as exc:  # not transient (durable retries those): a refused value
        # Trying again would be refused again, run after run: end the run as failed,
        # saying why, then let the caller report the error (on_error).
        attempt.refused(exc)
        raise
    attempt.log_outcome(outcome)
    if outcome.auto_paused is not None:  # a firing decision, logged as the others are
        log_decision(outcome.auto_paused)
    return outcome


def _log_claim(claim: ClaimedRun, now_ms: int) -> None:
    """A run's life as this claim begins it: started, resumed or taken over. A run
    resumed in the millisecond it started (a wait whose event had come already: stored
    pending, claimed again at once) says nothing more: its "started" line was that
    instant's, and "started" then "resumed" read as two lives."""
    info = claim.info
    started = info.started_at
    if claim.resumed and not claim.lost_workers and started and _clock.to_ms(started) >= now_ms:
        return
    if not RUNS.isEnabledFor(logging.WARNING if claim.lost_workers else logging.INFO):
        return  # nothing formatted: this is every run's path
    if claim.lost_workers > 0:
        log_run(
            logging.WARNING,
            info,
            "taken over from a lost worker (attempt %d; %d lost in a row)",
            info.attempt,
            claim.lost_workers,
        )
    elif not claim.resumed:
        if info.scheduled_for is None:
            log_run(logging.INFO, info, "started: workflow %s", info.workflow)
        else:
            when = instant(info.scheduled_for)
            log_run(logging.INFO, info, "started: workflow %s, occurrence %s", info.workflow, when)
    else:
        log_run(logging.INFO, info, "resumed (attempt %d)", info.attempt)


class _Attempt:
    """One attempt of a claimed run, and the durable writes that end it.

    Each ending write is retried through a database blip (``durable``), never past half
    the lease: after that another worker may take the run over.
    """

    def __init__(
        self,
        claim: ClaimedRun,
        definition: WorkflowDef,
        store: Store,
        clock: _clock.Clock,
        lease_ms: int,
        next_claim: Callable[[int], ClaimRequest | None],
        on_emitted: Callable[[str, Emitted], None],
    ) -> None:
        self.claim, self.definition, self.store = claim, definition, store
        self.clock, self.lease_ms, self.next_claim = clock, lease_ms, next_claim
        self.on_emitted = on_emitted
        self.registry: Registry | None = None
        self.on_started: Callable[[RunInfo, str], None] = lambda _parent, _child: None
        self.give_up_after = lease_ms / 2000
        #: what failed the attempt, for the log's traceback
        self.failure: BaseException | None = None
        #: when a sleeping run wakes
        self.wake_ms: int | None = None
        #: what a waiting run waits for: its event names, until when
        self.waiting_for: tuple[str, int | None] | None = None

    def run(self, on_context: Callable[[Context | None], None]) -> Outcome:
        """Call the workflow; store its result, its suspension or its failure."""
        info, definition = self.claim.info, self.definition
        try:
            # Inside the try: an input the current code cannot load fails the attempt.
            ctx = Context(
                claim=self.claim,
                definition=definition,
                store=self.store,
                clock=self.clock,
                lease_ms=self.lease_ms,
                input=definition.load_input(info.input),
                on_emitted=self.on_emitted,
                registry=self.registry,
                on_started=self.on_started,
            )
            on_context(ctx)
            value = _call(definition, ctx)
            what = f"The result of workflow {info.workflow!r}"
            result = canonical_json(value, what=what, error=ResultError)
        except Suspend as suspended:
            return self.suspend(suspended)
        except CancelRequested:
            return self.end(RunStatus.CANCELLED)
        except WorkerLost as lost:
            return self.lost_too_often(lost)
        except AttemptTimedOut:
            return self.fail(f"TimeoutError: attempt {info.attempt} ran longer than its timeout")
        except Exception as exc:
            self.failure = exc
            return self.fail(describe_error(exc), describe_traceback(exc))
        finally:
            on_context(None)
        return self.end(RunStatus.COMPLETED, result=result)

    def log_outcome(self, outcome: Outcome) -> None:
        """Log how the attempt left the run, once stored: completed, failed, cancelled,
        sleeping, or failed and retried (a step's retry is logged by the step)."""
        run, info = outcome.run, self.claim.info
        if run is None or not RUNS.isEnabledFor(_OUTCOME_LEVELS.get(run.status, logging.INFO)):
            return  # nothing formatted: this is every run's path
        if run.status is RunStatus.COMPLETED:
            took = 0
            if run.started_at is not None and run.finished_at is not None:
                took = (run.finished_at - run.started_at) // timedelta(milliseconds=1)
            log_run(logging.INFO, run, "completed in %s", elapsed(took))
        elif run.status is RunStatus.FAILED:
            log_run(logging.ERROR, run, "failed: %s", run.error, exc_info=self.failure)
        elif run.status is RunStatus.CANCELLED:
            log_run(logging.INFO, run, "cancelled")
        elif run.status is RunStatus.SLEEPING and self.wake_ms is not None:
            log_run(logging.INFO, run, "sleeping until %s", instant(self.wake_ms))
        elif run.status is RunStatus.WAITING and self.waiting_for is not None:
            names, until = self.waiting_for
            when = "" if until is None else f" until {instant(until)}"
            log_run(logging.INFO, run, "waiting for %s%s", names, when)
        elif run.status is RunStatus.PENDING and run.attempt > info.attempt:
            delay = _retry_of(self.claim, self.definition).delay_ms(info.attempt)
            log_run(
                logging.WARNING,
                run,
                "attempt %d failed: %s; retry in %s",
                info.attempt,
                run.error,
                elapsed(delay),
            )

    def end(
        self,
        status: RunStatus,
        result: str | None = None,
        *,
        error: str | None = None,
        report: BaseException | None = None,
    ) -> Outcome:
        """End the run for good as ``status``."""

        def write() -> Outcome:
            now = _clock.now_ms(self.clock)
            request = self.next_claim(now)
            ended = self.store.runs.finish_run(
                run_id=self.claim.info.id,
                token=self.claim.lease_token,
                status=status,
                result_json=result,
                error=error,
                now_ms=now,
                then_claim=request,
                running=self.claim.info,
            )
            asked = request is not None
            return Outcome.of(ended, finished=True, next_claim_asked=asked, report=report)

        return durable(write, give_up_after=self.give_up_after)

    def lost_too_often(self, lost: WorkerLost) -> Outcome:
        """Fail the run for good (max_recoveries): a retry would only hand the step that
        keeps killing its worker the next one, so no ``Retry`` applies."""
        return self.end(RunStatus.FAILED, error=describe_error(lost), report=lost)

    def suspend(self, suspend: Suspend) -> Outcome:
        """Store the run as sleeping (or pending) until the suspension's time."""
        if isinstance(suspend, WaitSuspend):
            return self.wait(suspend)
        if isinstance(suspend, JoinSuspend):
            return self.join(suspend)
        self.wake_ms = suspend.available_ms

        def write() -> Outcome:
            request = self.next_claim(_clock.now_ms(self.clock))
            ended = self.store.runs.reschedule_run(
                run_id=self.claim.info.id,
                token=self.claim.lease_token,
                status=suspend.status,
                available_ms=suspend.available_ms,
                attempt=self.claim.info.attempt,
                error=None,
                new_attempt=False,
                then_claim=request,
            )
            return Outcome.of(ended, finished=False, next_claim_asked=request is not None)

        return durable(write, give_up_after=self.give_up_after)

    def wait(self, wait: WaitSuspend) -> Outcome:
        """Store the run as waiting for an event (or pending, one having come already)."""
        self.waiting_for = (wait_what(WaitingFor(wait.names, wait.match, None)), wait.until_ms)

        def write() -> Outcome:
            now = _clock.now_ms(self.clock)
            request = self.next_claim(now)
            info = self.claim.info
            ended = self.store.events.wait_run(
                NewWait(
                    run_id=info.id, token=self.claim.lease_token, names=wait.names,
                    match=wait.match, since_ms=wait.since_ms, until_ms=wait.until_ms,
                    step=wait.step, seq=wait.seq, seen=wait.seen, now_ms=now,
                    attempt=info.attempt, since_run=wait.since_run, after=wait.after,
                ),
                then_claim=request,
            )  # fmt: skip
            return Outcome.of(ended, finished=False, next_claim_asked=request is not None)

        return durable(write, give_up_after=self.give_up_after)

    def join(self, join: JoinSuspend) -> Outcome:
        """Store the run as waiting for its children (pending: all ended already)."""
        self.waiting_for = (f"{len(join.child_ids)} child run(s)", join.until_ms)

        def write() -> Outcome:
            now = _clock.now_ms(self.clock)
            request = self.next_claim(now)
            info = self.claim.info
            ended = self.store.children.join(
                NewJoin(
                    run_id=info.id, token=self.claim.lease_token, kind=join.kind,
                    step=join.step, seq=join.seq, child_ids=join.child_ids,
                    until_ms=join.until_ms, now_ms=now, attempt=info.attempt,
                    waiting_json=join.waiting_json, prefix=join.prefix, released=join.released,
                ),
                children=join.children,
                then_claim=request,
            )  # fmt: skip
            return Outcome.of(ended, finished=False, next_claim_asked=request is not None)

        return durable(write, give_up_after=self.give_up_after)

    def refused(self, exc: StoreError) -> None:
        """End the run as failed because the database refused its outcome."""
        error = storable_text(f"StoreError: the database refused this run's outcome: {exc}")

        def write() -> None:
            self.store.runs.finish_run(
                run_id=self.claim.info.id,
                token=self.claim.lease_token,
                status=RunStatus.FAILED,
                result_json=None,
                error=error[:2000],
                now_ms=_clock.now_ms(self.clock),
                running=self.claim.info,
            )

        with contextlib.suppress(StoreError, StoreUnavailable, LeaseLost):
            durable(write, give_up_after=self.give_up_after)

    def fail(self, error: str, traceback: str | None = None) -> Outcome:
        """Retry after the back-off while the policy allows, else fail the run (keeping
        ``traceback``)."""

        def write() -> Outcome:
            now = _clock.now_ms(self.clock)
            return _failed_attempt(
                self.claim, self.definition, self.store, now, error, self.next_claim(now),
                traceback,
            )  # fmt: skip

        return durable(write, give_up_after=self.give_up_after)


def _lost_outside_steps(claim: ClaimedRun, definition: WorkflowDef) -> WorkerLost | None:
    """``WorkerLost`` when the run lost more workers in a row than ``max_recoveries``.

    At the limit the replay fails the run at its first step not yet done (``Context``); a
    run lost once more at the same point never reached such a step: what kills its worker
    is outside any step (or the limit was lowered by a deploy). It fails at once.
    """
    limit = definition.max_recoveries
    if limit is None or claim.lost_workers <= limit:
        return None
    done = [step.name for step in claim.steps if step.status == "completed"]
    where = f"after checkpoint {done[-1]!r}" if done else "before its first checkpoint"
    return WorkerLost(f"the run ({where})", claim.lost_workers, limit)


def _retry_of(claim: ClaimedRun, definition: WorkflowDef) -> Retry:
    """The run's retry policy: a schedule may override its workflow's."""
    if claim.retry_json is None:
        return definition.retry
    return Retry.from_json(json.loads(claim.retry_json))


def _call(definition: WorkflowDef, ctx: Context) -> Any:
    args = (ctx, ctx.input) if definition.takes_input else (ctx,)
    if not definition.is_async:
        return definition.fn(*args)
    try:
        value = asyncio.run(definition.fn(*args))
    except Exception as exc:
        # A forgotten await is the likelier cause of what failed (a coroutine used as
        # the step's result): say so first.
        try:
            ctx.check_awaited()
        except ConfigError as forgotten:
            raise forgotten from exc
        raise
    except BaseException:  # left early (a Suspend, a cancel): what it made goes unawaited
        ctx.close_unawaited()
        raise
    ctx.check_awaited()
    return value


def _failed_attempt(
    claim: ClaimedRun,
    definition: WorkflowDef,
    store: Store,
    now_ms: int,
    error: str,
    then_claim: ClaimRequest | None,
    traceback: str | None = None,
) -> Outcome:
    """Retry after the back-off while the policy allows, else fail the run for good."""
    info = claim.info
    retry = _retry_of(claim, definition)
    if retry.allows_another(info.attempt):
        ended = store.runs.reschedule_run(
            run_id=info.id,
            token=claim.lease_token,
            status=RunStatus.PENDING,
            available_ms=capped(now_ms + retry.delay_ms(info.attempt)),
            attempt=info.attempt + 1,
            error=error,
            new_attempt=True,
            then_claim=then_claim,
        )
        return Outcome.of(ended, finished=False, next_claim_asked=then_claim is not None)
    ended = store.runs.finish_run(
        run_id=info.id,
        token=claim.lease_token,
        status=RunStatus.FAILED,
        result_json=None,
        error=error,
        now_ms=now_ms,
        then_claim=then_claim,
        running=info,
        traceback=traceback,
    )
    return Outcome.of(ended, finished=True, next_claim_asked=then_claim is not None)
