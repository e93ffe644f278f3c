"""``create_app(engine)``: the API, health check, metrics and dashboard in one ASGI app.

=====================  ======================================================  =========
path                   what                                                     API key
=====================  ======================================================  =========
``/healthz``           200 ``{"status": "ok"}`` when the database answers, else 503  no
``/metrics``           Prometheus text, counted from the database               yes
``/api/v1/...``        the JSON API (``api.py``); its OpenAPI document at
                       ``/api/v1/openapi.json``                                 yes
``/``                  the dashboard (``dashboard.py``: cookie session, CSRF)   its own
=====================  ======================================================  =========
"""

from __future__ import annotations

import logging

import anyio
from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.exceptions import HTTPException
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import JSONResponse, PlainTextResponse, Response
from starlette.routing import BaseRoute, Mount, Route

from .._engine import Engine
from ..errors import StoreError
from . import dashboard as dashboard_pages
from .access_log import MarkLiveRefresh, quiet_live_refresh
from .api import build_api
from .api_errors import on_http_error as api_http_error
from .auth import (
    MAX_BODY_BYTES,
    BodyLimit,
    bearer_key_id_async,
    bearer_token,
    error_response,
    unauthorized,
)
from .metrics import CONTENT_TYPE_LATEST, metrics_registry, render_metrics
from .openapi import PREFIX

__all__ = ["HEALTH_TIMEOUT", "create_app"]

log = logging.getLogger("tickwork.server")

#: seconds ``/healthz`` waits for the database before answering 503
HEALTH_TIMEOUT = 5.0


def create_app(engine: Engine, *, dashboard: bool = True) -> Starlette:
    """The server of ``engine``: API, ``/healthz``, ``/metrics`` and (unless
    ``dashboard=False``) the dashboard at ``/``.

    Run it with any ASGI server (``tickwork serve`` uses uvicorn). It runs no worker: add
    ``lifespan=tickwork.asgi.lifespan(engine)`` to a Starlette app of your own, or
    ``tickwork serve --worker``, for that.
    """
    registry = metrics_registry(engine)

    def database_answers() -> bool:
        engine.get_run("healthz")  # one indexed read, applying migrations the first time
        return True

    async def healthz(request: Request) -> Response:
        try:
            with anyio.fail_after(HEALTH_TIMEOUT):
                await anyio.to_thread.run_sync(database_answers, abandon_on_cancel=True)
        except Exception as exc:  # any failure to answer is "unavailable", with its reason
            log.warning("health check failed: %r", exc)
            return JSONResponse({"status": "unavailable"}, status_code=503)
        return JSONResponse({"status": "ok"})

    async def metrics(request: Request) -> Response:
        if bearer_token(request) is None:
            return unauthorized("Send an API key: Authorization: Bearer <key>")
        try:
            if await bearer_key_id_async(request, engine) is None:
                return unauthorized("The API key is unknown or revoked", invalid=True)
            body = await run_in_threadpool(render_metrics, registry)
        except StoreError as exc:  # the database is down: JSON 503, as on every route
            return error_response(503, exc.code, str(exc))
        return Response(body, media_type=CONTENT_TYPE_LATEST)

    routes: list[BaseRoute] = [
        Route("/healthz", healthz, methods=["GET"]),
        Route("/metrics", metrics, methods=["GET"]),
        Mount(PREFIX, app=build_api(engine)),
    ]
    if dashboard:
        routes += dashboard_pages.routes(engine)
        quiet_live_refresh()  # an open page's refreshes leave no access-log line
    return Starlette(
        routes=routes,
        middleware=[
            Middleware(MarkLiveRefresh),
            Middleware(BodyLimit, max_bytes=MAX_BODY_BYTES),
        ],
        exception_handlers={HTTPException: _on_http_error},
    )


async def _on_http_error(request: Request, exc: Exception) -> Response:
    """API paths the API's own router never saw (a newline in the path keeps Starlette's
    mount from matching) still answer in JSON; other paths as Starlette does."""
    assert isinstance(exc, HTTPException)
    if request.url.path.startswith(f"{PREFIX}/") or request.url.path == PREFIX:
        return await api_http_error(request, exc)
    return PlainTextResponse(exc.detail, status_code=exc.status_code, headers=exc.headers)
