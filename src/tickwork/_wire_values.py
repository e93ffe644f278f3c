"""Instants and durations as every wire format writes them (the HTTP API, its Client,
the CLI's ``--json``): ISO 8601 UTC with milliseconds and ``Z``; durations as ``"1h30m"``."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from ._durations import format_duration, parse_duration

__all__ = [
    "duration_from_wire",
    "duration_to_wire",
    "instant",
    "instant_from_wire",
    "required_instant",
]


def instant(value: datetime | None) -> str | None:
    """An aware datetime as ISO 8601 UTC with milliseconds and ``Z``."""
    if value is None:
        return None
    return value.astimezone(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def instant_from_wire(value: str | None) -> datetime | None:
    return None if value is None else datetime.fromisoformat(value).astimezone(UTC)


def duration_to_wire(value: timedelta | None) -> str | None:
    return None if value is None else format_duration(value)


def duration_from_wire(value: str | None) -> timedelta | None:
    return None if value is None else parse_duration(value)


def required_instant(value: str) -> datetime:
    when = instant_from_wire(value)
    assert when is not None
    return when
