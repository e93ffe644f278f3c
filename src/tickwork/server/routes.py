"""Every route of the API, declared once: its method, path, summary, parameters, body
and answers. ``api.py`` serves each with the handler named by its ``operation_id`` and
``openapi.py`` documents each from the same declaration, so the two cannot drift.

Paths are Starlette's (``{run_id:path}``: a run id may hold a '/'); the document shows
them without the converter.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from .._values.checks import MAX_LIMIT
from .._values.models import ScheduleAction

__all__ = ["ENDPOINTS", "REF", "Endpoint", "document_path", "json_answer", "ref"]

REF = "#/components/schemas/{model}"


@dataclass(frozen=True, slots=True)
class Endpoint:
    """One operation: ``operation_id`` also names the handler that serves it."""

    method: str
    path: str
    operation_id: str
    summary: str
    ok: dict[str, Any]  # the 200 answer
    params: tuple[dict[str, Any], ...] = ()
    body: str | None = None  # the request body's schema name
    body_required: bool = True
    errors: dict[str, dict[str, Any]] = field(default_factory=dict)


def document_path(path: str) -> str:
    """A Starlette path as the document writes it: ``/runs/{run_id}``."""
    return path.replace(":path", "")


def ref(name: str) -> dict[str, str]:
    return {"$ref": REF.format(model=name)}


def json_answer(name: str, description: str) -> dict[str, Any]:
    return {"description": description, "content": {"application/json": {"schema": ref(name)}}}


def _error(description: str) -> dict[str, Any]:
    return json_answer("ErrorResponse", description)


_BAD_PARAM = _error("A parameter is invalid (CONFIG_ERROR and its kind)")
_NOT_FOUND_SCHEDULE = _error("No such schedule (SCHEDULE_NOT_FOUND)")
_NOT_FOUND_RUN = _error("No such run (RUN_NOT_FOUND)")
_NOT_FOUND_CALENDAR = _error("No such calendar (CALENDAR_NOT_FOUND)")


def _path_param(name: str, description: str) -> dict[str, Any]:
    return {
        "name": name,
        "in": "path",
        "required": True,
        "description": description,
        "schema": {"type": "string", "minLength": 1},
    }


def _query(name: str, schema: dict[str, Any], description: str) -> dict[str, Any]:
    return {"name": name, "in": "query", "required": False, "description": description,
            "schema": schema}  # fmt: skip


_KEY = _path_param("key", "The schedule's key")
_RUN_ID = _path_param("run_id", "The run's id (percent-encode a '/' in it)")
_EVENT_ID = _path_param("event_id", "The event's id")
_SUBSCRIPTION = _path_param("key", "The subscription's key")
_CALENDAR = _path_param("name", "The calendar's name")
_LIMIT = _query(
    "limit", {"type": "integer", "minimum": 1, "maximum": MAX_LIMIT, "default": 100}, "How many"
)
_WRITTEN = json_answer("ScheduleWritten", "The schedule's key and the schedule as stored")
_REGISTER_ERRORS = {"400": _BAD_PARAM, "409": _error("Another definition (SCHEDULE_CONFLICT)")}

#: each state change's summary (a note may say why)
_STATE_CHANGES = {
    ScheduleAction.PAUSE: "Stop firing; catch up on resume",
    ScheduleAction.RESUME: "Fire again after a pause",
    ScheduleAction.DEACTIVATE: "Stop firing; never catch up",
    ScheduleAction.ACTIVATE: "Fire again, from now on",
}


def _state_change(action: ScheduleAction) -> Endpoint:
    return Endpoint(
        "POST",
        f"/schedules/{{key}}/{action}",
        f"{action}_schedule",
        f"{_STATE_CHANGES[action]} (a note may say why)",
        json_answer(
            "ScheduleStateChanged", "The schedule after the change, and whether it changed"
        ),
        params=(_KEY,),
        body="StateChange",
        body_required=False,
        errors={"400": _BAD_PARAM, "404": _NOT_FOUND_SCHEDULE},
    )


_SCHEDULES = (
    Endpoint(
        "GET",
        "/schedules",
        "list_schedules",
        "Every schedule, by key",
        json_answer("ScheduleList", "The schedules"),
        params=(
            _query("workflow", {"type": "string"}, "Only this workflow's"),
            _query(
                "state",
                {"type": "string", "enum": ["active", "paused", "inactive"]},
                "Only schedules in this state",
            ),
        ),
        errors={"400": _BAD_PARAM},
    ),
    Endpoint(
        "POST",
        "/schedules",
        "create_schedule",
        "Register a schedule (engine.schedule); without key, the key is derived",
        _WRITTEN,
        body="ScheduleCreate",
        errors=_REGISTER_ERRORS,
    ),
    Endpoint(
        "GET",
        "/schedules/{key}",
        "get_schedule",
        "One schedule",
        json_answer("Schedule", "The schedule"),
        params=(_KEY,),
        errors={"404": _NOT_FOUND_SCHEDULE},
    ),
    Endpoint(
        "PUT",
        "/schedules/{key}",
        "put_schedule",
        "Register the schedule with this key (engine.schedule)",
        _WRITTEN,
        params=(_KEY,),
        body="ScheduleDefinition",
        errors=_REGISTER_ERRORS,
    ),
    Endpoint(
        "DELETE",
        "/schedules/{key}",
        "delete_schedule",
        "Remove the schedule for the whole fleet (its runs stay)",
        json_answer("Deleted", "Removed"),
        params=(_KEY,),
        errors={"404": _NOT_FOUND_SCHEDULE},
    ),
    *(_state_change(action) for action in _STATE_CHANGES),
    Endpoint(
        "POST",
        "/schedules/{key}/trigger",
        "trigger_schedule",
        "Start the current occurrence now (idempotent; started false: the "
        "occurrence already had this run), or with new_run a new run now",
        json_answer("Triggered", "The run started, or the one the occurrence had"),
        params=(_KEY,),
        body="TriggerRequest",
        body_required=False,
        errors={"404": _NOT_FOUND_SCHEDULE},
    ),
    Endpoint(
        "POST",
        "/schedules/{key}/backfill",
        "backfill_schedule",
        "Start a run for every occurrence in [start, end), oldest first "
        "(idempotent by occurrence; at most 100,000); the schedule's next "
        "occurrence does not move",
        json_answer("Backfilled", "The run id of every occurrence, oldest first"),
        params=(_KEY,),
        body="BackfillRequest",
        errors={"400": _BAD_PARAM, "404": _NOT_FOUND_SCHEDULE},
    ),
    Endpoint(
        "GET",
        "/schedules/{key}/history",
        "schedule_history",
        "Every decision about the schedule's occurrences, newest first",
        json_answer("HistoryList", "The decisions"),
        params=(_KEY, _LIMIT),
        errors={"400": _BAD_PARAM, "404": _NOT_FOUND_SCHEDULE},
    ),
)

_RUNS = (
    Endpoint(
        "GET",
        "/runs",
        "list_runs",
        "Runs, newest first, a page at a time",
        json_answer("RunList", "One page of runs"),
        params=(
            _query("workflow", {"type": "string"}, "Only this workflow's runs"),
            _query("status", ref("RunStatus"), "Only runs in this status"),
            _query("schedule_key", {"type": "string"}, "Only this schedule's runs"),
            _query("parent", {"type": "string"}, "Only the child runs this run started"),
            _LIMIT,
            _query(
                "before",
                {"type": "string"},
                "Only runs after this one, newest first: pass the last page's "
                "next_before (pages stay stable while new runs arrive)",
            ),
            _query(
                "offset",
                {"type": "integer", "minimum": 0, "maximum": MAX_LIMIT - 1, "default": 0},
                f"Runs to skip (offset + limit at most {MAX_LIMIT})",
            ),
        ),
        errors={"400": _BAD_PARAM},
    ),
    Endpoint(
        "POST",
        "/runs",
        "start_run",
        "Start a run (engine.start); idempotent by run_id",
        json_answer("Run", "The run (an existing one when run_id was taken)"),
        body="StartRun",
        errors={"400": _BAD_PARAM},
    ),
    Endpoint(
        "GET",
        "/runs/{run_id:path}",
        "get_run",
        "One run with its steps",
        json_answer("RunDetail", "The run"),
        params=(_RUN_ID,),
        errors={"404": _NOT_FOUND_RUN},
    ),
    Endpoint(
        "POST",
        "/runs/{run_id:path}/cancel",
        "cancel_run",
        "Cancel a run: at once if pending or sleeping, at its next step if running",
        json_answer("CancelResult", "Whether it was cancelled now"),
        params=(_RUN_ID,),
        errors={"404": _NOT_FOUND_RUN},
    ),
)

_EVENTS = (
    Endpoint(
        "GET",
        "/events",
        "list_events",
        "Events, newest first, with the runs each started and woke",
        json_answer("EventList", "The events"),
        params=(_query("name", {"type": "string"}, "Only events of this name"), _LIMIT),
        errors={"400": _BAD_PARAM},
    ),
    Endpoint(
        "POST",
        "/events",
        "emit_event",
        "Emit an event (engine.emit): one run of each subscribed workflow, waiting "
        "runs woken, in one transaction; idempotent by id (a webhook can call it)",
        json_answer("Emitted", "The runs it started and the waiting runs it woke"),
        body="EmitEvent",
        errors={"400": _BAD_PARAM},
    ),
    Endpoint(
        "GET",
        "/events/{event_id}",
        "get_event",
        "One event, with the runs it started and woke",
        json_answer("Event", "The event"),
        params=(_EVENT_ID,),
        errors={"400": _BAD_PARAM, "404": _error("No such event (EVENT_NOT_FOUND)")},
    ),
    Endpoint(
        "GET",
        "/subscriptions",
        "list_subscriptions",
        "Every subscription, declared and made at run time, by key",
        json_answer("SubscriptionList", "The subscriptions"),
    ),
    Endpoint(
        "POST",
        "/subscriptions",
        "subscribe",
        "Subscribe a workflow to an event name (engine.subscribe); idempotent by key",
        json_answer("Subscribed", "The subscription's key"),
        body="Subscribe",
        errors={"400": _BAD_PARAM},
    ),
    Endpoint(
        "DELETE",
        "/subscriptions/{key}",
        "unsubscribe",
        "Remove a subscription",
        json_answer("Unsubscribed", "Whether there was one"),
        params=(_SUBSCRIPTION,),
        errors={"400": _BAD_PARAM},
    ),
    Endpoint(
        "GET",
        "/subscriptions/{key}/history",
        "subscription_history",
        "A debounced or batched subscription's decisions, newest first: each event "
        "debounced or batched, each run started and why, each buffer dropped",
        json_answer("SubscriptionHistory", "The decisions"),
        params=(_SUBSCRIPTION, _LIMIT),
        errors={"400": _BAD_PARAM},
    ),
)

#: business calendars (DESIGN §3): ``calendar_api.py``'s handlers
_CALENDARS = (
    Endpoint(
        "GET",
        "/calendars",
        "list_calendars",
        "Every business calendar, by name",
        json_answer("CalendarList", "The calendars"),
    ),
    Endpoint(
        "GET",
        "/calendars/{name}",
        "get_calendar",
        "One calendar; with year, its holidays that year (listed and public: a "
        "country's resolved and stored the first time)",
        {
            "description": "The calendar; with year, its holidays of that year",
            "content": {
                "application/json": {"schema": {"oneOf": [ref("Calendar"), ref("CalendarYear")]}}
            },
        },
        params=(
            _CALENDAR,
            _query(
                "year",
                {"type": "integer", "minimum": 1, "maximum": 9999},
                "Answer with its holidays of this year instead of the dates it lists",
            ),
        ),
        errors={"400": _BAD_PARAM, "404": _NOT_FOUND_CALENDAR},
    ),
    Endpoint(
        "PUT",
        "/calendars/{name}",
        "put_calendar",
        "Store the calendar (engine.calendar), replacing one of that name whole",
        json_answer("Calendar", "The calendar as stored"),
        params=(_CALENDAR,),
        body="CalendarBody",
        errors={
            "400": _error(
                "A value is invalid, or a country needs the server's holidays extra (CONFIG_ERROR)"
            )
        },
    ),
    Endpoint(
        "DELETE",
        "/calendars/{name}",
        "delete_calendar",
        "Delete the calendar; refused while schedules use it",
        json_answer("CalendarDeleted", "Deleted"),
        params=(_CALENDAR,),
        errors={
            "404": _NOT_FOUND_CALENDAR,
            "409": _error("Schedules use it (CALENDAR_IN_USE, naming them)"),
        },
    ),
)

_SERVER = (
    Endpoint(
        "GET",
        "/workflows",
        "list_workflows",
        "The workflows the server's engine registered, with their options",
        json_answer("WorkflowList", "The workflows"),
    ),
    Endpoint(
        "GET",
        "/workers",
        "list_workers",
        "Every worker seen within the last day, gone ones included, oldest first",
        json_answer("WorkerList", "The workers; alive false once one missed three renewals"),
    ),
    Endpoint(
        "GET",
        "/cron/preview",
        "preview_cadence",
        "Upcoming occurrences of a cadence, in words; nothing is registered",
        json_answer("Preview", "The occurrences"),
        params=(
            _query("cron", {"type": "string"}, "A cron expression (or every)"),
            _query("every", {"type": "string"}, "An interval: '90s', '1h30m' or ms"),
            _query("timezone", {"type": "string", "default": "UTC"}, "IANA zone"),
            _query(
                "count",
                {"type": "integer", "minimum": 1, "maximum": 1000, "default": 5},
                "How many occurrences",
            ),
            _query(
                "after",
                {"type": "string", "format": "date-time"},
                "Start after this instant (default: now)",
            ),
            _query(
                "dst_gap",
                {"type": "string", "enum": ["shift", "skip"], "default": "shift"},
                "A fixed time a DST gap skips: run at the gap's end, or not that day",
            ),
            _query(
                "dst_repeat",
                {"type": "string", "enum": ["first", "last", "both"], "default": "first"},
                "A fixed time a DST fall-back repeats: which of the two instants run",
            ),
            _query(
                "calendar",
                {"type": "string"},
                "A stored business calendar: nBD/LBD count its business days, and "
                "occurrences on its days off are marked (holiday, runs_at)",
            ),
            _query(
                "on_holiday",
                {"type": "string", "enum": ["skip", "next", "previous"], "default": "skip"},
                "What the calendar does with an occurrence on a day off",
            ),
        ),
        errors={"400": _BAD_PARAM},
    ),
    Endpoint(
        "GET",
        "/openapi.json",
        "openapi",
        "This document",
        {"description": "OpenAPI 3.1", "content": {"application/json": {"schema": {}}}},
    ),
)

#: in the document's order
ENDPOINTS: tuple[Endpoint, ...] = (*_SCHEDULES, *_RUNS, *_EVENTS, *_CALENDARS, *_SERVER)
