"""Helpers for users' own tests: a clock you move by hand, and an app's engine run on it."""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable, Iterator
from datetime import datetime, timedelta

from ._engine import Engine
from ._values.clock import Clock, SystemClock
from ._values.durations import Duration, parse_duration
from .errors import ConfigError

__all__ = ["FakeClock", "engine_for_test"]


class FakeClock(Clock):
    """A clock that stands still until told to move.

    ``Engine(url, clock=FakeClock(start))`` uses it for every notion of "now": due
    schedules, run delays, durable sleeps, retry back-off and leases. A background worker
    waiting on it is woken whenever it moves.
    """

    def __init__(self, start: datetime) -> None:
        if start.tzinfo is None:
            raise ValueError("FakeClock needs an aware datetime, e.g. datetime(..., tzinfo=UTC)")
        self._now = start
        self._lock = threading.Lock()
        self._listeners: list[Callable[[], None]] = []

    def now(self) -> datetime:
        with self._lock:
            return self._now

    def advance(self, duration: Duration | timedelta) -> datetime:
        """Move forward by ``duration`` (any form ``parse_duration`` accepts)."""
        step = parse_duration(duration)
        with self._lock:
            self._now += step
            now = self._now
        self._notify()
        return now

    def set(self, when: datetime) -> datetime:
        """Jump to ``when`` (forward or back)."""
        if when.tzinfo is None:
            raise ValueError("FakeClock.set needs an aware datetime")
        with self._lock:
            self._now = when
        self._notify()
        return when

    def add_listener(self, listener: Callable[[], None]) -> None:
        """Call ``listener`` whenever the clock moves (workers use it to wake up)."""
        self._listeners.append(listener)

    def _notify(self) -> None:
        for listener in list(self._listeners):
            listener()

    def __repr__(self) -> str:
        return f"FakeClock({self._now.isoformat()})"


@contextlib.contextmanager
def engine_for_test(engine: Engine, *, clock: Clock | None = None) -> Iterator[Engine]:
    """``engine``'s workflows, schedules, calendars and settings on a private store in
    memory, on ``clock`` (default: a ``FakeClock`` standing at the current time), for a ``with``
    block; the store is gone at its end. ``engine`` itself is left as it is: its
    database is never opened. See ``Engine.for_test``.

    ``with engine_for_test(app.engine, clock=FakeClock(start)) as test_engine:`` then
    ``test_engine.sync_schedules()``, ``tick()``, ``start(...)``, ``run_until_idle()``,
    moving the clock in between: retries and sleeps wait on it, never in real time.
    """
    if not isinstance(engine, Engine):
        raise ConfigError(f"engine_for_test takes a tickwork.Engine, not {engine!r}")
    with engine.for_test(clock=clock or FakeClock(SystemClock().now())) as test_engine:
        yield test_engine
