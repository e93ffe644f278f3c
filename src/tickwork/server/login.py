"""The dashboard's login and logout: an API key in, a session cookie out.

The login form carries a CSRF token too, tied to a short-lived cookie of its own, so that
another site cannot log a browser in under the other site's key. Logging out is a POST
with the session's CSRF token, so a link elsewhere cannot log anyone out.
"""

from __future__ import annotations

import secrets

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import JSONResponse, RedirectResponse, Response

from .._engine import Engine
from .rendering import Renderer, local_path, root
from .sessions import Sessions, forget, same

__all__ = ["LOGIN_COOKIE", "Login"]

LOGIN_COOKIE = "tickwork_login"


class Login:
    """The endpoints of ``/login``, ``/login/status`` and ``/logout``."""

    def __init__(self, engine: Engine, sessions: Sessions, renderer: Renderer) -> None:
        self.engine = engine
        self.sessions = sessions
        self.renderer = renderer
        self.signer = sessions.signer

    async def page(self, request: Request) -> Response:
        target = local_path(request.query_params.get("next"), root(request) + "/")
        if await run_in_threadpool(self.sessions.read, request) is not None:
            return RedirectResponse(target, 303)
        return self._form(request, target)

    async def status(self, request: Request) -> Response:
        """``{"logged_in": bool}``: lets the login page notice a session that its own
        request did not carry (a SameSite=Strict cookie is not sent when the page was
        reached by a link from another site; the page's script asks again, same-site).
        """
        live = await run_in_threadpool(self.sessions.read, request) is not None
        return JSONResponse({"logged_in": live})

    def _form(
        self, request: Request, target: str, error: str = "", status_code: int = 200
    ) -> Response:
        nonce = request.cookies.get(LOGIN_COOKIE) or secrets.token_urlsafe(16)
        response = self.renderer.render(
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

    async def submit(self, request: Request) -> Response:
        """Check the form's token, then the key; a valid key starts a session."""
        async with request.form() as form:
            token, key, target = form.get("csrf"), form.get("key"), form.get("next")
        nonce = request.cookies.get(LOGIN_COOKIE, "")
        if not nonce or not self.signer.valid(token, "login", nonce):
            return self.renderer.forbidden(request)
        target = local_path(target if isinstance(target, str) else None, root(request) + "/")
        key_id = None
        if isinstance(key, str) and key.strip():
            key_id = await run_in_threadpool(self.engine.verify_api_key, key.strip())
        if key_id is None:
            error = "That API key is not valid (or it has been revoked)."
            return self._form(request, target, error, status_code=401)
        response = RedirectResponse(target, 303)
        self.sessions.start(response, request, key_id)
        response.delete_cookie(LOGIN_COOKIE, path="/", httponly=True, samesite="strict")
        return response

    async def logout(self, request: Request) -> Response:
        session = await run_in_threadpool(self.sessions.read, request)
        if session is not None:
            async with request.form() as form:
                token = form.get("csrf")
            if not same(token, session.csrf):
                return self.renderer.forbidden(request)
            self.sessions.end(session)
        response = RedirectResponse(root(request) + "/login", 303)
        forget(response)
        return response
