"""The API keys part of the store contract (``store.keys``). ``sql_keys.py`` implements it
on both backends.
"""

from __future__ import annotations

from typing import Protocol

from .._values.models import (
    ApiKeyInfo,
)

__all__ = ["KeyStore"]


class KeyStore(Protocol):
    """API keys: only a hash of each secret is kept."""

    def create_api_key(self, *, key_id: str, name: str, secret_hash: str, now_ms: int) -> bool:
        """Store a key; False (nothing stored) when a live key already has that name."""
        ...

    def api_key_hash(self, key_id: str) -> str | None:
        """The stored hash of a live (not revoked) key's secret, or None."""
        ...

    def list_api_keys(self) -> list[ApiKeyInfo]:
        """Every key, revoked ones included, oldest first."""
        ...

    def revoke_api_key(self, name_or_id: str, *, now_ms: int) -> bool:
        """Revoke the live key with this id, else the live key with this name (never both);
        False when there is none."""
        ...
