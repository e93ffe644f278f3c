"""The dashboard's business calendars (DESIGN §3): the Calendars page lists them; a
calendar's page shows its weekend, its country and subdivision, and its holidays of a
year (``?year=``, this year by default), with links to the years either side.

A year whose public holidays were never resolved is resolved and stored on the way
(``engine.calendar_holidays``); when that needs the ``holidays`` extra and the server
lacks it, the page says so instead of listing them.
"""

from __future__ import annotations

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import Response

from .._engine import Engine
from .._values.holidays import Holiday
from ..errors import ConfigError
from .rendering import Renderer
from .sessions import Session

__all__ = ["CalendarPages"]

_FIRST_YEAR, _LAST_YEAR = 1, 9999


class CalendarPages:
    """The Calendars page and a calendar's page, over one engine."""

    def __init__(self, engine: Engine, renderer: Renderer) -> None:
        self.engine = engine
        self.renderer = renderer

    async def calendars(self, request: Request, session: Session) -> Response:
        calendars = await run_in_threadpool(self.engine.list_calendars)
        return self.renderer.render(
            request, "calendars.html", session, page="calendars", calendars=calendars
        )

    async def calendar(self, request: Request, session: Session) -> Response:
        name = request.query_params.get("name", "")
        calendar = await run_in_threadpool(self.engine.get_calendar, name) if name else None
        if calendar is None:
            return self.renderer.not_found(request, session, f"calendar {name!r}")
        year = _year(request.query_params.get("year", ""), self.engine.clock.now().year)
        holidays: tuple[Holiday, ...] = ()
        trouble = ""
        try:
            holidays = await run_in_threadpool(self.engine.calendar_holidays, name, year)
        except ConfigError as exc:  # a year never resolved, on a server without the extra
            trouble = str(exc)
        return self.renderer.render(
            request,
            "calendar.html",
            session,
            page="calendars",
            c=calendar,
            year=year,
            years=(
                year - 1 if year > _FIRST_YEAR else None,
                year + 1 if year < _LAST_YEAR else None,
            ),
            holidays=holidays,
            trouble=trouble,
        )


def _year(text: str, default: int) -> int:
    """``?year=``: a year from 1 to 9999; anything else is ``default`` (this year)."""
    if text.isdigit() and len(text) <= 4 and _FIRST_YEAR <= int(text) <= _LAST_YEAR:
        return int(text)
    return default
