"""Stores: the contract and its SQL backends, opened by URL."""

from __future__ import annotations

from urllib.parse import urlsplit

from ..errors import ConfigError
from .contract import (
    ClaimedRun,
    ClaimRequest,
    DueSchedule,
    Ended,
    FireResult,
    LeaseLost,
    Listening,
    NewRun,
    ReferenceTime,
    Registration,
    ScheduleRecord,
    StatsSource,
    StepRecord,
    Store,
)

__all__ = [
    "ClaimRequest",
    "ClaimedRun",
    "DueSchedule",
    "Ended",
    "FireResult",
    "LeaseLost",
    "Listening",
    "NewRun",
    "ReferenceTime",
    "Registration",
    "ScheduleRecord",
    "StatsSource",
    "StepRecord",
    "Store",
    "open_store",
]


def open_store(url: str) -> Store:
    """The store a URL names: ``sqlite:///file.db`` or ``postgresql://...``."""
    if not isinstance(url, str):
        raise ConfigError(f"Bad database URL {url!r}: expected a string")
    scheme = urlsplit(url).scheme
    if scheme == "sqlite":
        from .sqlite import SQLiteStore

        return SQLiteStore(url)
    if scheme in ("postgresql", "postgres"):
        try:
            from .postgres import PostgresStore
        except ImportError as exc:
            raise ConfigError("PostgreSQL needs psycopg: pip install 'tickwork[postgres]'") from exc
        return PostgresStore(url)
    raise ConfigError(
        f"Bad database URL {url!r}: expected sqlite:///path/to/file.db or postgresql://..."
    )
