"""The tests' timeline: instants counted in minutes from ``START`` (a FakeClock's start),
and the run id of a schedule's occurrence at one (as documented: the key, "@", the UTC
instant with milliseconds)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

START = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)


def at(minutes: float) -> datetime:
    """START plus some minutes."""
    return START + timedelta(minutes=minutes)


def run_id(key: str, when: datetime) -> str:
    """The run id of schedule ``key``'s occurrence at ``when``."""
    utc = when.astimezone(UTC)
    return f"{key}@{utc:%Y-%m-%dT%H:%M:%S}.{utc.microsecond // 1000:03d}Z"


def rid(minutes: float, key: str = "k") -> str:
    """The run id of schedule ``key``'s occurrence at START plus some minutes."""
    return run_id(key, at(minutes))
