"""One attempt of one run: call the workflow and store what came of it."""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from . import _clock
from ._context import (
    AttemptTimedOut,
    CancelRequested,
    Context,
    StoreUnavailable,
    Suspend,
    describe_error,
    durable,
    storable_text,
)
from ._ids import canonical_json
from ._models import RunInfo, RunStatus
from ._registry import WorkflowDef
from ._retry import Retry
from ._store import ClaimedRun, ClaimRequest, Ended, LeaseLost, Store
from .errors import ResultError, StoreError

__all__ = ["Outcome", "execute"]

log = logging.getLogger("tickwork")


@dataclass(frozen=True)
class Outcome:
    """What one execution did: the run as stored after it (None if the lease was lost),
    and the runs claimed in the same transaction for the caller to execute next."""

    run: RunInfo | None
    finished: bool
    claimed: Sequence[ClaimedRun] = ()
    #: the ending transaction asked for a next run (and found ``claimed``)
    next_claim_asked: bool = False

    @classmethod
    def of(cls, ended: Ended, *, finished: bool, next_claim_asked: bool) -> Outcome:
        return cls(ended.run, finished, ended.claimed, next_claim_asked)


def execute(
    claim: ClaimedRun,
    definition: WorkflowDef,
    *,
    store: Store,
    clock: _clock.Clock,
    lease_ms: int,
    on_context: Callable[[Context | None], None] = lambda _ctx: None,
    next_claim: Callable[[int], ClaimRequest | None] = lambda _now_ms: None,
) -> Outcome:
    """Execute the claimed run until it finishes, suspends or fails this attempt.

    ``on_context`` receives the context while it runs (and None after) so the caller can
    flag a cancellation seen by a lease renewal. ``next_claim(now_ms)`` says which runs
    to claim in the transaction that ends this attempt (None: claim nothing).
    """
    attempt = _Attempt(claim, definition, store, clock, lease_ms, next_claim)
    try:
        if claim.cancel_requested:
            return attempt.end(RunStatus.CANCELLED)
        return attempt.run(on_context)
    except LeaseLost:
        # Another worker took the run (our lease expired) or it was cancelled; whatever
        # we did not write is theirs to do.
        log.warning(
            "tickwork: lost the lease on run %s; leaving it to its new owner", claim.info.id
        )
        return Outcome(None, False)
    except StoreUnavailable as exc:
        # Nothing can be written: once the lease expires, a worker takes the run over.
        log.warning("tickwork: database unreachable while executing run %s: %s", claim.info.id, exc)
        return Outcome(None, False)
    except StoreError as exc:  # not transient (durable retries those): a refused value
        # Trying again would be refused again, run after run: end the run as failed,
        # saying why, then let the caller report the error (on_error).
        attempt.refused(exc)
        raise


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
    ) -> None:
        self.claim, self.definition, self.store = claim, definition, store
        self.clock, self.lease_ms, self.next_claim = clock, lease_ms, next_claim
        self.give_up_after = lease_ms / 2000

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
            )
            on_context(ctx)
            value = _call(definition, ctx)
            what = f"The result of workflow {info.workflow!r}"
            result = canonical_json(value, what=what, error=ResultError)
        except Suspend as suspended:
            return self.suspend(suspended)
        except CancelRequested:
            return self.end(RunStatus.CANCELLED)
        except AttemptTimedOut:
            return self.fail(f"TimeoutError: attempt {info.attempt} ran longer than its timeout")
        except Exception as exc:
            return self.fail(describe_error(exc))
        finally:
            on_context(None)
        return self.end(RunStatus.COMPLETED, result=result)

    def end(self, status: RunStatus, result: str | None = None) -> Outcome:
        """End the run for good as ``status``."""

        def write() -> Outcome:
            now = _clock.now_ms(self.clock)
            request = self.next_claim(now)
            ended = self.store.finish_run(
                run_id=self.claim.info.id,
                token=self.claim.lease_token,
                status=status,
                result_json=result,
                error=None,
                now_ms=now,
                then_claim=request,
                running=self.claim.info,
            )
            return Outcome.of(ended, finished=True, next_claim_asked=request is not None)

        return durable(write, give_up_after=self.give_up_after)

    def suspend(self, suspend: Suspend) -> Outcome:
        """Store the run as sleeping (or pending) until the suspension's time."""

        def write() -> Outcome:
            request = self.next_claim(_clock.now_ms(self.clock))
            ended = self.store.reschedule_run(
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

    def refused(self, exc: StoreError) -> None:
        """End the run as failed because the database refused its outcome."""
        error = storable_text(f"StoreError: the database refused this run's outcome: {exc}")

        def write() -> None:
            self.store.finish_run(
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

    def fail(self, error: str) -> Outcome:
        """Retry after the back-off while the policy allows, else fail the run."""

        def write() -> Outcome:
            now = _clock.now_ms(self.clock)
            return _failed_attempt(
                self.claim, self.definition, self.store, now, error, self.next_claim(now)
            )

        return durable(write, give_up_after=self.give_up_after)


def _call(definition: WorkflowDef, ctx: Context) -> Any:
    args = (ctx, ctx.input) if definition.takes_input else (ctx,)
    if definition.is_async:
        return asyncio.run(definition.fn(*args))
    return definition.fn(*args)


def _failed_attempt(
    claim: ClaimedRun,
    definition: WorkflowDef,
    store: Store,
    now_ms: int,
    error: str,
    then_claim: ClaimRequest | None,
) -> Outcome:
    """Retry after the back-off while the policy allows, else fail the run for good."""
    info = claim.info
    # A schedule may override the workflow's policy for its runs.
    retry = (
        definition.retry
        if claim.retry_json is None
        else Retry.from_json(json.loads(claim.retry_json))
    )
    if retry.allows_another(info.attempt):
        ended = store.reschedule_run(
            run_id=info.id,
            token=claim.lease_token,
            status=RunStatus.PENDING,
            available_ms=now_ms + retry.delay_ms(info.attempt),
            attempt=info.attempt + 1,
            error=error,
            new_attempt=True,
            then_claim=then_claim,
        )
        return Outcome.of(ended, finished=False, next_claim_asked=then_claim is not None)
    ended = store.finish_run(
        run_id=info.id,
        token=claim.lease_token,
        status=RunStatus.FAILED,
        result_json=None,
        error=error,
        now_ms=now_ms,
        then_claim=then_claim,
        running=info,
    )
    return Outcome.of(ended, finished=True, next_claim_asked=then_claim is not None)
