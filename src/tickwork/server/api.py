"""The JSON API under ``/api/v1``: schedules, runs, workflows, workers and cron previews.

Every handler runs its engine calls on a worker thread (they block on the database).
Status codes say where a request went wrong, the error ``code`` which error it is:

- 400: the engine refused a value (``CRON_ERROR``, ``UNKNOWN_WORKFLOW``, ``INPUT_INVALID``,
  ``CONFIG_ERROR``), or a query parameter is not what it should be (``CONFIG_ERROR``);
- 401: no live API key (``UNAUTHORIZED``); 404: no such schedule, run or calendar
  (``SCHEDULE_NOT_FOUND``, ``RUN_NOT_FOUND``, ``CALENDAR_NOT_FOUND``) or route
  (``NOT_FOUND``);
- 409: ``SCHEDULE_CONFLICT``, ``CALENDAR_IN_USE``; 413: body over 1 MiB (``PAYLOAD_TOO_LARGE``);
- 422: the body is not a JSON object (``MALFORMED_BODY``) or does not fit the
  operation's schema (``CONFIG_ERROR``: a wrong type, an unknown field);
- 503: the database failed (``STORE_ERROR``).

Business calendars' routes are ``calendar_api.py``'s. Errors are answered by
``api_errors.py``, bodies and query parameters read by
``api_input.py``. GET requests change nothing a user sees (a calendar's year, resolved
once, is stored on the way: ``calendar_api.py``).
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import timedelta
from typing import Any

import pydantic
from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import BaseRoute, Route

from .._edge.event_wire import (
    decision_list_to_wire,
    emitted_to_wire,
    event_list_to_wire,
    subscription_list_to_wire,
)
from .._edge.wire import (
    backfilled_to_wire,
    history_list_to_wire,
    preview_to_wire,
    run_detail_to_wire,
    run_page_to_wire,
    schedule_list_to_wire,
    state_change_to_wire,
    triggered_to_wire,
    worker_list_to_wire,
)
from .._engine import Engine
from .._rules.calendars import days_for_preview
from .._rules.liveness import HeldBack, held_back_schedules
from .._rules.registry import WorkflowDef
from .._values.checks import MAX_LIMIT
from .._values.durations import format_duration
from .._values.models import RunInfo, ScheduleAction, ScheduleInfo
from .._values.wire_values import to_json
from ..errors import ConfigError
from . import schemas
from .api_errors import EXCEPTION_HANDLERS, ApiProblem, no_run, no_schedule
from .api_input import instant_param, instant_value, int_param, read_body, spec_from_body
from .auth import BearerAuth
from .calendar_api import Handler, calendar_handlers
from .openapi import openapi_document
from .routes import ENDPOINTS, Endpoint

__all__ = ["build_api"]


# -- writing responses -----------------------------------------------------------------


def _workflow_json(definition: WorkflowDef) -> dict[str, Any]:
    schema = None
    if definition.adapter is not None:
        try:
            schema = definition.adapter.json_schema()
        except pydantic.PydanticUserError:  # a type JSON Schema cannot describe
            schema = None
    retry = definition.retry
    return {
        "name": definition.name,
        "version": definition.version,
        "pool": definition.pool,
        "priority": definition.priority,
        "concurrency": definition.concurrency,
        "timeout": None
        if definition.timeout_ms is None
        else format_duration(timedelta(milliseconds=definition.timeout_ms)),
        "retry": {
            "max_attempts": retry.max_attempts,
            "backoff": format_duration(retry.backoff),
            "factor": retry.factor,
            "max_backoff": format_duration(retry.max_backoff),
        },
        "takes_input": definition.takes_input,
        "input_schema": schema,
    }


# -- the handlers ----------------------------------------------------------------------


class _Api:
    def __init__(self, engine: Engine) -> None:
        self.engine = engine

    async def _call(self, fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
        return await run_in_threadpool(fn, *args, **kwargs)

    # schedules

    async def list_schedules(self, request: Request) -> Response:
        params = request.query_params
        workflow, state = params.get("workflow"), params.get("state")
        found = await self._call(self.engine.list_schedules, workflow=workflow, state=state)
        # Unfiltered, the declared schedules held back too (they have no row, so neither a
        # workflow nor a state to filter by).
        held = [] if workflow or state else await self._call(self._held_back, found)
        return JSONResponse(schedule_list_to_wire(found, held))

    def _held_back(self, schedules: list[ScheduleInfo]) -> list[HeldBack]:
        """The declared schedules not registered for a calendar not stored: the live
        workers' records say which, and the serving app's own declarations."""
        return held_back_schedules(
            self.engine.list_workers(),
            declared=self.engine.console.declared_waiting_for_calendars(),
            stored={s.key for s in schedules},
        )

    async def get_schedule(self, request: Request) -> Response:
        return JSONResponse(await self._schedule(request.path_params["key"]))

    async def create_schedule(self, request: Request) -> Response:
        body = await read_body(request, schemas.ScheduleCreate)
        return await self._register(body, getattr(body, "key", None))

    async def put_schedule(self, request: Request) -> Response:
        body = await read_body(request, schemas.ScheduleDefinition)
        return await self._register(body, request.path_params["key"])

    async def _register(self, body: pydantic.BaseModel, key: str | None) -> Response:
        spec = spec_from_body(body, key)
        written = await self._call(self.engine.add_schedule, spec)
        return JSONResponse({"key": written, "schedule": await self._schedule(written)})

    async def delete_schedule(self, request: Request) -> Response:
        key = request.path_params["key"]
        if not await self._call(self.engine.unschedule, key):
            raise await self._no_schedule(key)
        return JSONResponse({"key": key, "deleted": True})

    def state_handler(self, action: ScheduleAction) -> Callable[[Request], Any]:
        async def change(request: Request) -> Response:
            key = request.path_params["key"]
            note = None
            if await request.body():  # the body is optional: {"note": "why"}
                note = (await read_body(request, schemas.StateChange)).note
            changed = await self._call(self.engine.console.change_state, key, action, note)
            info = None if changed is None else await self._call(self.engine.get_schedule, key)
            if changed is None or info is None:
                raise await self._no_schedule(key)
            return JSONResponse(state_change_to_wire(info, action, changed))

        change.__name__ = f"{action}_schedule"
        return change

    async def trigger_schedule(self, request: Request) -> Response:
        key = request.path_params["key"]
        new_run = False
        if await request.body():  # the body is optional: {"new_run": true}
            new_run = (await read_body(request, schemas.TriggerRequest)).new_run
        triggered = await self._call(self.engine.run_now, key, new_run)
        if triggered is None:
            raise await self._no_schedule(key)
        return JSONResponse(triggered_to_wire(key, triggered))

    async def backfill_schedule(self, request: Request) -> Response:
        key = request.path_params["key"]
        body = await read_body(request, schemas.BackfillRequest)
        start = instant_value(body.start, "start")
        end = instant_value(body.end, "end")
        await self._schedule(key)  # 404 for an unknown key, where the engine refuses it
        done = await self._call(
            self.engine.console.backfill_counted, key, start, end, overlap=body.overlap
        )
        return JSONResponse(backfilled_to_wire(key, done))

    async def schedule_history(self, request: Request) -> Response:
        key = request.path_params["key"]
        limit = int_param(request, "limit", 100, 1, MAX_LIMIT)
        await self._schedule(key)  # 404 for an unknown key, where the engine says []
        entries = await self._call(self.engine.schedule_history, key, limit)
        return JSONResponse(history_list_to_wire(entries))

    async def _schedule(self, key: str) -> dict[str, Any]:
        info = await self._call(self.engine.get_schedule, key)
        if info is None:
            raise await self._no_schedule(key)
        return to_json(info)

    async def _no_schedule(self, key: str) -> ApiProblem:
        """The 404 for ``key``: names the database, and the closest key (a typo's fix)."""
        close = await self._call(self.engine.console.schedule_keys_like, key)
        return no_schedule(key, self.engine.console.where, close)

    # runs

    async def list_runs(self, request: Request) -> Response:
        limit = int_param(request, "limit", 100, 1, MAX_LIMIT)
        offset = int_param(request, "offset", 0, 0, MAX_LIMIT - 1)
        if offset + limit > MAX_LIMIT:
            raise ConfigError(f"offset + limit must be at most {MAX_LIMIT}")
        params = request.query_params
        # One more than the page, to know whether another page follows.
        wanted = min(offset + limit + 1, MAX_LIMIT)
        runs: list[RunInfo] = await self._call(
            self.engine.list_runs,
            workflow=params.get("workflow"),
            status=params.get("status"),
            schedule_key=params.get("schedule_key"),
            limit=wanted,
            before=params.get("before"),
            parent=params.get("parent"),
        )
        return JSONResponse(run_page_to_wire(runs, offset=offset, limit=limit))

    async def get_run(self, request: Request) -> Response:
        run_id = request.path_params["run_id"]
        run = await self._call(self.engine.get_run, run_id)
        if run is None:
            raise no_run(run_id, self.engine.console.where)
        steps = await self._call(self.engine.list_steps, run_id)
        return JSONResponse(run_detail_to_wire(run, steps))

    async def start_run(self, request: Request) -> Response:
        body = await read_body(request, schemas.StartRun)
        handle = await self._call(
            self.engine.start,
            body.workflow,
            body.input,
            run_id=body.run_id,
            priority=body.priority,
            pool=body.pool,
            delay=body.delay,
        )
        run = await self._call(self.engine.get_run, handle.id)
        if run is None:  # removed between the two calls
            raise no_run(handle.id, self.engine.console.where)
        return JSONResponse(to_json(run))

    async def cancel_run(self, request: Request) -> Response:
        run_id = request.path_params["run_id"]
        cancelled = await self._call(self.engine.cancel, run_id)
        run = await self._call(self.engine.get_run, run_id)
        if run is None:
            raise no_run(run_id, self.engine.console.where)
        return JSONResponse({"run_id": run_id, "cancelled": cancelled, "status": run.status.value})

    # events (DESIGN §9)

    async def emit_event(self, request: Request) -> Response:
        body = await read_body(request, schemas.EmitEvent)
        event = await self._call(self.engine.emit_event, body.name, body.payload, id=body.id)
        return JSONResponse(emitted_to_wire(event))

    async def list_events(self, request: Request) -> Response:
        limit = int_param(request, "limit", 100, 1, MAX_LIMIT)
        name = request.query_params.get("name")
        found = await self._call(self.engine.list_events, name=name, limit=limit)
        return JSONResponse(event_list_to_wire(found))

    async def get_event(self, request: Request) -> Response:
        event_id = request.path_params["event_id"]
        found = await self._call(self.engine.get_event, event_id)
        if found is None:
            raise ApiProblem(
                404, "EVENT_NOT_FOUND", f"No event {event_id!r} in {self.engine.console.where}"
            )
        return JSONResponse(to_json(found))

    async def list_subscriptions(self, request: Request) -> Response:
        found = await self._call(self.engine.list_subscriptions)
        return JSONResponse(subscription_list_to_wire(found))

    async def subscribe(self, request: Request) -> Response:
        body = await read_body(request, schemas.Subscribe)
        key = await self._call(
            self.engine.subscribe, body.workflow, body.name, match=body.match, key=body.key
        )
        return JSONResponse({"key": key})

    async def subscription_history(self, request: Request) -> Response:
        limit = int_param(request, "limit", 100, 1, MAX_LIMIT)
        key = request.path_params["key"]
        entries = await self._call(self.engine.subscription_history, key, limit)
        return JSONResponse(decision_list_to_wire(entries))

    async def unsubscribe(self, request: Request) -> Response:
        removed = await self._call(self.engine.unsubscribe, request.path_params["key"])
        return JSONResponse({"key": request.path_params["key"], "removed": removed})

    # workers

    async def list_workers(self, request: Request) -> Response:
        found = await self._call(self.engine.list_workers)
        return JSONResponse(worker_list_to_wire(found))

    # workflows and previews

    async def list_workflows(self, request: Request) -> Response:
        definitions = self.engine.console.workflow_definitions()
        return JSONResponse({"workflows": [_workflow_json(d) for d in definitions]})

    async def preview_cadence(self, request: Request) -> Response:
        params = request.query_params
        expr, every = params.get("cron"), params.get("every")
        timezone = params.get("timezone", "UTC")
        count = int_param(request, "count", 5, 1, 1000)
        after = instant_param(request, "after") or self.engine.clock.now()
        policy = {key: params.get(key, default) for key, default in _PREVIEW_DEFAULTS.items()}
        calendar = params.get("calendar")
        occurrences = await self._call(
            self.engine.preview,
            cron=expr,
            every=every,
            timezone=timezone,
            after=after,
            count=count,
            calendar=calendar,
            **policy,
        )
        days = None
        if calendar is not None:  # the days the preview decided with, for its marks
            found = await self._call(self.engine.get_calendar, calendar)
            days = await self._call(
                days_for_preview, calendar, found, self.engine.calendar_holidays, after
            )
        answer = preview_to_wire(
            cron=expr,
            every=every,
            timezone=timezone,
            occurrences=occurrences,
            after=after,
            calendar=days,
            **policy,
        )
        return JSONResponse(answer)


#: the DST and holiday policies a preview takes, and their defaults (Debian cron's; skip)
_PREVIEW_DEFAULTS = {"dst_gap": "shift", "dst_repeat": "first", "on_holiday": "skip"}


def _route(path: str, endpoints: list[Endpoint], handlers: dict[str, Handler]) -> Route:
    """One route per path, whatever its methods, so a 405's ``Allow`` names them all.

    Query parameters the declaration does not list for the operation are refused (400), so
    a misspelt filter (``?stauts=failed``) is an error rather than every run.
    """
    serving = {e.method: handlers[e.operation_id] for e in endpoints}
    allowed = {e.method: {p["name"] for p in e.params if p["in"] == "query"} for e in endpoints}

    async def endpoint(request: Request) -> Response:
        method = "GET" if request.method == "HEAD" else request.method
        unknown = sorted(set(request.query_params) - allowed[method])
        if unknown:
            raise ConfigError(
                f"Unknown query parameter(s) {unknown}: expected some of {sorted(allowed[method])}"
            )
        response: Response = await serving[method](request)
        return response

    endpoint.__name__ = endpoints[0].operation_id
    return Route(path, endpoint, methods=list(serving))


def build_api(engine: Engine) -> Starlette:
    """The API as an ASGI app to mount at ``/api/v1`` (API key required on every route)."""
    api = _Api(engine)
    document = openapi_document()

    async def openapi(request: Request) -> Response:
        return JSONResponse(document)

    # Each declared operation's handler, by its operation id.
    handlers: dict[str, Handler] = {
        **{
            e.operation_id: getattr(api, e.operation_id)
            for e in ENDPOINTS
            if hasattr(api, e.operation_id)
        },
        **{f"{action}_schedule": api.state_handler(action) for action in ScheduleAction},
        **calendar_handlers(engine),
        "openapi": openapi,
    }
    by_path: dict[str, list[Endpoint]] = {}
    for declared in ENDPOINTS:
        by_path.setdefault(declared.path, []).append(declared)
    # A catch-all path goes last: "/runs/a/cancel" would also match "/runs/{run_id:path}".
    paths = sorted(by_path, key=lambda path: path.endswith(":path}"))
    routes: list[BaseRoute] = [_route(path, by_path[path], handlers) for path in paths]
    return Starlette(
        routes=routes,
        middleware=[Middleware(BearerAuth, engine=engine)],
        exception_handlers=EXCEPTION_HANDLERS,
    )
