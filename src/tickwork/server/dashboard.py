"""The web dashboard: schedules, their history, runs and their steps, behind an API-key login.

``routes(engine)`` returns the routes ``create_app`` mounts at ``/``. Pages are rendered on
the server (Jinja2, autoescaped); one small script re-fetches the page every few seconds
and swaps in its ``data-live`` parts, and nothing else runs in the browser.

Security, and why each piece is there:

- **Login** takes an API key (``tickwork apikey create NAME``) and gives a session cookie:
  ``<key id>.<expiry>.<nonce>.<HMAC>``, signed with ``$TICKWORK_SECRET`` (or a random
  secret per process, so sessions end with the process; set the variable when several
  server processes share the traffic). The key itself is never stored in the browser.
  The cookie is HttpOnly, SameSite=Strict, Secure over https, and lasts 12 hours.
- **Revocation** ends sessions at once: every request asks whether the key id is still
  live (``Engine.api_key_id_is_live``), as ``Engine.verify_api_key`` does for a bearer key.
- **CSRF**: every state change is a POST carrying a per-session token (an HMAC of the
  session's nonce) in a hidden field, compared in constant time; a missing or wrong token
  is refused with 403 before anything is read from the form's other fields. The login
  form carries one too (tied to a short-lived cookie), so another site cannot log a
  browser in under its own key. GET never changes anything stored.
- Every response carries a strict Content-Security-Policy (scripts and styles from this
  origin only, no inline code, no framing) and ``Cache-Control: no-store``.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import json
import os
import secrets
import threading
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any
from urllib.parse import quote, urlencode

import jinja2
from starlette.concurrency import run_in_threadpool
from starlette.datastructures import FormData
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, RedirectResponse, Response
from starlette.routing import BaseRoute, Mount, Route
from starlette.staticfiles import StaticFiles

from .._durations import format_duration
from .._engine import Engine
from .._models import ACTIVE_STATUSES, RunInfo, RunStatus, ScheduleInfo, ScheduleState
from ..cron import load_zone, parse
from ..errors import ConfigError

__all__ = ["SESSION_COOKIE", "format_elapsed", "format_relative", "routes"]

HERE = Path(__file__).parent
SESSION_COOKIE = "tickwork_session"
LOGIN_COOKIE = "tickwork_login"
FLASH_COOKIE = "tickwork_flash"
SESSION_LENGTH = timedelta(hours=12)
REFRESH_MS = 2500  # how often list pages (and a run's page, while it runs) refresh
REFRESH_HEADER = "x-tickwork-refresh"  # sent by live.js: a refresh does not consume flashes
RUNS_LIMIT = 100
ACTIONS = ("pause", "resume", "trigger", "deactivate", "activate")
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

Endpoint = Callable[[Request], Awaitable[Response]]


def routes(engine: Engine) -> list[BaseRoute]:
    """The dashboard's routes, to mount at ``/``: pages, actions, login, static files."""
    secret = os.environ.get("TICKWORK_SECRET") or secrets.token_hex(32)
    return Dashboard(engine, secret.encode()).routes()


# -- formatting (pure) ---------------------------------------------------------------------


