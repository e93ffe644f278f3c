"""The OpenAPI 3.1 document of the API, served at ``/api/v1/openapi.json``.

Paths are written here, one per route of ``api.py`` (a test checks that the two agree);
body schemas are generated from the pydantic models of ``schemas.py``.
"""

from __future__ import annotations

import copy
import functools
from typing import Any

from pydantic.json_schema import models_json_schema

from .._registry import MAX_LIMIT
from . import schemas

__all__ = ["PREFIX", "openapi_document"]

PREFIX = "/api/v1"
_REF = "#/components/schemas/{model}"


def _ref(name: str) -> dict[str, str]:
    return {"$ref": _REF.format(model=name)}


def _json(name: str, description: str) -> dict[str, Any]:
    return {"description": description, "content": {"application/json": {"schema": _ref(name)}}}


def _error(description: str) -> dict[str, Any]:
    return _json("ErrorResponse", description)


_BAD_PARAM = _error("A parameter is invalid (CONFIG_ERROR and its kind)")
_UNAUTHORIZED = _error("No live API key (UNAUTHORIZED)")
_NOT_FOUND_SCHEDULE = _error("No such schedule (SCHEDULE_NOT_FOUND)")
_NOT_FOUND_RUN = _error("No such run (RUN_NOT_FOUND)")
_NOT_FOUND_CALENDAR = _error("No such calendar (CALENDAR_NOT_FOUND)")
_UNREADABLE = _error("The body is not a JSON object (MALFORMED_BODY) or does not fit its schema")
_TOO_LARGE = _error("The body is larger than 1 MiB (PAYLOAD_TOO_LARGE)")
_STORE = _error("The database failed (STORE_ERROR)")
_NO_ROUTE = _error("No such route (NOT_FOUND)")


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
_LIMIT = _query(
    "limit", {"type": "integer", "minimum": 1, "maximum": MAX_LIMIT, "default": 100}, "How many"
)


def _operation(
    operation_id: str,
    summary: str,
    ok: dict[str, Any],
    *,
    params: list[dict[str, Any]] | None = None,
    body: str | None = None,
    body_required: bool = True,
    errors: dict[str, dict[str, Any]] | None = None,
) -> dict[str, Any]:
    # Any path may fail to route (a newline in a key, say): 404 NOT_FOUND everywhere.
    responses: dict[str, Any] = {
        "200": ok,
        "401": _UNAUTHORIZED,
        "404": _NO_ROUTE,
        "503": _STORE,
    }
    if body is not None:
        responses.update({"413": _TOO_LARGE, "422": _UNREADABLE})
    responses.update(errors or {})
    operation: dict[str, Any] = {
        "operationId": operation_id,
        "summary": summary,
        "responses": dict(sorted(responses.items())),
    }
    if params:
        operation["parameters"] = params
    if body is not None:
        operation["requestBody"] = {
            "required": body_required,
            "content": {"application/json": {"schema": _ref(body)}},
        }
    return operation


def _state_change(action: str, summary: str) -> dict[str, Any]:
    return {
        "post": _operation(
            f"{action}_schedule",
            f"{summary} (a note may say why)",
            _json("ScheduleStateChanged", "The schedule after the change, and whether it changed"),
            params=[_KEY],
            body="StateChange",
            body_required=False,
            errors={"400": _BAD_PARAM, "404": _NOT_FOUND_SCHEDULE},
        )
    }


