"""PostgreSQL for tests: one fresh schema per test, from ``TICKWORK_TEST_POSTGRES_URL``.

Without the variable the PostgreSQL cases skip with the reason, except under CI
(``CI=true``), where a missing or unreachable PostgreSQL fails instead of passing quietly.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from urllib.parse import quote

import pytest

ENV = "TICKWORK_TEST_POSTGRES_URL"


def base_url() -> str:
    url = os.environ.get(ENV)
    if not url:
        if os.environ.get("CI"):
            pytest.fail(f"CI must set {ENV} (PostgreSQL tests never skip there)")
        pytest.skip(f"set {ENV} (e.g. postgresql://postgres@127.0.0.1:5432/test) to run")
    return url


@contextmanager
def fresh_schema() -> Iterator[str]:
    """A database URL whose tables live in a new schema, dropped afterwards."""
    import psycopg

    url = base_url()
    schema = f"tw_{uuid.uuid4().hex[:12]}"
    try:
        with psycopg.connect(url, autocommit=True) as conn:
            conn.execute(f"CREATE SCHEMA {schema}")
    except psycopg.OperationalError as exc:
        pytest.fail(f"PostgreSQL at {url} is unreachable: {exc}")
    separator = "&" if "?" in url else "?"
    try:
        yield f"{url}{separator}options={quote(f'-csearch_path={schema}')}"
    finally:
        with psycopg.connect(url, autocommit=True) as conn:
            conn.execute(f"DROP SCHEMA {schema} CASCADE")


def table_rows(url: str, table: str) -> list[tuple[object, ...]]:
    """Every row of a tickwork table, read with the database's own driver (what an
    attacker with the database file or a login would see)."""
    if url.startswith("sqlite:///"):
        import sqlite3

        with sqlite3.connect(url.removeprefix("sqlite:///")) as conn:
            return list(conn.execute(f"SELECT * FROM {table}").fetchall())
    import psycopg

    with psycopg.connect(url) as conn:
        return list(conn.execute(f"SELECT * FROM {table}").fetchall())  # type: ignore[arg-type]


def delete_rows(url: str, table: str) -> int:
    """Delete every row of a tickwork table with the database's own driver (as pruning,
    or a person at the database prompt, would); return how many went."""
    if url.startswith("sqlite:///"):
        import sqlite3

        with sqlite3.connect(url.removeprefix("sqlite:///")) as conn:
            return conn.execute(f"DELETE FROM {table}").rowcount
    import psycopg

    with psycopg.connect(url) as conn:
        return conn.execute(f"DELETE FROM {table}").rowcount  # type: ignore[arg-type]
