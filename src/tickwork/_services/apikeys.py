"""API keys for the HTTP API and the dashboard: random secrets, kept only as hashes.

A key reads ``tw_<id>_<secret>``: the id finds the stored row, the secret is checked
against its SHA-256 in constant time. The secret has 256 bits of randomness, so a fast
hash is the right one (as for GitHub's tokens): a slow password hash protects guessable
secrets, and nobody can guess these.

``ApiKeys`` is what ``Engine`` hands its key methods to, over the runtime's store.
"""

from __future__ import annotations

import hashlib
import hmac
import re
import secrets

from .._runtime.core import Runtime
from .._store import Store
from .._values.checks import CONTROL_SAID, has_control
from .._values.models import ApiKeyInfo
from ..errors import ConfigError

__all__ = ["ApiKeys", "create_key", "hash_secret", "revoke_key", "verify_key"]

_TOKEN = re.compile(r"^tw_([0-9a-f]{12})_([A-Za-z0-9_-]{43})$")
_MAX_NAME = 100


def hash_secret(secret: str) -> str:
    return hashlib.sha256(secret.encode()).hexdigest()


def create_key(store: Store, name: str, now_ms: int) -> str:
    """Create a key named ``name``; return the whole key (shown once, never stored)."""
    if not isinstance(name, str) or not name.strip() or len(name) > _MAX_NAME or has_control(name):
        raise ConfigError(
            f"An API key name must be 1 to {_MAX_NAME} characters without {CONTROL_SAID}, "
            f"not {name!r}"
        )
    key_id = secrets.token_hex(6)
    secret = secrets.token_urlsafe(32)
    if not store.keys.create_api_key(
        key_id=key_id, name=name, secret_hash=hash_secret(secret), now_ms=now_ms
    ):
        raise ConfigError(f"An API key named {name!r} exists: revoke it or choose another name")
    return f"tw_{key_id}_{secret}"


def verify_key(store: Store, token: str) -> str | None:
    """The id of the live key ``token`` is, or None. Constant time in the secret."""
    match = _TOKEN.match(token) if isinstance(token, str) else None
    if match is None:
        return None
    stored = store.keys.api_key_hash(match.group(1))
    # Compare even when the id is unknown, so timing says nothing about which ids exist.
    expected = stored if stored is not None else hash_secret("")
    valid = hmac.compare_digest(expected, hash_secret(match.group(2)))
    return match.group(1) if valid and stored is not None else None


def revoke_key(store: Store, name_or_id: str, now_ms: int) -> bool:
    return store.keys.revoke_api_key(name_or_id, now_ms=now_ms)


class ApiKeys:
    """The API key operations ``Engine`` exposes, at the runtime's clock."""

    def __init__(self, runtime: Runtime) -> None:
        self._runtime = runtime

    def create(self, name: str) -> str:
        return create_key(self._runtime.store, name, self._runtime.now_ms())

    def list_all(self) -> list[ApiKeyInfo]:
        return self._runtime.store.keys.list_api_keys()

    def revoke(self, name_or_id: str) -> bool:
        return revoke_key(self._runtime.store, name_or_id, self._runtime.now_ms())

    def verify(self, token: str) -> str | None:
        return verify_key(self._runtime.store, token)

    def is_live(self, key_id: str) -> bool:
        """Whether the key with this id exists and is not revoked (a revoked key has no
        hash)."""
        return self._runtime.store.keys.api_key_hash(key_id) is not None
