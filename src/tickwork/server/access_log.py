"""No access-log line for the dashboard's own live refresh.

An open dashboard page fetches itself every few seconds (``live.js``, which sends
``x-tickwork-refresh``): logged, those requests would bury every other line. The
``MarkLiveRefresh`` middleware flags such a request in a ``ContextVar``; uvicorn writes its
access line from inside the app's ``send`` call, in the request's task, so the
``DropLiveRefresh`` filter on the ``uvicorn.access`` logger sees the flag and drops the
line. A refresh that failed (status 400 or more) is still logged.
"""

from __future__ import annotations

import logging
from contextvars import ContextVar

from starlette.types import ASGIApp, Receive, Scope, Send

from .rendering import REFRESH_HEADER

__all__ = ["DropLiveRefresh", "MarkLiveRefresh", "quiet_live_refresh"]

ACCESS_LOGGER = "uvicorn.access"

_refreshing: ContextVar[bool] = ContextVar("tickwork_live_refresh", default=False)
_HEADER = REFRESH_HEADER.encode("latin-1")


class MarkLiveRefresh:
    """ASGI middleware: flag the dashboard's live-refresh requests for the access log."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        refresh = scope["type"] == "http" and any(
            name == _HEADER for name, _ in scope.get("headers", ())
        )
        if not refresh:
            await self.app(scope, receive, send)
            return
        token = _refreshing.set(True)
        try:
            await self.app(scope, receive, send)
        finally:
            _refreshing.reset(token)


class DropLiveRefresh(logging.Filter):
    """Drops an access line written while a successful live refresh is answered."""

    def filter(self, record: logging.LogRecord) -> bool:
        if not _refreshing.get():
            return True
        # uvicorn's access line: (client, method, path, http version, status code)
        args = record.args if isinstance(record.args, tuple) else ()
        status = args[4] if len(args) == 5 else None
        return isinstance(status, int) and status >= 400


_FILTER = DropLiveRefresh()


def quiet_live_refresh() -> None:
    """Put the filter on uvicorn's access logger (once per process)."""
    logger = logging.getLogger(ACCESS_LOGGER)
    if _FILTER not in logger.filters:
        logger.addFilter(_FILTER)
