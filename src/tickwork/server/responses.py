"""The API's response bodies as pydantic models, which exist to draw the OpenAPI
document (``openapi.py``): the responses themselves are the JSON ``_wire`` derives from
the value dataclasses. A value's model is drawn from its dataclass too (``_drawn``), so a
field added to one is in both with no edit here; only the document's words are here,
and the shapes that are no dataclass (a preview, a workflow, a list's envelope).

mypy cannot see a drawn model as a class: ``# type: ignore[valid-type]`` where one is a
field's type or a base.
"""

from __future__ import annotations

import dataclasses
from datetime import date as Date
from datetime import datetime
from typing import Annotated, Any, Literal, get_type_hints

from pydantic import BaseModel, ConfigDict, Field, create_model

from .._values import models as models
from .._values.event_flow import SubscriptionDecision as SubscriptionDecisionInfo
from .._values.models import RunStatus
from .._values.wire_values import Instant, Length

__all__ = [
    "RESPONSE_MODELS",
    "Backfilled",
    "Calendar",
    "CalendarDeleted",
    "CalendarList",
    "CalendarYear",
    "CancelResult",
    "Deleted",
    "Emitted",
    "ErrorBody",
    "ErrorResponse",
    "Event",
    "EventList",
    "Health",
    "HistoryEntry",
    "HistoryList",
    "NamedHoliday",
    "NotRegistered",
    "Occurrence",
    "Preview",
    "RetryPolicy",
    "Run",
    "RunDetail",
    "RunList",
    "Schedule",
    "ScheduleList",
    "ScheduleStateChanged",
    "ScheduleWritten",
    "Step",
    "StepTry",
    "Subscribed",
    "Subscription",
    "SubscriptionDecision",
    "SubscriptionHistory",
    "SubscriptionList",
    "Triggered",
    "Unsubscribed",
    "WaitingFor",
    "Worker",
    "WorkerList",
    "Workflow",
    "WorkflowList",
]

_LENGTH_WORDS = 'A duration string such as "1h30m"; null when unset.'
OutDuration = Annotated[str | None, Field(description=_LENGTH_WORDS)]


class _Response(BaseModel):
    model_config = ConfigDict(extra="forbid")


#: a field's words when it has none of its own
_UNSAID = {Length | None: _LENGTH_WORDS}


def _drawn(
    shape: type[Any],
    name: str,
    *,
    said: dict[str, str] | None = None,
    narrower: dict[str, Any] | None = None,
    added: dict[str, Any] | None = None,
) -> type[_Response]:
    """A response model drawn from the value dataclass whose JSON it describes (the JSON
    itself is derived from the same fields, ``_wire_values.form``): every field, in order,
    with its wire type; ``said`` the document's words for a field, ``narrower`` a type
    where the JSON is narrower than the field (a ``Literal`` for a ``str``), ``added``
    the fields the JSON adds (as ``create_model`` takes them)."""
    hints = get_type_hints(shape, include_extras=True)
    said, narrower = said or {}, narrower or {}
    fields: dict[str, Any] = {}
    for field in dataclasses.fields(shape):
        words = said.get(field.name, _UNSAID.get(hints[field.name]))
        fields[field.name] = (narrower.get(field.name, hints[field.name]), Field(description=words))
    model: type[_Response] = create_model(
        name, __base__=_Response, __module__=__name__, **fields, **(added or {})
    )
    return model


# -- responses -------------------------------------------------------------------------


class ErrorBody(_Response):
    code: str = Field(description="The error class's stable code, e.g. CRON_ERROR.")
    message: str
    details: dict[str, Any] | None = Field(
        default=None, description="The error's attributes, e.g. a CronError's field."
    )


class ErrorResponse(_Response):
    error: ErrorBody


Schedule = _drawn(
    models.ScheduleInfo,
    "Schedule",
    said={
        "note": "Why the schedule is in its state: its latest state change's note.",
        "state_changed_at": "When its state last changed (its creation, if never since).",
        "pause_after_failures": "Failed runs in a row after which it pauses itself; null: never.",
        "max_runs": "The most runs it starts; null: no limit.",
        "runs_left": "How many more runs max_runs lets it start; null without max_runs.",
        "deadline": "How long after its occurrence a run must have completed; null: none.",
        "overdue_by": "How late the next occurrence is, undecided (active schedules only): "
        "the sign no worker serves it; null when it is not overdue.",
        "dst_gap": "Its DST policy for a skipped local time.",
        "dst_repeat": "Its DST policy for a repeated local time.",
        "calendar": "Its business calendar; null: none.",
        "on_holiday": "What an occurrence on a day off does.",
    },
    # the store fills state_changed_at from created_at: the wire always has one
    narrower={"catchup": int | Literal["all"], "state_changed_at": Instant},
)


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
    schedules: list[Schedule]  # type: ignore[valid-type]
    not_registered: list[NotRegistered] = Field(
        description="Unfiltered: the declared schedules not registered because their "
        "calendar is not stored, by key (registered once it is); filtered: none."
    )


class ScheduleStateChanged(Schedule):  # type: ignore[misc,valid-type]
    changed: bool = Field(
        description="false: the schedule already was in that state (or cannot go there "
        "from its own); nothing was written, its note kept."
    )
    message: str = Field(description="What happened, for people: 'nightly: already paused...'")


class ScheduleWritten(_Response):
    key: str
    schedule: Schedule  # type: ignore[valid-type]


