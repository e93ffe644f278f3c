"""The only module that reads wall time or sleeps.

Everything else takes "now" from a ``Clock`` so that ``tickwork.testing.FakeClock`` can
drive the whole engine (trio's ``MockClock`` is the model).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Protocol, runtime_checkable

__all__ = [
    "Clock",
    "ReferenceClock",
    "SystemClock",
    "from_ms",
    "monotonic",
    "now_ms",
    "sleep",
    "to_ms",
    "wait",
]


@runtime_checkable
class Clock(Protocol):
    """A source of "now" as an aware UTC datetime."""

    def now(self) -> datetime: ...


class SystemClock:
    """The real clock."""

    def now(self) -> datetime:
        return datetime.now(UTC)

    def __repr__(self) -> str:
        return "SystemClock()"


_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_MS = timedelta(milliseconds=1)


def to_ms(when: datetime) -> int:
    """An aware datetime as UTC epoch milliseconds (how every store keeps instants).

    Integer arithmetic, so no float rounding: sub-millisecond parts are truncated.
    """
    if when.tzinfo is None:
        raise ValueError(f"naive datetime {when!r}: pass an aware datetime")
    return (when - _EPOCH) // _MS


def now_ms(clock: Clock) -> int:
    """``clock``'s "now" as UTC epoch milliseconds; the real clock's without a datetime
    (it is read several times per step)."""
    if type(clock) is SystemClock:
        return time.time_ns() // 1_000_000
    return to_ms(clock.now())


def from_ms(ms: int) -> datetime:
    """UTC epoch milliseconds as an aware UTC datetime."""
    return _EPOCH + ms * _MS


def monotonic() -> float:
    """Seconds on a clock that never goes back, for measuring how long things take."""
    return time.monotonic()


def sleep(seconds: float) -> None:
    """Block the calling thread (used only for connection back-off)."""
    time.sleep(seconds)


def wait(event: threading.Event, seconds: float) -> bool:
    """Wait until ``event`` is set or ``seconds`` pass; True when it was set."""
    return event.wait(max(0.0, seconds))


class ReferenceClock:
    """The local clock, corrected to a reference clock (a fleet's database server).

    Every worker of a fleet then agrees on "now" within the round trip of one query, so
    a machine whose clock runs ahead cannot fire an occurrence early or steal a lease.
    The offset is measured again every ``refresh`` seconds; if the reference cannot be
    reached, the last offset stays in use (at first, none).
    """

    def __init__(self, reference_ms: Callable[[], int], *, refresh: float = 30.0) -> None:
        self._reference_ms = reference_ms
        self._refresh = refresh
        self._offset_ms = 0
        self._synced_at: float | None = None
        self._lock = threading.Lock()

    def now(self) -> datetime:
        stale = self._synced_at is None or time.monotonic() - self._synced_at > self._refresh
        if stale and self._lock.acquire(blocking=False):
            try:
                self._sync()
            finally:
                self._lock.release()
        return datetime.now(UTC) + timedelta(milliseconds=self._offset_ms)

    def _sync(self) -> None:
        self._synced_at = time.monotonic()
        before = time.time()
        try:
            reference = self._reference_ms()
        except Exception:  # unreachable now: keep the last offset, try again later
            return
        after = time.time()
        self._offset_ms = round(reference - (before + after) * 500)

    def __repr__(self) -> str:
        return f"ReferenceClock(offset={self._offset_ms} ms)"
