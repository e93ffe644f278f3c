"""Instants and durations as every wire format writes them (the HTTP API, its Client,
the CLI's ``--json``): ISO 8601 UTC with milliseconds and ``Z``; durations as ``"1h30m"``.

The value dataclasses annotate their fields with ``Instant`` and ``Length``, so one
pydantic ``TypeAdapter`` per dataclass (``form``) writes and reads its JSON whole: a shape
is declared once, by its dataclass, and its JSON is derived.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Annotated, Any, TypeVar

from pydantic import PlainSerializer, PlainValidator, TypeAdapter, WithJsonSchema

from .durations import format_duration, parse_duration

__all__ = [
    "Instant",
    "Length",
    "duration_from_wire",
    "duration_to_wire",
    "form",
    "from_json",
    "instant",
    "instant_from_wire",
    "required_instant",
    "to_json",
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


def _read_instant(value: Any) -> datetime:
    # a value built in Python is a datetime already; JSON brings the text
    return value if isinstance(value, datetime) else required_instant(value)


def _read_length(value: Any) -> timedelta:
    return value if isinstance(value, timedelta) else parse_duration(value)


#: an aware datetime; on the wire ``2026-03-01T12:00:00.000Z``
Instant = Annotated[
    datetime,
    PlainSerializer(instant, return_type=str, when_used="json"),
    PlainValidator(_read_instant),
    WithJsonSchema(
        {
            "type": "string",
            "format": "date-time",
            "description": "ISO 8601 in UTC, e.g. 2026-03-01T12:00:00.000Z",
        }
    ),
]
#: a length of time; on the wire a duration string such as ``"1h30m"``
Length = Annotated[
    timedelta,
    PlainSerializer(format_duration, return_type=str, when_used="json"),
    PlainValidator(_read_length),
    WithJsonSchema({"type": "string"}),
]


_FORMS: dict[type[Any], TypeAdapter[Any]] = {}
_T = TypeVar("_T")


def form(shape: type[Any]) -> TypeAdapter[Any]:
    """The one adapter of a value dataclass, built once (on the HTTP path, never per
    call): ``dump_python(value, mode="json")`` writes its JSON, ``validate_python(data)``
    reads it back (a field an older server does not send takes its default)."""
    adapter = _FORMS.get(shape)
    if adapter is None:  # two threads may both build it: the same adapter, harmless
        adapter = _FORMS[shape] = TypeAdapter(shape)
    return adapter


def from_json(shape: type[_T], data: Any) -> _T:
    """A value dataclass read back from its JSON form (the inverse of ``to_json``)."""
    value: _T = form(shape).validate_python(data)
    return value


def to_json(value: Any) -> dict[str, Any]:
    """A value dataclass's JSON form, derived from its fields."""
    wire: dict[str, Any] = form(type(value)).dump_python(value, mode="json")
    return wire