class Deleted(_Response):
    key: str
    deleted: bool


# the schedule's key too (_wire.triggered_to_wire)
Triggered = _drawn(models.Triggered, "Triggered", added={"key": (str, ...)})
# the schedule's key and how many (_wire.backfilled_to_wire)
Backfilled = _drawn(
    models.Backfilled,
    "Backfilled",
    said={
        "run_ids": "The run id of every occurrence decided, oldest first: started now, "
        "waiting its turn (buffer_all), or the run it already had.",
        "started": "How many of them it started (or queued to start).",
        "already_had_runs": "How many of them had a run already.",
    },
    added={"key": (str, ...), "count": (int, ...)},
)


HistoryEntry = _drawn(models.HistoryEntry, "HistoryEntry")


class HistoryList(_Response):
    history: list[HistoryEntry]  # type: ignore[valid-type]


Run = _drawn(
    models.RunInfo,
    "Run",
    said={"traceback": "Where a run that failed for good failed: the traceback's end."},
)


StepTry = _drawn(models.StepTry, "StepTry")


class WaitingFor(_Response):
    names: list[str] = Field(description="The event names it waits for, the first of any.")
    match: dict[str, Any] | None = Field(
        description="The payload paths and values an event must have (null: any payload)."
    )
    until: Instant | None = Field(description="When it times out (null: never).")


Step = _drawn(
    models.StepInfo,
    "Step",
    said={
        "finished_at": "When the checkpoint was last written (a sleep and a wait are "
        "written as they begin: see ended_at).",
        "tries": "Its failed tries, the last ten, oldest first, each with its traceback.",
    },
    narrower={
        "kind": Literal["step", "sleep", "now", "event", "emit"],
        "status": Literal["completed", "failed", "waiting"],
        "tries": list[StepTry],  # type: ignore[valid-type]
    },
    # what a run's page adds to each stored checkpoint (_wire.step_to_wire)
    added={
        "ended_at": (
            Instant | None,
            Field(
                description="When it ended: a step when it finished, a sleep at its wake, "
                "a wait when its event came or it timed out; null while it sleeps or waits."
            ),
        ),
        "waiting_for": (
            WaitingFor | None,
            Field(description="What a wait for an event waits for, while it waits (else null)."),
        ),
    },
)


class RunDetail(Run):  # type: ignore[misc,valid-type]
    steps: list[Step]  # type: ignore[valid-type]


class RunList(_Response):
    runs: list[Run]  # type: ignore[valid-type]
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


Worker = _drawn(
    models.WorkerInfo,
    "Worker",
    said={
        "version": "The worker's tickwork version.",
        "last_seen": "Its last renewal.",
        "alive": "False once it missed three renewals, or stopped.",
        "stopped_at": "When it stopped gracefully, if it did.",
        "waiting_for_calendars": "The declared schedules it does not register because "
        "their calendar is not stored: key to calendar name (registered once the calendar "
        "is stored).",
    },
    # stored as sorted (key, calendar) pairs, sent as an object (_wire.worker_to_wire)
    narrower={"waiting_for_calendars": dict[str, str]},
)


class WorkerList(_Response):
    workers: list[Worker]  # type: ignore[valid-type]


Event = _drawn(
    models.EventInfo,
    "Event",
    said={
        "started": "The runs it started, one per subscription.",
        "woke": "The waiting runs it woke.",
    },
)


class EventList(_Response):
    events: list[Event]  # type: ignore[valid-type]


class Emitted(_Response):
    name: str
    id: str = Field(description="The event's id: the one given, or the one the engine made.")
    runs: list[str] = Field(description="The runs it started (the same again for an id).")
    woke: list[str] = Field(description="The waiting runs it woke (the same again for an id).")


Subscription = _drawn(
    models.SubscriptionInfo,
    "Subscription",
    said={
        "name": "The event name it subscribes to.",
        "declared": "Declared by @engine.workflow(on=...), not subscribe.",
        "debounce": "On(debounce=): one run once no event for so long.",
        "debounce_max": "On(debounce_max=): a debounce's longest wait.",
        "group_key": "On(key=): the payload path whose value picks the buffer (one per value).",
        "batch": "On(batch=): the most payloads one batch run gets.",
        "batch_window": "On(batch_window=): a batch starts at the latest this long after "
        "its first.",
    },
)


class SubscriptionList(_Response):
    subscriptions: list[Subscription]  # type: ignore[valid-type]


SubscriptionDecision = _drawn(
    SubscriptionDecisionInfo,
    "SubscriptionDecision",
    said={
        "group": "The value at the flow's key path (null without a key).",
        "event_id": "The event decided on (a run's: its first).",
        "run_id": "The run started, or the one the buffer will start.",
        "count": "The events in the buffer.",
        "due_at": "When the buffer's run starts at the latest.",
    },
)


class SubscriptionHistory(_Response):
    history: list[SubscriptionDecision]  # type: ignore[valid-type]


class Subscribed(_Response):
    key: str


class Unsubscribed(_Response):
    key: str
    removed: bool


Calendar = _drawn(
    models.CalendarInfo,
    "Calendar",
    said={
        "weekend": "Day names in week order, e.g. SAT, SUN.",
        "holidays": "The dates it lists, in order.",
        "country": "Whose public holidays it adds.",
    },
)


class CalendarList(_Response):
    calendars: list[Calendar]  # type: ignore[valid-type]


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
