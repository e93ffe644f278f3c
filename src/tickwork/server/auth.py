"""API keys on requests, JSON error responses and the request body limit.

Every route but ``/healthz`` needs ``Authorization: Bearer <api key>``; the key is checked
by ``Engine.verify_api_key`` (SHA-256 of the secret, compared in constant time). A missing,
unknown or revoked key gets 401 with ``WWW-Authenticate: Bearer`` (RFC 6750) and the same
JSON error body as every other API error. The dashboard has its own sessions
(``sessions.py``): it takes a key once, at login, and keeps only the key's id.
"""

from __future__ import annotations

from typing import Any

from starlette.concurrency import run_in_threadpool
from starlette.exceptions import HTTPException
from starlette.requests import HTTPConnection
from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from .._edge.wire import error_body
from .._engine import Engine
from ..errors import StoreError

__all__ = [
    "MAX_BODY_BYTES",
    "BearerAuth",
    "BodyLimit",
    "BodyTooLarge",
    "bearer_key_id_async",
    "bearer_token",
    "error_response",
    "unauthorized",
]

#: the largest request body accepted (1 MiB); larger ones get 413
MAX_BODY_BYTES = 1024 * 1024
_REALM = 'Bearer realm="tickwork"'


def error_response(
    status: int,
    code: str,
    message: str,
    *,
    details: dict[str, Any] | None = None,
    headers: dict[str, str] | None = None,
) -> JSONResponse:
    """``{"error": {"code": ..., "message": ...}}`` with ``status``."""
    return JSONResponse(error_body(code, message, details), status_code=status, headers=headers)


def unauthorized(message: str, *, invalid: bool = False) -> JSONResponse:
    """401 with ``WWW-Authenticate: Bearer``; ``invalid`` when a key was sent but refused."""
    challenge = f'{_REALM}, error="invalid_token"' if invalid else _REALM
    return error_response(401, "UNAUTHORIZED", message, headers={"WWW-Authenticate": challenge})


def bearer_token(connection: HTTPConnection) -> str | None:
    """The token of an ``Authorization: Bearer <token>`` header, or None."""
    scheme, _, token = connection.headers.get("authorization", "").partition(" ")
    token = token.strip()
    if scheme.lower() != "bearer" or not token:
        return None
    return token


async def bearer_key_id_async(connection: HTTPConnection, engine: Engine) -> str | None:
    """The id of the live API key the request carries as a bearer token, or None.

    The check reads the database, so it runs on a worker thread, not the event loop.
    """
    token = bearer_token(connection)
    if token is None:
        return None
    return await run_in_threadpool(engine.verify_api_key, token)


class BearerAuth:
    """ASGI middleware: refuse HTTP requests without a live API key (401).

    The key's id is left in ``scope["state"]["api_key_id"]`` (``request.state.api_key_id``).
    """

    def __init__(self, app: ASGIApp, engine: Engine) -> None:
        self.app = app
        self.engine = engine

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        connection = HTTPConnection(scope)
        if bearer_token(connection) is None:
            response = unauthorized("Send an API key: Authorization: Bearer <key>")
            await response(scope, receive, send)
            return
        try:
            key_id = await bearer_key_id_async(connection, self.engine)
        except StoreError as exc:  # the database is down: say so as every route does
            response = error_response(503, exc.code, str(exc))
            await response(scope, receive, send)
            return
        if key_id is None:
            response = unauthorized("The API key is unknown or revoked", invalid=True)
            await response(scope, receive, send)
            return
        scope.setdefault("state", {})["api_key_id"] = key_id
        await self.app(scope, receive, send)


class BodyTooLarge(HTTPException):
    """Raised from ``receive`` once a body passes the limit (a 413 to whoever handles it)."""

    def __init__(self, limit: int) -> None:
        super().__init__(413, f"The request body is larger than {limit} bytes")


class BodyLimit:
    """ASGI middleware: refuse request bodies larger than ``max_bytes`` with 413.

    A declared ``Content-Length`` over the limit is refused before the app runs; a body
    sent in chunks is counted as it is read, and ``BodyTooLarge`` is raised from
    ``receive`` as soon as it passes the limit, so no more than that is ever buffered.
    """

    def __init__(self, app: ASGIApp, max_bytes: int = MAX_BODY_BYTES) -> None:
        self.app = app
        self.max_bytes = max_bytes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        declared = HTTPConnection(scope).headers.get("content-length", "")
        if declared.isdigit() and int(declared) > self.max_bytes:
            await self._refuse(scope, receive, send)
            return
        received = 0
        started = False

        async def limited_receive() -> Message:
            nonlocal received
            message = await receive()
            if message["type"] == "http.request":
                received += len(message.get("body", b""))
                if received > self.max_bytes:
                    raise BodyTooLarge(self.max_bytes)
            return message

        async def tracking_send(message: Message) -> None:
            nonlocal started
            if message["type"] == "http.response.start":
                started = True
            await send(message)

        try:
            await self.app(scope, limited_receive, tracking_send)
        except BodyTooLarge:
            if started:
                raise
            await self._refuse(scope, receive, send)

    async def _refuse(self, scope: Scope, receive: Receive, send: Send) -> None:
        response = error_response(
            413, "PAYLOAD_TOO_LARGE", f"The request body is larger than {self.max_bytes} bytes"
        )
        await response(scope, receive, send)
