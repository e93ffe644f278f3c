"""The JSON API's error responses: which status and ``code`` each failure answers with.

A handler raises: ``ApiProblem`` for a decision of its own (404 for an unknown key), or
lets the engine's ``TickworkError`` through; ``EXCEPTION_HANDLERS`` turns either into the
API's one error body (``auth.error_response``). The status says where a request went
wrong (400 a refused value, 409 a conflict, 503 the database), the ``code`` which error.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable

from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import Response

from .._edge.wire import error_details
from .._values.hints import not_found
from ..errors import CalendarInUse, ConfigError, ScheduleConflict, StoreError, TickworkError
from .auth import error_response

__all__ = [
    "EXCEPTION_HANDLERS",
    "ApiProblem",
    "no_calendar",
    "no_run",
    "no_schedule",
    "on_http_error",
]

log = logging.getLogger("tickwork.server")

_HTTP_CODES = {
    404: "NOT_FOUND",
    405: "METHOD_NOT_ALLOWED",
    413: "PAYLOAD_TOO_LARGE",
}


class ApiProblem(Exception):
    """An error response the handler decided on (404 for an unknown key, 422...)."""

    def __init__(self, status: int, code: str, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.code = code
        self.message = message


def no_schedule(key: str, where: str, suggestions: tuple[str, ...] = ()) -> ApiProblem:
    """404 naming the database looked in, and the closest key when one is close."""
    return ApiProblem(
        404, "SCHEDULE_NOT_FOUND", _capital(not_found("schedule", key, where, suggestions))
    )


def no_run(run_id: str, where: str) -> ApiProblem:
    return ApiProblem(404, "RUN_NOT_FOUND", _capital(not_found("run", run_id, where)))


def no_calendar(name: str, where: str) -> ApiProblem:
    return ApiProblem(404, "CALENDAR_NOT_FOUND", _capital(not_found("calendar", name, where)))


def _capital(text: str) -> str:
    return text[:1].upper() + text[1:]


def _status_of(exc: TickworkError) -> int:
    if isinstance(exc, ConfigError):
        return 400
    if isinstance(exc, ScheduleConflict | CalendarInUse):
        return 409
    if isinstance(exc, StoreError):
        return 503
    return 500


async def _on_problem(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, ApiProblem)
    return error_response(exc.status, exc.code, exc.message)


async def _on_tickwork_error(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, TickworkError)
    status = _status_of(exc)
    if status >= 500:
        log.error("tickwork API: %s %s failed", request.method, request.url.path, exc_info=exc)
    return error_response(status, exc.code, str(exc), details=error_details(exc) or None)


async def _on_overflow(request: Request, exc: Exception) -> Response:
    # A value so large that the dates it leads to pass year 9999: bad input, not a crash.
    return error_response(400, ConfigError.code, f"Value out of range: {exc}")


async def on_http_error(request: Request, exc: Exception) -> Response:
    """Starlette's own errors (no route, wrong method, body too large) as API errors."""
    assert isinstance(exc, HTTPException)
    code = _HTTP_CODES.get(exc.status_code, "HTTP_ERROR")
    headers = None if exc.headers is None else dict(exc.headers)
    return error_response(exc.status_code, code, str(exc.detail), headers=headers)


#: for ``Starlette(exception_handlers=...)``
EXCEPTION_HANDLERS: dict[type[Exception], Callable[[Request, Exception], Awaitable[Response]]] = {
    ApiProblem: _on_problem,
    TickworkError: _on_tickwork_error,
    OverflowError: _on_overflow,
    HTTPException: on_http_error,
}
