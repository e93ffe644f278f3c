"""The web dashboard: its routes, and the checks every one of them passes through.

``routes(engine)`` returns the routes ``create_app`` mounts at ``/``. Pages are rendered on
the server (Jinja2, autoescaped: ``rendering.py``); one small script re-fetches the page
every few seconds and swaps in its ``data-live`` parts, and nothing else runs in the
browser. The parts: ``sessions.py`` (signed session cookie, CSRF tokens), ``login.py``,
``pages.py`` (what each page shows, the actions), ``calendar_pages.py`` (business
calendars), ``display.py`` (times and values as text).

Security, and why each piece is there:

- **Login** takes an API key (``tickwork apikey create NAME``) and gives a session cookie,
  HttpOnly, SameSite=Strict, Secure over https, signed with ``$TICKWORK_SECRET`` (or a
  random secret per process, so sessions end with the process; set the variable when
  several server processes share the traffic). The key itself is never stored.
- **Revocation** ends sessions at once: every request asks whether the key id is still
  live (``Engine.console.api_key_id_is_live``), as ``Engine.verify_api_key`` does for a bearer key.
- **CSRF**: every state change is a POST carrying a per-session token (an HMAC of the
  session's nonce) in a hidden field, compared in constant time; a missing or wrong token
  is refused with 403 before anything is read from the form's other fields (``action``
  below). The login form carries one too. GET never changes anything stored.
- Every response carries a strict Content-Security-Policy (scripts and styles from this
  origin only, no inline code, no framing) and ``Cache-Control: no-store`` (``secured``).

A database outage (``StoreError``) answers 503 with the API's message, on the error page
(``secured``), not a bare 500.
"""

from __future__ import annotations

import logging
import os
import secrets
from collections.abc import Awaitable, Callable
from urllib.parse import urlencode

from starlette.concurrency import run_in_threadpool
from starlette.datastructures import FormData
from starlette.requests import Request
from starlette.responses import RedirectResponse, Response
from starlette.routing import BaseRoute, Mount, Route
from starlette.staticfiles import StaticFiles

from .._engine import Engine
from ..errors import StoreError
from .calendar_pages import CalendarPages
from .login import Login
from .pages import Pages
from .rendering import HERE, Renderer, root
from .sessions import SESSION_COOKIE, Session, Sessions, Signer, same

__all__ = ["SECURITY_HEADERS", "SESSION_COOKIE", "routes"]

SECURITY_HEADERS = {
    "Content-Security-Policy": (
        "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; "
        "connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'"
    ),
    "X-Content-Type-Options": "nosniff",
    "X-Frame-Options": "DENY",
    "Referrer-Policy": "same-origin",
    "Cache-Control": "no-store",
}

log = logging.getLogger("tickwork.server")

Endpoint = Callable[[Request], Awaitable[Response]]
PageHandler = Callable[[Request, Session], Awaitable[Response]]
ActionHandler = Callable[[Request, Session, FormData], Awaitable[Response]]


def routes(engine: Engine) -> list[BaseRoute]:
    """The dashboard's routes, to mount at ``/``: pages, actions, login, static files."""
    secret = os.environ.get("TICKWORK_SECRET") or secrets.token_hex(32)
    signer = Signer(secret.encode())
    sessions = Sessions(engine, signer)
    renderer = Renderer(lambda: engine.clock.now(), signer)
    guard = _Guard(sessions, renderer)
    pages, login = Pages(engine, renderer), Login(engine, sessions, renderer)
    calendars = CalendarPages(engine, renderer)
    page, action = guard.page, guard.action
    return [
        Route("/", page(pages.schedules), name="dashboard"),
        Route("/schedule", page(pages.schedule)),
        Route("/schedule/action", action(pages.schedule_action), methods=["POST"]),
        Route("/runs", page(pages.runs)),
        Route("/run", page(pages.run)),
        Route("/run/cancel", action(pages.cancel_run), methods=["POST"]),
        Route("/workers", page(pages.workers)),
        Route("/events", page(pages.events)),
        Route("/subscription", page(pages.subscription)),
        Route("/calendars", page(calendars.calendars)),
        Route("/calendar", page(calendars.calendar)),
        Route("/login", secured(login.page, renderer)),
        Route("/login", secured(login.submit, renderer), methods=["POST"]),
        Route("/login/status", secured(login.status, renderer)),
        Route("/logout", secured(login.logout, renderer), methods=["POST"]),
        Mount("/static", StaticFiles(directory=HERE / "static"), name="dashboard-static"),
    ]


class _Guard:
    """Wraps pages and actions so that only a live session (and its token) reaches them."""

    def __init__(self, sessions: Sessions, renderer: Renderer) -> None:
        self.sessions = sessions
        self.renderer = renderer

    def page(self, handler: PageHandler) -> Endpoint:
        """A page for a logged-in session; others are sent to the login page."""

        async def endpoint(request: Request) -> Response:
            session = await run_in_threadpool(self.sessions.read, request)
            if session is None:
                return to_login(request)
            return await handler(request, session)

        return secured(endpoint, self.renderer)

    def action(self, handler: ActionHandler) -> Endpoint:
        """A state change: a POST from a logged-in session with its CSRF token, or nothing."""

        async def endpoint(request: Request) -> Response:
            session = await run_in_threadpool(self.sessions.read, request)
            if session is None:
                return to_login(request)
            async with request.form() as form:
                if not same(form.get("csrf"), session.csrf):
                    return self.renderer.forbidden(request)
                return await handler(request, session, form)

        return secured(endpoint, self.renderer)


def to_login(request: Request) -> Response:
    """No live session: to the login page, coming back here afterwards (GETs only)."""
    query = request.url.query
    here = request.url.path + (f"?{query}" if query else "")
    target = root(request) + "/login"
    if request.method == "GET" and here != root(request) + "/":
        target += "?" + urlencode({"next": here})
    return RedirectResponse(target, 303)


def secured(endpoint: Endpoint, renderer: Renderer) -> Endpoint:
    """Add the security headers to every response of ``endpoint``; a database outage is
    answered with the 503 page."""

    async def secured_endpoint(request: Request) -> Response:
        try:
            response = await endpoint(request)
        except StoreError as exc:
            log.error("tickwork dashboard: %s %s failed", request.method, request.url.path,
                      exc_info=exc)  # fmt: skip
            response = renderer.unavailable(request, exc)
        for name, value in SECURITY_HEADERS.items():
            response.headers.setdefault(name, value)
        return response

    return secured_endpoint
