"""One attempt of one run: call the workflow and store what came of it."""

from __future__ import annotations

import asyncio
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
)
from ._ids import canonical_json
from ._models import RunInfo, RunStatus
from ._registry import WorkflowDef
from ._retry import Retry
from ._store import ClaimedRun, ClaimRequest, Ended, LeaseLost, Store

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
    info = claim.info
    token = claim.lease_token

    def now_ms() -> int:
        return _clock.now_ms(clock)

    give_up = lease_ms / 2000  # keep trying through a database blip, not past the lease

    def finish(status: RunStatus, result: str | None = None, error: str | None = None) -> Outcome:
        def write() -> Outcome:
            now = now_ms()
            request = next_claim(now)
            ended = store.finish_run(
                run_id=info.id,
                token=token,
                status=status,
                result_json=result,
                error=error,
                now_ms=now,
                then_claim=request,
                running=info,
            )
            return Outcome.of(ended, finished=True, next_claim_asked=request is not None)

        return durable(write, give_up_after=give_up)

    def failed(error: str) -> Outcome:
        def write() -> Outcome:
            now = now_ms()
            return _failed_attempt(claim, definition, store, now, error, next_claim(now))

        return durable(write, give_up_after=give_up)

    try:
        if claim.cancel_requested:
            return finish(RunStatus.CANCELLED)
        try:
            # Inside the try: an input the current code cannot load fails the attempt.
            ctx = Context(
                claim=claim,
                definition=definition,
                store=store,
                clock=clock,
                lease_ms=lease_ms,
                input=definition.load_input(info.input),
            )
            on_context(ctx)
            value = _call(definition, ctx)
            result = canonical_json(value, what=f"The result of workflow {info.workflow!r}")
        except Suspend as suspended:
            suspend = suspended  # the lambda below may run after the except clause's name is gone

            def write() -> Outcome:
                request = next_claim(now_ms())
                ended = store.reschedule_run(
                    run_id=info.id,
                    token=token,
                    status=suspend.status,
                    available_ms=suspend.available_ms,
                    attempt=info.attempt,
                    error=None,
                    new_attempt=False,
                    then_claim=request,
                )
                return Outcome.of(ended, finished=False, next_claim_asked=request is not None)

            return durable(write, give_up_after=give_up)
        except CancelRequested:
            return finish(RunStatus.CANCELLED)
        except AttemptTimedOut:
            error = f"TimeoutError: attempt {info.attempt} ran longer than its timeout"
            return failed(error)
        except Exception as exc:
            return failed(describe_error(exc))
        finally:
            on_context(None)
        return finish(RunStatus.COMPLETED, result=result)
    except LeaseLost:
        # Another worker took the run (our lease expired) or it was cancelled; whatever
        # we did not write is theirs to do.
        log.warning("tickwork: lost the lease on run %s; leaving it to its new owner", info.id)
        return Outcome(None, False)
    except StoreUnavailable as exc:
        # Nothing can be written: once the lease expires, a worker takes the run over.
        log.warning("tickwork: database unreachable while executing run %s: %s", info.id, exc)
        return Outcome(None, False)


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
