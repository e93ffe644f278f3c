"""How one execution of a workflow leaves early, and how what went wrong is stored.

Leaving the function early (to sleep, to wait for an event or for children, because the
run was cancelled or timed out) is done with ``BaseException`` subclasses, so that a
workflow's ``except Exception`` cannot swallow them (trio's ``Cancelled`` is the model);
the executor turns each into the run's next state.
"""

from __future__ import annotations

import traceback
from collections.abc import Callable
from typing import Any, TypeVar

from .._values import clock as _clock
from .._values.models import RunStatus
from .._values.records import NewRun
from ..errors import StoreError

__all__ = [
    "MAX_TRY_ERROR_CHARS",
    "AttemptTimedOut",
    "CancelRequested",
    "JoinSuspend",
    "StoreUnavailable",
    "Suspend",
    "WaitSuspend",
    "WorkerLost",
    "describe_error",
    "describe_traceback",
    "durable",
    "not_a_function",
    "storable_text",
]

T = TypeVar("T")


class Suspend(BaseException):
    """Leave the workflow now and resume it at ``available_ms`` with ``status``."""

    def __init__(self, available_ms: int, status: RunStatus) -> None:
        super().__init__(available_ms, status)
        self.available_ms = available_ms
        self.status = status


class WaitSuspend(Suspend):
    """Leave the workflow to wait for an event (``Context.wait_for_event``): the store
    looks back for one already emitted and, finding none, registers the wait (DESIGN §9)."""

    def __init__(
        self,
        *,
        names: tuple[str, ...],
        match: dict[str, Any] | None,
        since_ms: int,
        until_ms: int | None,
        step: str,
        seq: int,
        seen: frozenset[str],
        since_run: bool = True,
        after: int | None = None,
    ) -> None:
        super().__init__(until_ms or 0, RunStatus.WAITING)
        self.names, self.match, self.since_ms, self.until_ms = names, match, since_ms, until_ms
        self.step, self.seq, self.seen = step, seq, seen
        #: which events the look back takes, in the store's order (``NewWait``)
        self.since_run, self.after = since_run, after


class CancelRequested(BaseException):
    """The run was cancelled while running: stop at this step boundary."""


class AttemptTimedOut(BaseException):
    """The attempt ran past its workflow's ``timeout``."""


class StoreUnavailable(BaseException):
    """The database stayed unreachable: abandon the attempt (the lease will expire and
    the run be taken over), and never let the workflow swallow it."""


class WorkerLost(BaseException):
    """What ran at ``where`` (a step) lost its worker ``losses`` times in a row, reaching
    ``max_recoveries``: end the run as failed, without a retry, rather than hand the step
    another worker to kill."""

    def __init__(self, where: str, losses: int, limit: int) -> None:
        super().__init__(
            f"{where} lost its worker {losses} times in a row (max_recoveries={limit})"
        )
        self.losses, self.limit = losses, limit


def durable(call: Callable[[], T], *, give_up_after: float) -> T:
    """``call()``, tried again with back-off while the database is unreachable.

    A checkpoint write is idempotent, so repeating one whose commit may have gone
    through is safe. After ``give_up_after`` seconds, raise ``StoreUnavailable``.
    """
    deadline = _clock.monotonic() + give_up_after
    delay = 0.05
    while True:
        try:
            return call()
        except StoreError as exc:
            if not exc.transient:
                raise  # a value the database refused: it would refuse it again
            if _clock.monotonic() + delay > deadline:
                raise StoreUnavailable(str(exc)) from exc
            _clock.sleep(delay)
            delay = min(delay * 2, 2.0)


def describe_error(exc: BaseException) -> str:
    """How an exception is stored: "Type: message", as text every database can hold."""
    message = str(exc)
    text = f"{type(exc).__name__}: {message}" if message else type(exc).__name__
    return storable_text(text)


#: characters of a traceback kept: its end, where the exception was raised
MAX_TRACEBACK_CHARS = 8000
#: characters of a failed try's error kept (ten are kept per step): its start
MAX_TRY_ERROR_CHARS = 2000


def describe_traceback(exc: BaseException) -> str:
    """The exception's traceback as stored: its last ``MAX_TRACEBACK_CHARS`` characters."""
    text = "".join(traceback.format_exception(exc))
    if len(text) > MAX_TRACEBACK_CHARS:
        text = "…" + text[-MAX_TRACEBACK_CHARS:]
    return storable_text(text)


def not_a_function(name: str, value: object) -> str:
    """What ``ctx.step(name, value)`` is told when ``value`` is no function: most often the
    step's result, the function called too early (``ctx.step("x", f())``)."""
    kind = type(value).__name__
    article = "an" if kind[:1].lower() in "aeiou" else "a"
    got = "None" if value is None else f"{article} {kind}"
    return (
        f"ctx.step({name!r}, ...) needs a function to call, got {got} (the result of "
        f"calling it?): write ctx.step({name!r}, f) or ctx.step({name!r}, f, arg)"
    )


def storable_text(text: str) -> str:
    """``text`` with what a database column cannot hold written out as escapes: NUL
    (PostgreSQL refuses it in text) and lone surrogates (not UTF-8)."""
    if "\x00" in text:
        text = text.replace("\x00", "\\x00")
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        text = text.encode("utf-8", "backslashreplace").decode("utf-8")
    return text


class JoinSuspend(Suspend):
    """Leave the workflow to wait for its children (``ctx.wait``, ``ctx.map``): the store
    counts those not ended and, with any left, registers the parent's join (DESIGN §10).
    A map's ``children`` are inserted in the same transaction."""

    def __init__(
        self,
        *,
        kind: str,
        step: str,
        seq: int,
        child_ids: tuple[str, ...],
        until_ms: int | None,
        waiting_json: str,
        children: tuple[NewRun, ...] = (),
        prefix: str | None = None,
        released: int | None = None,
    ) -> None:
        super().__init__(until_ms or 0, RunStatus.WAITING)
        self.kind, self.step, self.seq, self.child_ids = kind, step, seq, child_ids
        self.until_ms, self.waiting_json = until_ms, waiting_json
        self.children, self.prefix, self.released = children, prefix, released
