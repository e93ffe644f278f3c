"""Dashboard pages as HTML: the Jinja2 templates, error pages and one-shot flash messages.

Templates are autoescaped and strict (an unknown name is an error, not an empty string).
A flash message ("paused.") rides to the next page in a signed, HttpOnly cookie; the
page's own refreshes (``live.js`` sends ``x-tickwork-refresh``) leave it for the reload.
"""

from __future__ import annotations

import base64
import binascii
import json
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any
from urllib.parse import quote

import jinja2
from starlette.datastructures import FormData
from starlette.requests import Request
from starlette.responses import HTMLResponse, RedirectResponse, Response

from .._edge.event_wire import flow_text
from .._edge.wire import error_line
from .._values.checkpoints import ended_at, step_took, wait_what
from .._values.durations import describe_duration
from .._values.models import ACTIVE_STATUSES
from .._values.tracebacks import fold_traceback
from ..errors import StoreError
from .display import (
    checkpoint_words,
    format_elapsed,
    format_relative,
    format_utc,
    pretty_json,
    timing_words,
)
from .sessions import Session, Signer

__all__ = ["FLASH_COOKIE", "HERE", "REFRESH_MS", "Renderer", "local_path", "root"]

HERE = Path(__file__).parent
FLASH_COOKIE = "tickwork_flash"
REFRESH_MS = 2500  # how often list pages (and a run's page, while it runs) refresh
REFRESH_HEADER = "x-tickwork-refresh"  # sent by live.js: a refresh does not consume flashes


def root(request: Request) -> str:
    """Where the app is mounted (``""`` at the site's root), without a trailing slash."""
    return str(request.scope.get("root_path", "")).rstrip("/")


def local_path(target: str | None, default: str) -> str:
    """``target`` if it is a path on this site (never another host), else ``default``."""
    if not target or not target.startswith("/") or target.startswith("//") or "\\" in target:
        return default
    if any(ord(c) < 0x20 or c == "\x7f" for c in target):
        return default
    return target


def _environment() -> jinja2.Environment:
    templates = jinja2.Environment(
        loader=jinja2.FileSystemLoader(HERE / "templates"),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    templates.filters.update(
        utc=format_utc,
        utc_bare=lambda when: format_utc(when, suffix=False),
        json=pretty_json,
        q=lambda s: quote(str(s), safe=""),
        folded=fold_traceback,
        error_line=error_line,
        flow=flow_text,
    )
    templates.globals.update(
        elapsed=format_elapsed,
        duration=describe_duration,
        timing=timing_words,
        checkpoint_words=checkpoint_words,
        ended_at=ended_at,
        step_took=step_took,
        wait_what=wait_what,
        ACTIVE=ACTIVE_STATUSES,
    )
    return templates


@dataclass(frozen=True)
class Flash:
    """A one-shot message: ``text``, a link to ``run_id``, ``after`` the link, and a
    "Start a new run" button for the schedule ``new_run_key``."""

    text: str
    run_id: str = ""
    after: str = ""
    new_run_key: str = ""


class Renderer:
    """Renders the dashboard's templates, its error pages and its flash messages."""

    def __init__(self, now: Callable[[], datetime], signer: Signer) -> None:
        self.now = now  # the engine's clock: a FakeClock drives "in 4 min" too
        self.signer = signer
        self.templates = _environment()

    def render(
        self,
        request: Request,
        name: str,
        session: Session | None,
        *,
        status_code: int = 200,
        refresh: bool = False,
        **context: Any,
    ) -> HTMLResponse:
        """The template ``name`` with what every page shows (login state, flash, clock)."""
        flash = None
        refreshing = REFRESH_HEADER in request.headers
        if not refreshing:
            flash = self._read_flash(request)
        query = request.url.query
        now = self.now()
        html = self.templates.get_template(name).render(
            root=root(request),
            here=request.url.path + (f"?{query}" if query else ""),
            csrf=session.csrf if session else "",
            logged_in=session is not None,
            now=now,
            rel=lambda when: format_relative(when, now),
            refresh=REFRESH_MS if refresh else 0,
            flash=flash,
            page=context.pop("page", ""),
            **context,
        )
        response = HTMLResponse(html, status_code=status_code)
        if flash is not None:
            response.delete_cookie(FLASH_COOKIE, path="/", httponly=True, samesite="strict")
        return response

    def forbidden(self, request: Request) -> Response:
        """403 for a form without its CSRF token: nothing was read from it, nor changed."""
        return self.render(
            request,
            "error.html",
            None,
            status_code=403,
            title="Forbidden",
            message="This form's security token is missing or out of date, so "
            "nothing was changed. Reload the page and try again.",
        )

    def unavailable(self, request: Request, error: StoreError) -> Response:
        """503 when the database failed (down, unreachable): the API's status and its
        words (``api_errors``), on a page; nothing was changed."""
        return self.render(
            request,
            "error.html",
            None,
            status_code=503,
            title="Database unavailable",
            message=str(error),
        )

    def not_found(self, request: Request, session: Session, what: str) -> Response:
        return self.render(
            request,
            "error.html",
            session,
            status_code=404,
            title="Not found",
            message=f"There is no {what}.",
        )

    def back(
        self,
        request: Request,
        form: FormData,
        text: str,
        run_id: str = "",
        *,
        after: str = "",
        new_run_key: str = "",
    ) -> Response:
        """Redirect (303: the browser GETs it) to the page the form was on, with a message
        (``Flash``: ``after`` the run link, an offer to start a new run of ``new_run_key``)."""
        target = form.get("next")
        response = RedirectResponse(
            local_path(target if isinstance(target, str) else None, root(request) + "/"), 303
        )
        self._flash(response, request, Flash(text, run_id, after, new_run_key))
        return response

    def _flash(self, response: Response, request: Request, flash: Flash) -> None:
        """Show ``flash`` on the next page: a signed cookie."""
        fields = [flash.text, flash.run_id, flash.after, flash.new_run_key]
        payload = base64.urlsafe_b64encode(json.dumps(fields).encode()).decode()
        response.set_cookie(
            FLASH_COOKIE,
            f"{payload}.{self.signer.sign('flash', payload)}",
            max_age=60,
            path="/",
            httponly=True,
            samesite="strict",
            secure=request.url.scheme == "https",
        )

    def _read_flash(self, request: Request) -> Flash | None:
        payload, _, signature = request.cookies.get(FLASH_COOKIE, "").partition(".")
        if not payload or not self.signer.valid(signature, "flash", payload):
            return None
        try:
            text, run_id, after, new_run_key = json.loads(base64.urlsafe_b64decode(payload))
        except (ValueError, TypeError, binascii.Error):
            return None
        return Flash(str(text), str(run_id), str(after), str(new_run_key))
