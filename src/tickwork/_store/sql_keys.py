"""API keys in SQL: only a hash of each secret is kept."""

from __future__ import annotations

from .._values.clock import from_ms
from .._values.models import ApiKeyInfo
from .transaction import Database, Transaction

__all__ = ["ApiKeysSql"]

# Store a key; a live name is unique (partial unique index), so a clash inserts nothing.
INSERT_API_KEY = """
INSERT INTO tickwork_api_keys (id, name, secret_hash, created_at) VALUES (?, ?, ?, ?)
ON CONFLICT DO NOTHING
"""
# The hash of a live key's secret.
SELECT_API_KEY_HASH = (
    "SELECT secret_hash FROM tickwork_api_keys WHERE id = ? AND revoked_at IS NULL"
)
# Every key, revoked ones included, oldest first.
SELECT_API_KEYS = (
    "SELECT id, name, created_at, revoked_at FROM tickwork_api_keys ORDER BY created_at, id"
)
# Revoke the live key with this id.
REVOKE_BY_ID = "UPDATE tickwork_api_keys SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL"
# Revoke the live key with this name (live names are unique).
REVOKE_BY_NAME = "UPDATE tickwork_api_keys SET revoked_at = ? WHERE name = ? AND revoked_at IS NULL"


class ApiKeysSql:
    """``KeyStore`` over a dialect's ``Database``."""

    __slots__ = ("_db",)

    def __init__(self, db: Database) -> None:
        self._db = db

    def create_api_key(self, *, key_id: str, name: str, secret_hash: str, now_ms: int) -> bool:
        def work(tx: Transaction) -> bool:
            tx.execute(INSERT_API_KEY, key_id, name, secret_hash, now_ms)
            return tx.rowcount == 1

        return self._db.write(work)

    def api_key_hash(self, key_id: str) -> str | None:
        with self._db.read() as tx:
            row = tx.execute(SELECT_API_KEY_HASH, key_id).fetchone()
        return None if row is None else str(row[0])

    def list_api_keys(self) -> list[ApiKeyInfo]:
        with self._db.read() as tx:
            rows = tx.execute(SELECT_API_KEYS).fetchall()
        return [
            ApiKeyInfo(
                id=key_id,
                name=name,
                created_at=from_ms(created_ms),
                revoked_at=None if revoked_ms is None else from_ms(revoked_ms),
            )
            for key_id, name, created_ms, revoked_ms in rows
        ]

    def revoke_api_key(self, name_or_id: str, *, now_ms: int) -> bool:
        def work(tx: Transaction) -> bool:
            # An id names one key; only when no live key has it is it read as a name, so
            # "revoke X" never revokes two keys (one whose id and another whose name is X).
            tx.execute(REVOKE_BY_ID, now_ms, name_or_id)
            if tx.rowcount == 0:
                tx.execute(REVOKE_BY_NAME, now_ms, name_or_id)
            return tx.rowcount > 0

        return self._db.write(work)
