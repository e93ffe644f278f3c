"""Fixtures shared by every test layer.

``db_url`` is parametrized by backend: every test that takes it (or ``engine``) runs on
SQLite and on PostgreSQL (a fresh schema each; see ``tests/pg.py``). A test that is about
one backend takes ``sqlite_url`` instead.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.pg import ENV, fresh_schema
from tests.timeline import START
from tickwork import Engine
from tickwork.testing import FakeClock


def pytest_report_header() -> str:
    """Say up front whether the PostgreSQL half of the suite runs, and how to make it."""
    if os.environ.get(ENV):
        return f"PostgreSQL tests: on ({ENV} is set)"
    return f"PostgreSQL tests: SKIPPED, each saying why (set {ENV} to run them)"


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport() -> Iterator[pytest.TestReport]:
    """Each report's captured output as UTF-8 can carry it: pytest-xdist sends reports to
    the main process as UTF-8, and a lone surrogate (logged on purpose by
    ``test_poison_runs``) stopped the whole run there. Escaped as Python escapes it."""
    report = yield
    report.sections = [
        (title, text.encode("utf-8", "backslashreplace").decode("utf-8"))
        for title, text in report.sections
    ]
    return report


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock(START)


@pytest.fixture
def sqlite_url(tmp_path: Path) -> str:
    return f"sqlite:///{tmp_path / 'tickwork.db'}"


@pytest.fixture(params=["sqlite", "postgres"])
def db_url(request: pytest.FixtureRequest, sqlite_url: str) -> Iterator[str]:
    if request.param == "sqlite":
        yield sqlite_url
        return
    with fresh_schema() as url:
        yield url


@pytest.fixture
def engine(db_url: str, clock: FakeClock) -> Iterator[Engine]:
    with Engine(db_url, clock=clock, lease="30s") as engine:
        yield engine