def format_elapsed(delta: timedelta) -> str:
    """A length of time for people: ``850 ms``, ``2.4 s``, ``4 min 5 s``, ``2 h 3 min``."""
    ms = max(0, delta // timedelta(milliseconds=1))
    if ms < 1000:
        return f"{ms} ms"
    if ms < 60_000:
        return f"{ms / 1000:.1f} s"
    seconds = ms // 1000
    return _coarse(seconds)


def format_relative(when: datetime, now: datetime) -> str:
    """``when`` seen from ``now``: ``in 4 min``, ``3 h 5 min ago``, ``now``."""
    seconds = int((when - now).total_seconds())
    if seconds == 0:
        return "now"
    text = f"{abs(seconds)} s" if abs(seconds) < 60 else _coarse(abs(seconds))
    return f"in {text}" if seconds > 0 else f"{text} ago"


def _coarse(seconds: int) -> str:
    # Two units at most: nobody reads "2 d 3 h 4 min 5 s" at a glance.
    for big, big_name, small, small_name in (
        (86_400, "d", 3600, "h"),
        (3600, "h", 60, "min"),
        (60, "min", 1, "s"),
    ):
        if seconds >= big:
            whole, rest = divmod(seconds, big)
            part = rest // small
            return f"{whole} {big_name} {part} {small_name}" if part else f"{whole} {big_name}"
    return f"{seconds} s"


def format_utc(when: datetime | None, *, suffix: bool = True) -> str:
    """``2026-03-01 12:30:00 UTC`` (without `` UTC`` in columns headed "(UTC)")."""
    if when is None:
        return ""
    return when.astimezone(UTC).strftime("%Y-%m-%d %H:%M:%S" + (" UTC" if suffix else ""))


def cadence_words(info: ScheduleInfo) -> str:
    """A cron's English ("At 09:00 on Monday through Friday"); "Every 15m" for an interval."""
    if info.cron is not None:
        try:
            return parse(info.cron, info.timezone).explain()
        except ConfigError:  # a zone gone from this machine's tzdata: show the expression
            return info.cron
    assert info.every is not None
    return f"Every {format_duration(info.every)}"


def pretty_json(value: Any) -> str:
    return json.dumps(value, indent=2, sort_keys=True, ensure_ascii=False, default=str)


def local_path(target: str | None, default: str) -> str:
    """``target`` if it is a path on this site (never another host), else ``default``."""
    if not target or not target.startswith("/") or target.startswith("//") or "\\" in target:
        return default
    if any(ord(c) < 0x20 or c == "\x7f" for c in target):
        return default
    return target


# -- sessions ------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Session:
    key_id: str
    nonce: str
    expires: int
    csrf: str


class Signer:
    """HMAC-SHA256 over labelled parts, so a value signed for one use fits no other."""

    def __init__(self, secret: bytes) -> None:
        self._key = hashlib.sha256(b"tickwork-dashboard\0" + secret).digest()

    def sign(self, label: str, *parts: str) -> str:
        message = "\0".join((label, *parts)).encode()
        return hmac.new(self._key, message, hashlib.sha256).hexdigest()

    def valid(self, signature: object, label: str, *parts: str) -> bool:
        return same(signature, self.sign(label, *parts))


def same(given: object, expected: str) -> bool:
    """``given`` is the string ``expected``, compared in constant time (whatever it is)."""
    if not isinstance(given, str):
        return False
    return hmac.compare_digest(given.encode("utf-8", "surrogatepass"), expected.encode())


# -- the app -------------------------------------------------------------------------------


class Dashboard:
    """The dashboard's endpoints over one engine."""

    def __init__(self, engine: Engine, secret: bytes) -> None:
        self.engine = engine
        self.signer = Signer(secret)
        # Sessions logged out in this process (nonce -> expiry), refused until they expire:
        # a copy of the cookie kept from before the logout does not log anyone back in.
        self._ended: dict[str, int] = {}
        self._ended_lock = threading.Lock()
        self.templates = jinja2.Environment(
            loader=jinja2.FileSystemLoader(HERE / "templates"),
            autoescape=True,
            undefined=jinja2.StrictUndefined,
            trim_blocks=True,
            lstrip_blocks=True,
        )
        self.templates.filters.update(
            utc=format_utc,
            utc_bare=lambda when: format_utc(when, suffix=False),
            json=pretty_json,
            q=lambda s: quote(str(s), safe=""),
        )
        self.templates.globals.update(
            elapsed=format_elapsed, cadence=cadence_words, ACTIVE=ACTIVE_STATUSES
        )

    def routes(self) -> list[BaseRoute]:
        page, action = self._page, self._action
        return [
            Route("/", page(self.schedules_page), name="dashboard"),
            Route("/schedule", page(self.schedule_page)),
            Route("/schedule/action", action(self.schedule_action), methods=["POST"]),
            Route("/runs", page(self.runs_page)),
            Route("/run", page(self.run_page)),
            Route("/run/cancel", action(self.cancel_run), methods=["POST"]),
            Route("/login", _secured(self.login_page)),
            Route("/login", _secured(self.login), methods=["POST"]),
            Route("/login/status", _secured(self.login_status)),
            Route("/logout", _secured(self.logout), methods=["POST"]),
            Mount("/static", StaticFiles(directory=HERE / "static"), name="dashboard-static"),
        ]

    # -- sessions --------------------------------------------------------------------------

    def _now(self) -> datetime:
        # The engine's clock, so that a FakeClock drives session expiry and "in 4 min" alike.
        return self.engine.clock.now()

    def _new_session(self, key_id: str) -> str:
        expires = str(int((self._now() + SESSION_LENGTH).timestamp()))
        nonce = secrets.token_urlsafe(16)
        return ".".join(
            (key_id, expires, nonce, self.signer.sign("session", key_id, expires, nonce))
        )

    def _session(self, request: Request) -> Session | None:
        """The request's live session, or None (no cookie, forged, expired, key revoked)."""
        parts = request.cookies.get(SESSION_COOKIE, "").split(".")
        if len(parts) != 4:
            return None
        key_id, expires, nonce, signature = parts
        if not self.signer.valid(signature, "session", key_id, expires, nonce):
            return None
        if not (expires.isascii() and expires.isdigit()) or int(expires) <= self._now().timestamp():
            return None
        with self._ended_lock:
            if nonce in self._ended:
                return None
        if not self.engine.api_key_id_is_live(key_id):
            return None
        return Session(
            key_id, nonce, int(expires), self.signer.sign("csrf", key_id, expires, nonce)
        )

    def _end(self, session: Session) -> None:
        now = self._now().timestamp()
        with self._ended_lock:
            for nonce in [n for n, expires in self._ended.items() if expires <= now]:
                del self._ended[nonce]
            self._ended[session.nonce] = session.expires

    def _page(self, handler: Callable[[Request, Session], Awaitable[Response]]) -> Endpoint:
        """A page for a logged-in session; others are sent to the login page."""

        async def endpoint(request: Request) -> Response:
            session = await run_in_threadpool(self._session, request)
            if session is None:
                return _to_login(request)
            return await handler(request, session)

        return _secured(endpoint)

    def _action(
        self, handler: Callable[[Request, Session, FormData], Awaitable[Response]]
    ) -> Endpoint:
        """A state change: a POST from a logged-in session with its CSRF token, or nothing."""

        async def endpoint(request: Request) -> Response:
            session = await run_in_threadpool(self._session, request)
            if session is None:
                return _to_login(request)
            async with request.form() as form:
                if not same(form.get("csrf"), session.csrf):
                    return self._forbidden(request)
                return await handler(request, session, form)

        return _secured(endpoint)

    # -- rendering -------------------------------------------------------------------------

    def _render(
        self,
        request: Request,
        name: str,
        session: Session | None,
        *,
        status_code: int = 200,
        refresh: bool = False,
        **context: Any,
    ) -> HTMLResponse:
        flash = None
        refreshing = REFRESH_HEADER in request.headers
        if not refreshing:
            flash = self._read_flash(request)
        query = request.url.query
        now = self._now()
        html = self.templates.get_template(name).render(
            root=_root(request),
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

    def _forbidden(self, request: Request) -> Response:
        return self._render(
            request,
            "error.html",
            None,
            status_code=403,
            title="Forbidden",
            message="This form's security token is missing or out of date, so "
            "nothing was changed. Reload the page and try again.",
        )

    def _not_found(self, request: Request, session: Session, what: str) -> Response:
        return self._render(
            request,
            "error.html",
            session,
            status_code=404,
            title="Not found",
            message=f"There is no {what}.",
        )

    def _flash(self, response: Response, request: Request, text: str, run_id: str = "") -> None:
        """Show ``text`` (and a link to ``run_id``) on the next page: a signed cookie."""
        payload = base64.urlsafe_b64encode(json.dumps([text, run_id]).encode()).decode()
        response.set_cookie(
            FLASH_COOKIE,
            f"{payload}.{self.signer.sign('flash', payload)}",
            max_age=60,
            path="/",
            httponly=True,
            samesite="strict",
            secure=request.url.scheme == "https",
        )

    def _read_flash(self, request: Request) -> tuple[str, str] | None:
        payload, _, signature = request.cookies.get(FLASH_COOKIE, "").partition(".")
        if not payload or not self.signer.valid(signature, "flash", payload):
            return None
        try:
            text, run_id = json.loads(base64.urlsafe_b64decode(payload))
        except (ValueError, binascii.Error):
            return None
        return str(text), str(run_id)

    def _back(self, request: Request, form: FormData, text: str, run_id: str = "") -> Response:
        """Redirect (303: the browser GETs it) to the page the form was on, with a message."""
        target = form.get("next")
        response = RedirectResponse(
            local_path(target if isinstance(target, str) else None, _root(request) + "/"), 303
        )
        self._flash(response, request, text, run_id)
        return response

    # -- login -----------------------------------------------------------------------------

    async def login_page(self, request: Request) -> Response:
        target = local_path(request.query_params.get("next"), _root(request) + "/")
        if await run_in_threadpool(self._session, request) is not None:
            return RedirectResponse(target, 303)
        return self._login_form(request, target)

    async def login_status(self, request: Request) -> Response:
        """``{"logged_in": bool}``: lets the login page notice a session that its own
        request did not carry (a SameSite=Strict cookie is not sent when the page was
        reached by a link from another site; the page's script asks again, same-site).
        """
        live = await run_in_threadpool(self._session, request) is not None
        return JSONResponse({"logged_in": live})

    def _login_form(
        self, request: Request, target: str, error: str = "", status_code: int = 200
    ) -> Response:
        nonce = request.cookies.get(LOGIN_COOKIE) or secrets.token_urlsafe(16)
        response = self._render(
            request,
            "login.html",
            None,
            status_code=status_code,
            login_token=self.signer.sign("login", nonce),
            next=target,
            error=error,
        )
        response.set_cookie(
            LOGIN_COOKIE,
            nonce,
            max_age=3600,
            path="/",
            httponly=True,
            samesite="strict",
            secure=request.url.scheme == "https",
        )
        return response

    async def login(self, request: Request) -> Response:
        async with request.form() as form:
            token, key, target = form.get("csrf"), form.get("key"), form.get("next")
        nonce = request.cookies.get(LOGIN_COOKIE, "")
        if not nonce or not self.signer.valid(token, "login", nonce):
            return self._forbidden(request)
        target = local_path(target if isinstance(target, str) else None, _root(request) + "/")
        key_id = None
        if isinstance(key, str) and key.strip():
            key_id = await run_in_threadpool(self.engine.verify_api_key, key.strip())
        if key_id is None:
            error = "That API key is not valid (or it has been revoked)."
            return self._login_form(request, target, error, status_code=401)
        response = RedirectResponse(target, 303)
        response.set_cookie(
            SESSION_COOKIE,
            self._new_session(key_id),
            max_age=int(SESSION_LENGTH.total_seconds()),
            path="/",
            httponly=True,
            samesite="strict",
            secure=request.url.scheme == "https",
        )
        response.delete_cookie(LOGIN_COOKIE, path="/", httponly=True, samesite="strict")
        return response

    async def logout(self, request: Request) -> Response:
        session = await run_in_threadpool(self._session, request)
        if session is not None:
            async with request.form() as form:
                token = form.get("csrf")
            if not same(token, session.csrf):
                return self._forbidden(request)
            self._end(session)
        response = RedirectResponse(_root(request) + "/login", 303)
        response.delete_cookie(SESSION_COOKIE, path="/", httponly=True, samesite="strict")
        return response

    # -- schedules -------------------------------------------------------------------------

    async def schedules_page(self, request: Request, session: Session) -> Response:
        schedules = await run_in_threadpool(self.engine.list_schedules)
        return self._render(
            request, "schedules.html", session, refresh=True, schedules=schedules, page="schedules"
        )

    async def schedule_page(self, request: Request, session: Session) -> Response:
        key = request.query_params.get("key", "")
        data = await run_in_threadpool(self._schedule_data, key)
        if data is None:
            return self._not_found(request, session, f"schedule {key!r}")
        return self._render(
            request, "schedule.html", session, refresh=True, page="schedules", **data
        )

    def _schedule_data(self, key: str) -> dict[str, Any] | None:
        info = self.engine.get_schedule(key) if key else None
        if info is None:
            return None
        return {
            "s": info,
            "history": self.engine.schedule_history(key, limit=100),
            "upcoming": self._upcoming(info),
            "zone": load_zone(info.timezone),
            "runs": self.engine.list_runs(schedule_key=key, limit=10),
        }

    def _upcoming(self, info: ScheduleInfo, count: int = 5) -> list[datetime]:
        """The next ``count`` occurrences, from the stored next fire time on."""
        first, now = info.next_fire_at, self._now()
        if first is None or info.state is ScheduleState.INACTIVE:
            return []
        if info.every is not None:
            if info.state is ScheduleState.PAUSED and first < now:  # those are missed already
                first += -((first - now) // info.every) * info.every
            return [first + i * info.every for i in range(count)]
        assert info.cron is not None
        if info.state is ScheduleState.PAUSED and first < now:
            first = self.engine.preview(cron=info.cron, timezone=info.timezone, count=1)[0]
        rest = self.engine.preview(
            cron=info.cron, timezone=info.timezone, after=first, count=count - 1
        )
        return [first, *rest]

    async def schedule_action(self, request: Request, session: Session, form: FormData) -> Response:
        key, action = form.get("key"), form.get("action")
        if not isinstance(key, str) or action not in ACTIONS:
            return self._not_found(request, session, "such action")
        assert isinstance(action, str)
        if action == "trigger":
            run_id = await run_in_threadpool(self.engine.trigger, key)
            if run_id is None:
                return self._back(request, form, f"No schedule {key!r}.")
            return self._back(request, form, f"{key}: run started", run_id)
        done = await run_in_threadpool(getattr(self.engine, action), key)
        past = {
            "pause": "paused",
            "resume": "resumed",
            "deactivate": "deactivated",
            "activate": "activated",
        }[action]
        return self._back(request, form, f"{key}: {past}." if done else f"No schedule {key!r}.")

    # -- runs ------------------------------------------------------------------------------

    async def runs_page(self, request: Request, session: Session) -> Response:
        params = request.query_params
        filters = {
            "status": params.get("status", ""),
            "workflow": params.get("workflow", "").strip(),
            "schedule": params.get("schedule", "").strip(),
        }
        before = params.get("before", "").strip()
        data = await run_in_threadpool(self._runs_data, filters, before)
        return self._render(
            request,
            "runs.html",
            session,
            refresh=True,
            page="runs",
            filters=filters,
            statuses=[s.value for s in RunStatus],
            **data,
        )

    def _runs_data(self, filters: dict[str, str], before: str) -> dict[str, Any]:
        error = ""
        status = filters["status"] or None
        runs: list[RunInfo] = []
        if status is not None and status not in {s.value for s in RunStatus}:
            error = f"Unknown status {status!r}."
        else:
            runs = self.engine.list_runs(
                status=status,
                workflow=filters["workflow"] or None,
                schedule_key=filters["schedule"] or None,
                limit=RUNS_LIMIT + 1,  # one more: is there an older page?
                before=before or None,
            )
        older = runs[RUNS_LIMIT - 1].id if len(runs) > RUNS_LIMIT else None
        runs = runs[:RUNS_LIMIT]
        schedule_keys = [s.key for s in self.engine.list_schedules()]
        workflows = sorted({*self.engine.workflows(), *(r.workflow for r in runs)})
        return {
            "runs": runs,
            "error": error,
            "paged": bool(before),
            "older": None if older is None else urlencode({**filters, "before": older}),
            "newest": urlencode({name: value for name, value in filters.items() if value}),
            "schedule_keys": schedule_keys,
            "workflows": workflows,
        }

    async def run_page(self, request: Request, session: Session) -> Response:
        run_id = request.query_params.get("id", "")
        run = await run_in_threadpool(self.engine.get_run, run_id) if run_id else None
        if run is None:
            return self._not_found(request, session, f"run {run_id!r}")
        steps = await run_in_threadpool(self.engine.list_steps, run_id)
        return self._render(
            request,
            "run.html",
            session,
            page="runs",
            run=run,
            steps=steps,
            refresh=run.status in ACTIVE_STATUSES,
        )

    async def cancel_run(self, request: Request, session: Session, form: FormData) -> Response:
        run_id = form.get("id")
        if not isinstance(run_id, str):
            return self._not_found(request, session, "such run")
        cancelled = await run_in_threadpool(self.engine.cancel, run_id)
        text = "Cancelled." if cancelled else "Not cancelled: the run is unknown or finished."
        return self._back(request, form, text, run_id)


def _root(request: Request) -> str:
    return str(request.scope.get("root_path", "")).rstrip("/")


def _to_login(request: Request) -> Response:
    """No live session: to the login page, coming back here afterwards (GETs only)."""
    query = request.url.query
    here = request.url.path + (f"?{query}" if query else "")
    target = _root(request) + "/login"
    if request.method == "GET" and here != _root(request) + "/":
        target += "?" + urlencode({"next": here})
    return RedirectResponse(target, 303)


def _secured(endpoint: Endpoint) -> Endpoint:
    """Add the security headers to every response of ``endpoint``."""

    async def secured(request: Request) -> Response:
        response = await endpoint(request)
        for name, value in SECURITY_HEADERS.items():
            response.headers.setdefault(name, value)
        return response

    return secured
