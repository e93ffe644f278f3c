"""Stores: the contract and its SQL backends, opened by URL."""

from __future__ import annotations

from urllib.parse import urlsplit

from ..errors import ConfigError
from .contract import (
    BackfillDecide,
    ClaimedRun,
    ClaimRequest,
    DueSchedule,
    Ended,
    ExclusiveWrites,
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
    WorkerRecord,
)

__all__ = [
    "BackfillDecide",
    "ClaimRequest",
    "ClaimedRun",
    "DueSchedule",
    "Ended",
    "ExclusiveWrites",
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
    "WorkerRecord",
    "open_store",
]


def open_store(url: str, *, lease_ms: int | None = None) -> Store:
    """The store a URL names: ``sqlite:///file.db``, ``sqlite://`` (a private database in
    memory, for tests) or ``postgresql://...``. Nothing is connected yet: the first use
    connects, and raises ``StoreUnreachable`` at once when the database cannot be reached.

    ``lease_ms`` (the engine's lease) bounds how long a PostgreSQL transaction may sit
    idle: a third of it, from 2 to 5 seconds, so a frozen worker's locks are gone well
    before its leases expire.
    """
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
        if lease_ms is None:
            return PostgresStore(url)
        return PostgresStore(url, idle_timeout_ms=min(5_000, max(2_000, lease_ms // 3)))
    raise ConfigError(
        f"Bad database URL {url!r}: expected sqlite:///path/to/file.db or postgresql://..."
    )