def _paths() -> dict[str, Any]:
    schedule_ok = _json("ScheduleWritten", "The schedule's key and the schedule as stored")
    register_errors = {"400": _BAD_PARAM, "409": _error("Another definition (SCHEDULE_CONFLICT)")}
    return {
        "/schedules": {
            "get": _operation(
                "list_schedules",
                "Every schedule, by key",
                _json("ScheduleList", "The schedules"),
                params=[
                    _query("workflow", {"type": "string"}, "Only this workflow's"),
                    _query(
                        "state",
                        {"type": "string", "enum": ["active", "paused", "inactive"]},
                        "Only schedules in this state",
                    ),
                ],
                errors={"400": _BAD_PARAM},
            ),
            "post": _operation(
                "create_schedule",
                "Register a schedule (engine.schedule); without key, the key is derived",
                schedule_ok,
                body="ScheduleCreate",
                errors=register_errors,
            ),
        },
        "/schedules/{key}": {
            "get": _operation(
                "get_schedule",
                "One schedule",
                _json("Schedule", "The schedule"),
                params=[_KEY],
                errors={"404": _NOT_FOUND_SCHEDULE},
            ),
            "put": _operation(
                "put_schedule",
                "Register the schedule with this key (engine.schedule)",
                schedule_ok,
                params=[_KEY],
                body="ScheduleDefinition",
                errors=register_errors,
            ),
            "delete": _operation(
                "delete_schedule",
                "Remove the schedule for the whole fleet (its runs stay)",
                _json("Deleted", "Removed"),
                params=[_KEY],
                errors={"404": _NOT_FOUND_SCHEDULE},
            ),
        },
        "/schedules/{key}/pause": _state_change("pause", "Stop firing; catch up on resume"),
        "/schedules/{key}/resume": _state_change("resume", "Fire again after a pause"),
        "/schedules/{key}/deactivate": _state_change("deactivate", "Stop firing; never catch up"),
        "/schedules/{key}/activate": _state_change("activate", "Fire again, from now on"),
        "/schedules/{key}/trigger": {
            "post": _operation(
                "trigger_schedule",
                "Start the current occurrence now (idempotent; started false: the "
                "occurrence already had this run), or with new_run a new run now",
                _json("Triggered", "The run started, or the one the occurrence had"),
                params=[_KEY],
                body="TriggerRequest",
                body_required=False,
                errors={"404": _NOT_FOUND_SCHEDULE},
            )
        },
        "/schedules/{key}/backfill": {
            "post": _operation(
                "backfill_schedule",
                "Start a run for every occurrence in [start, end), oldest first "
                "(idempotent by occurrence; at most 100,000); the schedule's next "
                "occurrence does not move",
                _json("Backfilled", "The run id of every occurrence, oldest first"),
                params=[_KEY],
                body="BackfillRequest",
                errors={"400": _BAD_PARAM, "404": _NOT_FOUND_SCHEDULE},
            )
        },
        "/schedules/{key}/history": {
            "get": _operation(
                "schedule_history",
                "Every decision about the schedule's occurrences, newest first",
                _json("HistoryList", "The decisions"),
                params=[_KEY, _LIMIT],
                errors={"400": _BAD_PARAM, "404": _NOT_FOUND_SCHEDULE},
            )
        },
        "/runs": {
            "get": _operation(
                "list_runs",
                "Runs, newest first, a page at a time",
                _json("RunList", "One page of runs"),
                params=[
                    _query("workflow", {"type": "string"}, "Only this workflow's runs"),
                    _query("status", _ref("RunStatus"), "Only runs in this status"),
                    _query("schedule_key", {"type": "string"}, "Only this schedule's runs"),
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
                ],
                errors={"400": _BAD_PARAM},
            ),
            "post": _operation(
                "start_run",
                "Start a run (engine.start); idempotent by run_id",
                _json("Run", "The run (an existing one when run_id was taken)"),
                body="StartRun",
                errors={"400": _BAD_PARAM},
            ),
        },
        "/runs/{run_id}": {
            "get": _operation(
                "get_run",
                "One run with its steps",
                _json("RunDetail", "The run"),
                params=[_RUN_ID],
                errors={"404": _NOT_FOUND_RUN},
            )
        },
        "/runs/{run_id}/cancel": {
            "post": _operation(
                "cancel_run",
                "Cancel a run: at once if pending or sleeping, at its next step if running",
                _json("CancelResult", "Whether it was cancelled now"),
                params=[_RUN_ID],
                errors={"404": _NOT_FOUND_RUN},
            )
        },
        "/events": {
            "get": _operation(
                "list_events",
                "Events, newest first, with the runs each started and woke",
                _json("EventList", "The events"),
                params=[_query("name", {"type": "string"}, "Only events of this name"), _LIMIT],
                errors={"400": _BAD_PARAM},
            ),
            "post": _operation(
                "emit_event",
                "Emit an event (engine.emit): one run of each subscribed workflow, waiting "
                "runs woken, in one transaction; idempotent by id (a webhook can call it)",
                _json("Emitted", "The runs it started and the waiting runs it woke"),
                body="EmitEvent",
                errors={"400": _BAD_PARAM},
            ),
        },
        "/events/{event_id}": {
            "get": _operation(
                "get_event",
                "One event, with the runs it started and woke",
                _json("Event", "The event"),
                params=[_path_param("event_id", "The event's id")],
                errors={"400": _BAD_PARAM, "404": _error("No such event (EVENT_NOT_FOUND)")},
            )
        },
        "/subscriptions": {
            "get": _operation(
                "list_subscriptions",
                "Every subscription, declared and made at run time, by key",
                _json("SubscriptionList", "The subscriptions"),
            ),
            "post": _operation(
                "subscribe",
                "Subscribe a workflow to an event name (engine.subscribe); idempotent by key",
                _json("Subscribed", "The subscription's key"),
                body="Subscribe",
                errors={"400": _BAD_PARAM},
            ),
        },
        "/subscriptions/{key}": {
            "delete": _operation(
                "unsubscribe",
                "Remove a subscription",
                _json("Unsubscribed", "Whether there was one"),
                params=[_path_param("key", "The subscription's key")],
                errors={"400": _BAD_PARAM},
            )
        },
        "/subscriptions/{key}/history": {
            "get": _operation(
                "subscription_history",
                "A debounced or batched subscription's decisions, newest first: each event "
                "debounced or batched, each run started and why, each buffer dropped",
                _json("SubscriptionHistory", "The decisions"),
                params=[_path_param("key", "The subscription's key"), _LIMIT],
                errors={"400": _BAD_PARAM},
            )
        },
        **_calendar_paths(),
        "/workflows": {
            "get": _operation(
                "list_workflows",
                "The workflows the server's engine registered, with their options",
                _json("WorkflowList", "The workflows"),
            )
        },
        "/workers": {
            "get": _operation(
                "list_workers",
                "Every worker seen within the last day, gone ones included, oldest first",
                _json("WorkerList", "The workers; alive false once one missed three renewals"),
            )
        },
        "/cron/preview": {
            "get": _operation(
                "preview_cadence",
                "Upcoming occurrences of a cadence, in words; nothing is registered",
                _json("Preview", "The occurrences"),
                params=[
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
                ],
                errors={"400": _BAD_PARAM},
            )
        },
        "/openapi.json": {
            "get": _operation(
                "openapi",
                "This document",
                {"description": "OpenAPI 3.1", "content": {"application/json": {"schema": {}}}},
            )
        },
    }


