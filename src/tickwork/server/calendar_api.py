"""The API's business calendars (DESIGN §3): ``/calendars`` and ``/calendars/{name}``.

``GET`` lists them or reads one (with ``?year=``, its holidays of that year, a country's
resolved and stored the first time); ``PUT`` stores one as ``engine.calendar`` does (400
for a bad date, day name or country, or a country without the server's ``holidays``
extra, naming it; nothing stored); ``DELETE`` removes one, refused with 409
``CALENDAR_IN_USE`` naming the schedules that use it. 404 ``CALENDAR_NOT_FOUND`` for a
name that is not stored. Every answer is ``_calendar_wire``'s, as the CLI's ``--json``.

``GET ?year=`` is the one GET that may write: a country's year never resolved is stored
once resolved (as ``engine.calendar_holidays`` does), so workers without the extra read it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from .._edge.calendar_wire import calendar_list_to_wire, calendar_year_to_wire
from .._engine import Engine
from .._values.wire_values import to_json
from . import schemas
from .api_errors import no_calendar
from .api_input import int_param, read_body

__all__ = ["Handler", "calendar_handlers"]

Handler = Callable[[Request], Any]


class _Calendars:
    def __init__(self, engine: Engine) -> None:
        self.engine = engine

    async def list_calendars(self, request: Request) -> Response:
        found = await run_in_threadpool(self.engine.list_calendars)
        return JSONResponse(calendar_list_to_wire(found))

    async def get_calendar(self, request: Request) -> Response:
        name = request.path_params["name"]
        year = None
        if "year" in request.query_params:
            year = int_param(request, "year", 0, 1, 9999)
        calendar = await run_in_threadpool(self.engine.get_calendar, name)
        if calendar is None:
            raise no_calendar(name, self.engine.console.where)
        if year is None:
            return JSONResponse(to_json(calendar))
        holidays = await run_in_threadpool(self.engine.calendar_holidays, name, year)
        return JSONResponse(calendar_year_to_wire(calendar, year, holidays))

    async def put_calendar(self, request: Request) -> Response:
        body = await read_body(request, schemas.CalendarBody)
        stored = await run_in_threadpool(
            lambda: self.engine.calendar(
                request.path_params["name"],
                holidays=body.holidays,
                country=body.country,
                subdivision=body.subdivision,
                weekend=body.weekend,
            )
        )
        return JSONResponse(to_json(stored))

    async def delete_calendar(self, request: Request) -> Response:
        name = request.path_params["name"]
        if not await run_in_threadpool(self.engine.delete_calendar, name):
            raise no_calendar(name, self.engine.console.where)
        return JSONResponse({"name": name, "deleted": True})


def calendar_handlers(engine: Engine) -> dict[str, Handler]:
    """The calendar routes' handlers by operation id (``routes.py`` declares the routes)."""
    calendars = _Calendars(engine)
    return {
        "list_calendars": calendars.list_calendars,
        "get_calendar": calendars.get_calendar,
        "put_calendar": calendars.put_calendar,
        "delete_calendar": calendars.delete_calendar,
    }
