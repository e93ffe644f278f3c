"""The API's request and response bodies as pydantic models.

Request models validate bodies (strictly: no type coercion, no unknown fields); the
response models, which only draw the OpenAPI document, are ``responses.py``'s.
"""

from __future__ import annotations

import dataclasses
import enum
from datetime import datetime, timedelta
from types import UnionType
from typing import Annotated, Any, Literal, Union, get_args, get_origin, get_type_hints

from pydantic import (
    AwareDatetime,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    TypeAdapter,
    create_model,
)

from .._rules import spec as _spec
from .._values.durations import bare_number_error
from .._values.models import Overlap
from .._values.retry import Retry

__all__ = [
    "INSTANT_OPTIONS",
    "REQUEST_MODELS",
    "BackfillRequest",
    "CalendarBody",
    "ScheduleCreate",
    "ScheduleDefinition",
    "StartRun",
    "StateChange",
    "TriggerRequest",
]

INT64_MIN = -(2**63)
INT64_MAX = 2**63 - 1


def _integral(value: Any) -> Any:
    """JSON Schema's integers include 3.0: take it as 3 (strict mode would refuse it)."""
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return value


Integer = Annotated[int, BeforeValidator(_integral)]
Int64 = Annotated[int, Field(ge=INT64_MIN, le=INT64_MAX), BeforeValidator(_integral)]


def _unit_given(value: Any) -> Any:
    """A JSON number where a duration goes is refused with both ways it could be read
    (a ``ConfigError`` is a ``ValueError``: pydantic reports its message)."""
    if isinstance(value, int | float) and not isinstance(value, bool):
        raise bare_number_error(value)
    return value


#: a length of time: "1h30m", or {"hours": 1, "minutes": 30}; never a bare number
DurationIn = Annotated[
    str | dict[str, int | float],
    BeforeValidator(_unit_given),
    Field(
        description='A string such as "1h30m" or "500ms", or an object such as '
        '{"hours": 1, "minutes": 30}. A bare number is refused (seconds or milliseconds?).',
    ),
]

#: read by ``datetime.fromisoformat``, so offsets with seconds (``+05:53:28``) are fine
InstantIn = Annotated[
    str,
    Field(
        json_schema_extra={"format": "date-time"},
        description="ISO 8601 with a UTC offset, e.g. 2026-03-01T09:00:00+01:00",
    ),
]

_BOUNDS = ("minimum", "maximum", "minLength", "maxLength", "pattern", "description")


def _spec_bound(annotation: Any) -> Any:
    """The bound ``_spec`` declares for a schedule option, shown in the body's schema.

    The spec enforces it when the body becomes one (400 with the spec's own message, as
    ``Engine.schedule`` says it), so the document and every face agree on one bound."""
    schema = TypeAdapter(annotation).json_schema()
    return Field(json_schema_extra={name: schema[name] for name in _BOUNDS if name in schema})


class _Request(BaseModel):
    model_config = ConfigDict(strict=True, extra="forbid")


# -- requests --------------------------------------------------------------------------


class RetryBody(_Request):
    """A retry policy: ``tickwork.Retry``'s arguments."""

    max_attempts: Int64 = 3
    backoff: DurationIn = "1s"
    factor: Annotated[float, Field(allow_inf_nan=False)] = 2.0
    max_backoff: DurationIn = "5m"


def _body_type(annotation: Any) -> Any:
    """A spec field's type as a JSON body carries it, with the spec's bound in its schema:
    a duration as "1h30m" or a table, an instant as ISO 8601, a retry policy as its
    table, a number or a name with its bound; an enum, a literal, a bool or any JSON as
    they are. The spec converts and checks the values when the body becomes one."""
    if annotation is Any:
        return Any
    origin, members = get_origin(annotation), get_args(annotation)
    if origin is Annotated:
        base = members[0]
        if get_origin(base) in (Union, UnionType):  # catchup: a bounded int or "all"
            return _body_type(base)
        if base is int:
            return Annotated[Integer, _spec_bound(annotation)]
        if base is str:
            return Annotated[str, _spec_bound(annotation)]
        return _body_type(base)
    if origin in (Union, UnionType):
        return Union[tuple(_body_type(member) for member in members)]  # noqa: UP007
    if origin is Literal or annotation in (bool, type(None), int, str):
        return annotation
    if isinstance(annotation, type) and issubclass(annotation, enum.Enum):
        return annotation
    by_type = {timedelta: DurationIn, datetime: InstantIn, AwareDatetime: InstantIn}
    if annotation in by_type:
        return by_type[annotation]
    if annotation is Retry:
        return RetryBody | None
    raise TypeError(f"no JSON form for a schedule option of type {annotation!r}")


