"""The ``<name>_async`` twins of ``Engine``'s and ``Client``'s blocking calls: which
calls have one (``TWINNED``, the one list; the parity tests read it) and how a twin is
made (``twin``), put on both classes by ``with_twins``.

A twin runs its blocking method in a worker thread (``asyncio.to_thread``), so an
event loop never waits on the database or the network; it takes the same parameters
(type checkers see them, through ``ParamSpec``), returns the same result and raises the
same errors.
"""

from __future__ import annotations

import asyncio
import functools
from collections.abc import Callable, Coroutine
from typing import Any, Concatenate, ParamSpec, TypeVar

__all__ = ["TWINNED", "twin", "with_twins"]

# The calls that have an awaitable twin, on Engine and Client alike.
TWINNED = (
    "start", "get_run", "list_runs", "list_steps", "cancel",
    "schedule", "unschedule", "pause", "resume", "deactivate", "activate",
    "trigger", "run_now", "backfill", "get_schedule", "list_schedules", "schedule_history",
    "list_workers",
    "emit", "emit_event", "subscribe", "unsubscribe", "list_subscriptions",
    "subscription_history", "list_events", "get_event",
    "calendar", "get_calendar", "list_calendars", "delete_calendar", "calendar_holidays",
)  # fmt: skip

P = ParamSpec("P")
R = TypeVar("R")
S = TypeVar("S")
C = TypeVar("C", bound=type)


def twin(
    blocking: Callable[Concatenate[S, P], R],
) -> Callable[Concatenate[S, P], Coroutine[Any, Any, R]]:
    """``blocking`` as a coroutine method run in a worker thread (signature kept)."""

    @functools.wraps(blocking)
    async def run(self: S, /, *args: P.args, **kwargs: P.kwargs) -> R:
        return await asyncio.to_thread(blocking, self, *args, **kwargs)

    run.__name__ = f"{blocking.__name__}_async"
    run.__qualname__ = f"{blocking.__qualname__}_async"
    return run


def with_twins(cls: C) -> C:
    """``cls`` with ``<name>_async = twin(<name>)`` for every name ``TWINNED`` lists."""
    for name in TWINNED:
        setattr(cls, f"{name}_async", twin(getattr(cls, name)))
    return cls
