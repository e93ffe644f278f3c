"""Stores: the contract and its SQL backends, opened by URL."""

from __future__ import annotations

from urllib.parse import urlsplit, urlunsplit

from ..errors import ConfigError, StoreUnreachable
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
    "require_existing",
    "shown_url",
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


def shown_url(url: str) -> str:
    """The URL as messages name the database: as given, without its password."""
    parts = urlsplit(url)
    if parts.password is None and "password=" not in parts.query:
        return url
    if parts.password is not None:
        credentials, _, host = parts.netloc.rpartition("@")
        parts = parts._replace(netloc=f"{credentials.partition(':')[0]}:***@{host}")
    query = "&".join(
        "password=***" if pair.startswith("password=") else pair for pair in parts.query.split("&")
    )
    return urlunsplit(parts._replace(query=query))


def require_existing(url: str) -> None:
    """``StoreUnreachable`` when ``url`` names a SQLite file that does not exist (opening
    it would create an empty database); nothing for any other URL."""
    if urlsplit(url).scheme != "sqlite":
        return
    from .sqlite import parse_sqlite_url

    path = parse_sqlite_url(url)[0]
    if path is None or path.exists():
        return
    full = path.absolute()
    if not full.parent.is_dir():  # as opening it would say
        raise StoreUnreachable(
            f"SQLite file {str(path)!r}", f"its folder {str(full.parent)!r} does not exist"
        )
    raise StoreUnreachable(f"SQLite file {str(full)!r}", "no such file")