def _definition_model() -> type[_Request]:
    """``ScheduleDefinition``: ``engine.schedule``'s arguments but the key, one body field
    per spec field (its type ``_body_type``'s, its default the spec's), so an option
    added to the spec is in the body and its schema with no edit here."""
    hints = get_type_hints(_spec.ScheduleSpec, include_extras=True)
    body: dict[str, Any] = {}
    for field in dataclasses.fields(_spec.ScheduleSpec):
        if field.name == "key":
            continue
        default = field.default
        if field.name == "workflow":
            default = ...  # required in a body: nothing binds it later
        elif isinstance(default, enum.Enum):
            default = default.value
        typed = _body_type(hints[field.name])
        if field.name == "workflow":
            typed = _body_type(get_args(hints[field.name])[0])  # not None
        body[field.name] = (typed, default)
    return create_model(
        "ScheduleDefinition",
        __base__=_Request,
        __doc__="``engine.schedule``'s arguments but the key: exactly one of ``every`` and "
        "``cron``.",
        __module__=__name__,
        **body,
    )


ScheduleDefinition = _definition_model()
#: the options a body gives as ISO 8601 text, read into instants before the spec takes them
INSTANT_OPTIONS = frozenset(
    name
    for name, field in ScheduleDefinition.model_fields.items()
    if InstantIn in (field.annotation, *get_args(field.annotation))
)


class ScheduleCreate(ScheduleDefinition):  # type: ignore[misc,valid-type]
    """A schedule to register; without ``key``, the key is derived from the definition."""

    key: Annotated[str, _spec_bound(_spec.Key)] | None = None


class StartRun(_Request):
    """``engine.start``'s arguments."""

    workflow: str
    input: Any = None
    run_id: str | None = None
    priority: Int64 | None = None
    pool: str | None = None
    delay: DurationIn | None = None


class EmitEvent(_Request):
    """``engine.emit``'s arguments: the event's name, its JSON payload, its id (emitting
    the same id again starts nothing new)."""

    name: str
    payload: Any = None
    id: str | None = None


class Subscribe(_Request):
    """``engine.subscribe``'s arguments: ``match`` maps dotted payload paths to values."""

    workflow: str
    name: str
    match: dict[str, Any] | None = None
    key: str | None = None


class TriggerRequest(_Request):
    """``engine.trigger``'s options (the body may be left out)."""

    new_run: bool = False


class BackfillRequest(_Request):
    """``engine.backfill``'s arguments: every occurrence in ``[start, end)`` gets a run."""

    start: InstantIn
    end: InstantIn
    overlap: Overlap | None = Field(
        default=None,
        description="Overrides the schedule's overlap for these runs: buffer_all runs them "
        "one by one, allow all at once; null: the schedule's own.",
    )


class StateChange(_Request):
    """A state change's note, saying why (the body may be left out)."""

    note: str | None = Field(
        default=None,
        description="Why: kept as the schedule's note and in its history (at most 1,000 "
        "characters, no control characters).",
    )


class CalendarBody(_Request):
    """``engine.calendar``'s arguments but the name (the path's): checked as it checks
    them, so a bad date, day name or country is a 400 and nothing is stored."""

    holidays: list[str] = Field(default_factory=list, description="Dates it lists, YYYY-MM-DD.")
    country: str | None = Field(
        default=None,
        description="Add this country's public holidays (ISO 3166 code, e.g. GB); needs "
        "the server's holidays extra: pip install 'tickwork[holidays]'.",
    )
    subdivision: str | None = Field(default=None, description="The country's, e.g. ENG.")
    weekend: list[str] = Field(
        default_factory=lambda: ["SAT", "SUN"], description="Day names: not business days."
    )


REQUEST_MODELS: tuple[type[BaseModel], ...] = (
    BackfillRequest,
    CalendarBody,
    EmitEvent,
    ScheduleCreate,
    ScheduleDefinition,
    StartRun,
    StateChange,
    Subscribe,
    TriggerRequest,
)