def _calendar_paths() -> dict[str, Any]:
    """Business calendars (DESIGN §3): ``calendar_api.py``'s routes."""
    name = _path_param("name", "The calendar's name")
    year = _query(
        "year",
        {"type": "integer", "minimum": 1, "maximum": 9999},
        "Answer with its holidays of this year instead of the dates it lists",
    )
    one_or_year = {
        "description": "The calendar; with year, its holidays of that year",
        "content": {
            "application/json": {"schema": {"oneOf": [_ref("Calendar"), _ref("CalendarYear")]}}
        },
    }
    return {
        "/calendars": {
            "get": _operation(
                "list_calendars",
                "Every business calendar, by name",
                _json("CalendarList", "The calendars"),
            )
        },
        "/calendars/{name}": {
            "get": _operation(
                "get_calendar",
                "One calendar; with year, its holidays that year (listed and public: a "
                "country's resolved and stored the first time)",
                one_or_year,
                params=[name, year],
                errors={"400": _BAD_PARAM, "404": _NOT_FOUND_CALENDAR},
            ),
            "put": _operation(
                "put_calendar",
                "Store the calendar (engine.calendar), replacing one of that name whole",
                _json("Calendar", "The calendar as stored"),
                params=[name],
                body="CalendarBody",
                errors={
                    "400": _error(
                        "A value is invalid, or a country needs the server's "
                        "holidays extra (CONFIG_ERROR)"
                    )
                },
            ),
            "delete": _operation(
                "delete_calendar",
                "Delete the calendar; refused while schedules use it",
                _json("CalendarDeleted", "Deleted"),
                params=[name],
                errors={
                    "404": _NOT_FOUND_CALENDAR,
                    "409": _error("Schedules use it (CALENDAR_IN_USE, naming them)"),
                },
            ),
        },
    }


def _outside_paths() -> dict[str, Any]:
    """``/healthz`` and ``/metrics``, served beside the API rather than under it."""
    metrics = _operation(
        "metrics",
        "Prometheus metrics",
        {"description": "Prometheus text format", "content": {"text/plain": {"schema": {}}}},
    )
    health = {
        "operationId": "healthz",
        "summary": "Whether the database answers (no API key needed)",
        "security": [],
        "responses": {
            "200": _json("Health", "The database answers"),
            "503": _json("Health", "The database does not answer"),
        },
    }
    return {"/healthz": {"get": health}, "/metrics": {"get": metrics}}


@functools.cache
def _document() -> dict[str, Any]:
    _, definitions = models_json_schema(
        [(model, "validation") for model in schemas.REQUEST_MODELS]
        + [(model, "serialization") for model in schemas.RESPONSE_MODELS],
        ref_template=_REF,
    )
    paths = {f"{PREFIX}{path}": item for path, item in _paths().items()}
    return {
        "openapi": "3.1.0",
        "info": {
            "title": "tickwork",
            "version": "1",
            "description": "Durable workflows that run on a schedule: schedules, runs, "
            "workflows, business calendars and cron previews. Every route but /healthz needs "
            "`Authorization: Bearer <api key>` (`tickwork apikey create NAME`).",
        },
        "paths": {**paths, **_outside_paths()},
        "components": {
            "schemas": definitions["$defs"],
            "securitySchemes": {"apiKey": {"type": "http", "scheme": "bearer"}},
        },
        "security": [{"apiKey": []}],
    }


def openapi_document() -> dict[str, Any]:
    """The document (a fresh copy: callers may change it)."""
    return copy.deepcopy(_document())
