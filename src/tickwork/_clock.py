"""The only module that reads wall time or sleeps.

Everything else takes "now" from a ``Clock`` so that ``tickwork.testing.FakeClock`` can
drive the whole engine (trio's ``MockClock`` is the model).
"""

from __future__ import annotations

import threading
import time
from datetime import UTC, datetime, timedelta
from typing import Protocol, runtime_checkable

__all__ = ["Clock", "SystemClock", "from_ms", "monotonic", "sleep", "to_ms", "wait"]


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
