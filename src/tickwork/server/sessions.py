"""Dashboard sessions: who is logged in (a signed cookie) and each session's CSRF token.

A session cookie is ``<key id>.<expiry>.<nonce>.<HMAC>``, signed with ``$TICKWORK_SECRET``
(or a random secret per process). The API key itself is never stored in the browser. The
cookie is HttpOnly, SameSite=Strict, Secure over https, and lasts 12 hours. A session ends
early when its key is revoked (asked on every request) or when it logs out (its nonce is
refused by this process until the cookie would have expired anyway).
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
import threading
from dataclasses import dataclass
from datetime import datetime, timedelta

from starlette.requests import Request
from starlette.responses import Response

from .._engine import Engine

__all__ = ["SESSION_COOKIE", "SESSION_LENGTH", "Session", "Sessions", "Signer", "forget", "same"]

SESSION_COOKIE = "tickwork_session"
SESSION_LENGTH = timedelta(hours=12)


@dataclass(frozen=True, slots=True)
class Session:
    """A live session: whose key it is, until when, and the token its forms must carry."""

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


class Sessions:
    """Starts, reads and ends the sessions of one engine's dashboard."""

    def __init__(self, engine: Engine, signer: Signer) -> None:
        self.engine = engine
        self.signer = signer
        # Sessions logged out in this process (nonce -> expiry), refused until they expire:
        # a copy of the cookie kept from before the logout does not log anyone back in.
        self._ended: dict[str, int] = {}
        self._ended_lock = threading.Lock()

    def _now(self) -> datetime:
        # The engine's clock, so that a FakeClock drives session expiry.
        return self.engine.clock.now()

    def start(self, response: Response, request: Request, key_id: str) -> None:
        """Log ``response``'s browser in as ``key_id``: a new session cookie."""
        expires = str(int((self._now() + SESSION_LENGTH).timestamp()))
        nonce = secrets.token_urlsafe(16)
        signature = self.signer.sign("session", key_id, expires, nonce)
        response.set_cookie(
            SESSION_COOKIE,
            ".".join((key_id, expires, nonce, signature)),
            max_age=int(SESSION_LENGTH.total_seconds()),
            path="/",
            httponly=True,
            samesite="strict",
            secure=request.url.scheme == "https",
        )

    def read(self, request: Request) -> Session | None:
        """The request's live session, or None (no cookie, forged, expired, key revoked).

        Blocks on the database (is the key still live?): call it from a worker thread.
        """
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
        if not self.engine.console.api_key_id_is_live(key_id):
            return None
        return Session(
            key_id, nonce, int(expires), self.signer.sign("csrf", key_id, expires, nonce)
        )

    def end(self, session: Session) -> None:
        """Refuse ``session`` from now on, in this process (its cookie is deleted apart)."""
        now = self._now().timestamp()
        with self._ended_lock:
            for nonce in [n for n, expires in self._ended.items() if expires <= now]:
                del self._ended[nonce]
            self._ended[session.nonce] = session.expires


def forget(response: Response) -> None:
    """Delete the session cookie: the browser's half of logging out."""
    response.delete_cookie(SESSION_COOKIE, path="/", httponly=True, samesite="strict")
