"""The API's request and response bodies as pydantic models.

Request models validate bodies (strictly: no type coercion, no unknown fields); response
models exist to draw the OpenAPI document (``openapi.py``), the responses themselves are
built by ``tickwork._wire``. The fuzz tests hold the two together: every response must
match its schema.
"""

from __future__ import annotations

import dataclasses
import enum
from datetime import date as Date
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

from .. import _spec
from .._business_days import OnHoliday
from .._cron_walk import DstGap, DstRepeat
from .._durations import bare_number_error
from .._event_flow import FlowDecision
from .._models import Decision, Overlap, RunStatus, ScheduleState
from .._retry import Retry

__all__ = [
    "INSTANT_OPTIONS",
    "REQUEST_MODELS",
    "RESPONSE_MODELS",
    "BackfillRequest",
    "Backfilled",
    "Calendar",
    "CalendarBody",
    "CalendarDeleted",
    "CalendarList",
    "CalendarYear",
    "CancelResult",
    "Deleted",
    "ErrorResponse",
    "HistoryList",
    "Preview",
    "Run",
    "RunDetail",
    "RunList",
    "Schedule",
    "ScheduleCreate",
    "ScheduleDefinition",
    "ScheduleList",
    "ScheduleStateChanged",
    "ScheduleWritten",
    "StartRun",
    "StateChange",
    "TriggerRequest",
    "Triggered",
    "WorkerList",
    "WorkflowList",
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
OutDuration = Annotated[
    str | None, Field(description='A duration string such as "1h30m"; null when unset.')
]
Instant = Annotated[datetime, Field(description="ISO 8601 in UTC, e.g. 2026-03-01T12:00:00.000Z")]

_BOUNDS = ("minimum", "maximum", "minLength", "maxLength", "pattern", "description")


def _spec_bound(annotation: Any) -> Any:
    """The bound ``_spec`` declares for a schedule option, shown in the body's schema.

    The spec enforces it when the body becomes one (400 with the spec's own message, as
    ``Engine.schedule`` says it), so the document and every face agree on one bound."""
    schema = TypeAdapter(annotation).json_schema()
    return Field(json_schema_extra={name: schema[name] for name in _BOUNDS if name in schema})


class _Request(BaseModel):
    model_config = ConfigDict(strict=True, extra="forbid")


class _Response(BaseModel):
    model_config = ConfigDict(extra="forbid")


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


# -- responses -------------------------------------------------------------------------


class ErrorBody(_Response):
    code: str = Field(description="The error class's stable code, e.g. CRON_ERROR.")
    message: str
    details: dict[str, Any] | None = Field(
        default=None, description="The error's attributes, e.g. a CronError's field."
    )


class ErrorResponse(_Response):
    error: ErrorBody


class Schedule(_Response):
    key: str
    workflow: str
    input: Any
    cron: str | None
    every: OutDuration
    timezone: str
    overlap: Overlap
    catchup: int | Literal["all"]
    jitter: OutDuration
    pool: str
    priority: int
    state: ScheduleState
    revision: int
    next_fire_at: Instant | None
    last_fire_at: Instant | None
    last_run_id: str | None
    last_run_status: RunStatus | None
    created_at: Instant
    updated_at: Instant
    note: str | None = Field(
        description="Why the schedule is in its state: its latest state change's note."
    )
    state_changed_at: Instant = Field(
        description="When its state last changed (its creation, if never since)."
    )
    pause_after_failures: int | None = Field(
        description="Failed runs in a row after which it pauses itself; null: never."
    )
    max_runs: int | None = Field(description="The most runs it starts; null: no limit.")
    runs_left: int | None = Field(
        description="How many more runs max_runs lets it start; null without max_runs."
    )
    deadline: OutDuration = Field(
        description="How long after its occurrence a run must have completed; null: none."
    )
    overdue_by: OutDuration = Field(
        description="How late the next occurrence is, undecided (active schedules only): "
        "the sign no worker serves it; null when it is not overdue."
    )
    dst_gap: DstGap = Field(description="Its DST policy for a skipped local time.")
    dst_repeat: DstRepeat = Field(description="Its DST policy for a repeated local time.")
    calendar: str | None = Field(description="Its business calendar; null: none.")
    on_holiday: OnHoliday = Field(description="What an occurrence on a day off does.")


class NotRegistered(_Response):
    """A declared schedule that is not registered because its calendar is not stored."""

    key: str
    calendar: str = Field(description="The calendar it waits for.")
    workers: list[str] = Field(
        description="The live workers holding it back (ids); none: only the serving app "
        "declares it."
    )
    reason: str = Field(description="Why it does not fire and how to fix it, in words.")


class ScheduleList(_Response):
    schedules: list[Schedule]
    not_registered: list[NotRegistered] = Field(
        description="Unfiltered: the declared schedules not registered because their "
        "calendar is not stored, by key (registered once it is); filtered: none."
    )


class ScheduleStateChanged(Schedule):
    changed: bool = Field(
        description="false: the schedule already was in that state (or cannot go there "
        "from its own); nothing was written, its note kept."
    )
    message: str = Field(description="What happened, for people: 'nightly: already paused...'")


class ScheduleWritten(_Response):
    key: str
    schedule: Schedule


class Deleted(_Response):
    key: str
    deleted: bool


class Triggered(_Response):
    key: str
    run_id: str
    started: bool
    status: RunStatus


class Backfilled(_Response):
    key: str
    run_ids: list[str] = Field(
        description="The run id of every occurrence decided, oldest first: started now, "
        "waiting its turn (buffer_all), or the run it already had."
    )
    count: int
    started: int = Field(description="How many of them it started (or queued to start).")
    already_had_runs: int = Field(description="How many of them had a run already.")


class HistoryEntry(_Response):
    key: str
    occurrence: Instant
    last_occurrence: Instant | None
    count: int
    decision: Decision
    reason: str
    run_id: str | None
    revision: int
    decided_at: Instant


class HistoryList(_Response):
    history: list[HistoryEntry]


class Run(_Response):
    id: str
    workflow: str
    version: str
    status: RunStatus
    input: Any
    result: Any
    error: str | None
    attempt: int
    priority: int
    pool: str
    schedule_key: str | None
    schedule_revision: int | None
    scheduled_for: Instant | None
    created_at: Instant
    started_at: Instant | None
    finished_at: Instant | None
    traceback: str | None = Field(
        description="Where a run that failed for good failed: the traceback's end."
    )


class StepTry(_Response):
    attempt: int
    error: str
    traceback: str | None
    started_at: Instant
    finished_at: Instant


class WaitingFor(_Response):
    names: list[str] = Field(description="The event names it waits for, the first of any.")
    match: dict[str, Any] | None = Field(
        description="The payload paths and values an event must have (null: any payload)."
    )
    until: Instant | None = Field(description="When it times out (null: never).")


class Step(_Response):
    run_id: str
    name: str
    kind: Literal["step", "sleep", "now", "event", "emit"]
    status: Literal["completed", "failed", "waiting"]
    result: Any
    error: str | None
    attempts: int
    started_at: Instant
    finished_at: Instant = Field(
        description="When the checkpoint was last written (a sleep and a wait are written "
        "as they begin: see ended_at)."
    )
    ended_at: Instant | None = Field(
        description="When it ended: a step when it finished, a sleep at its wake, a wait "
        "when its event came or it timed out; null while it sleeps or waits."
    )
    waiting_for: WaitingFor | None = Field(
        description="What a wait for an event waits for, while it waits (else null)."
    )
    tries: list[StepTry] = Field(
        description="Its failed tries, the last ten, oldest first, each with its traceback."
    )


class RunDetail(Run):
    steps: list[Step]


class RunList(_Response):
    runs: list[Run]
    next_before: str | None = Field(
        description="The id to pass as `before` for the next page, or null on the last one."
    )
    next_offset: int | None = Field(
        description="The offset of the next page, or null when this is the last one."
    )


class CancelResult(_Response):
    run_id: str
    cancelled: bool = Field(description="False when the run had already finished.")
    status: RunStatus


class RetryPolicy(_Response):
    max_attempts: int
    backoff: str
    factor: float
    max_backoff: str


class Workflow(_Response):
    name: str
    version: str
    pool: str
    priority: int
    concurrency: int | None
    timeout: OutDuration
    retry: RetryPolicy
    takes_input: bool
    input_schema: dict[str, Any] | None = Field(
        description="JSON Schema of the input annotation, when there is one."
    )


class WorkflowList(_Response):
    workflows: list[Workflow]


class Occurrence(_Response):
    utc: Instant
    local: datetime = Field(description="The same instant in the zone, with its UTC offset.")
    utc_offset: str
    dst: Literal["moved", "doubled"] | None = Field(
        default=None,
        description="Present when DST touched it: moved (its local time fell in a "
        "spring-forward gap), doubled (its local time repeats and runs at both instants).",
    )
    dst_wall: str | None = Field(
        default=None,
        description="Present with dst: the local time the expression named, "
        "YYYY-MM-DDTHH:MM:SS (one the zone skipped, or has twice).",
    )
    holiday: Literal["skipped", "moved"] | None = Field(
        default=None,
        description="Present when it falls on the calendar's day off: skipped (no run) or "
        "moved (its run starts at runs_at, under the occurrence's own id).",
    )
    holiday_reason: str | None = Field(
        default=None, description="Present with holiday: why, as the history would say it."
    )
    runs_at: Instant | None = Field(
        default=None, description="Present when the calendar moved it: where its run starts."
    )


class Preview(_Response):
    cron: str | None
    every: OutDuration
    timezone: str
    description: str
    occurrences: list[Occurrence]
    dst_skipped: list[str] | None = Field(
        default=None,
        description="Present when a DST gap left local times without a run (dst_gap=skip): "
        "those times, YYYY-MM-DDTHH:MM:SS, among the occurrences listed.",
    )
    calendar: str | None = Field(
        default=None, description="Present with ?calendar=: the calendar that decided."
    )
    on_holiday: Literal["skip", "next", "previous"] | None = Field(
        default=None, description="Present with ?calendar=: what it does on a day off."
    )


class Worker(_Response):
    id: str
    host: str
    pid: int
    pools: list[str]
    workflows: list[str]
    version: str = Field(description="The worker's tickwork version.")
    started_at: Instant
    last_seen: Instant = Field(description="Its last renewal.")
    alive: bool = Field(description="False once it missed three renewals, or stopped.")
    stopped_at: Instant | None = Field(description="When it stopped gracefully, if it did.")
    waiting_for_calendars: dict[str, str] = Field(
        description="The declared schedules it does not register because their calendar is "
        "not stored: key to calendar name (registered once the calendar is stored)."
    )


class WorkerList(_Response):
    workers: list[Worker]


class Event(_Response):
    id: str
    name: str
    payload: Any
    emitted_at: Instant
    started: list[str] = Field(description="The runs it started, one per subscription.")
    woke: list[str] = Field(description="The waiting runs it woke.")


class EventList(_Response):
    events: list[Event]


class Emitted(_Response):
    name: str
    id: str = Field(description="The event's id: the one given, or the one the engine made.")
    runs: list[str] = Field(description="The runs it started (the same again for an id).")
    woke: list[str] = Field(description="The waiting runs it woke (the same again for an id).")


class Subscription(_Response):
    key: str
    workflow: str
    name: str = Field(description="The event name it subscribes to.")
    match: dict[str, Any] | None
    input: dict[str, str] | None
    declared: bool = Field(description="Declared by @engine.workflow(on=...), not subscribe.")
    created_at: Instant
    debounce: OutDuration = Field(description="On(debounce=): one run once no event for so long.")
    debounce_max: OutDuration = Field(description="On(debounce_max=): a debounce's longest wait.")
    group_key: str | None = Field(
        description="On(key=): the payload path whose value picks the buffer (one per value)."
    )
    batch: int | None = Field(description="On(batch=): the most payloads one batch run gets.")
    batch_window: OutDuration = Field(
        description="On(batch_window=): a batch starts at the latest this long after its first."
    )


class SubscriptionList(_Response):
    subscriptions: list[Subscription]


class SubscriptionDecision(_Response):
    key: str
    decision: FlowDecision
    reason: str
    group: Any = Field(description="The value at the flow's key path (null without a key).")
    event_id: str | None = Field(description="The event decided on (a run's: its first).")
    run_id: str | None = Field(description="The run started, or the one the buffer will start.")
    count: int = Field(description="The events in the buffer.")
    due_at: Instant | None = Field(description="When the buffer's run starts at the latest.")
    decided_at: Instant


class SubscriptionHistory(_Response):
    history: list[SubscriptionDecision]


class Subscribed(_Response):
    key: str


class Unsubscribed(_Response):
    key: str
    removed: bool


class Calendar(_Response):
    name: str
    weekend: list[str] = Field(description="Day names in week order, e.g. SAT, SUN.")
    holidays: list[Date] = Field(description="The dates it lists, in order.")
    country: str | None = Field(description="Whose public holidays it adds.")
    subdivision: str | None
    updated_at: Instant


class CalendarList(_Response):
    calendars: list[Calendar]


class NamedHoliday(_Response):
    date: Date
    name: str = Field(description="The public holiday's name; '' for a date it lists.")


class CalendarYear(_Response):
    """A calendar with its holidays of one year (``tickwork calendars show --json``)."""

    name: str
    weekend: list[str]
    country: str | None
    subdivision: str | None
    updated_at: Instant
    calendar: str = Field(description="Its name again.")
    year: int
    holidays: list[NamedHoliday] = Field(
        description="Its holidays of the year in date order: listed and public."
    )


class CalendarDeleted(_Response):
    name: str
    deleted: bool


class Health(_Response):
    status: Literal["ok", "unavailable"]


RESPONSE_MODELS: tuple[type[BaseModel], ...] = (
    Calendar,
    CalendarDeleted,
    CalendarList,
    CalendarYear,
    CancelResult,
    Emitted,
    Event,
    EventList,
    Subscribed,
    Subscription,
    SubscriptionDecision,
    SubscriptionHistory,
    SubscriptionList,
    Unsubscribed,
    Backfilled,
    Deleted,
    ErrorResponse,
    Health,
    HistoryList,
    Preview,
    Run,
    RunDetail,
    RunList,
    Schedule,
    ScheduleList,
    ScheduleStateChanged,
    ScheduleWritten,
    Triggered,
    WorkerList,
    WorkflowList,
)
