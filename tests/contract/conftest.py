"""One ``store`` fixture, parametrized by backend: every contract test runs on each.

PostgreSQL joins when ``TICKWORK_TEST_POSTGRES_URL`` is set. Without it the PostgreSQL
cases are skipped with the reason, except under CI (``CI=true``), where a missing or
unreachable PostgreSQL fails the run instead of passing it quietly.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from tickwork._store import Store, open_store

BACKENDS = ["sqlite"]


def _sqlite_store(tmp_path: Path) -> Store:
    return open_store(f"sqlite:///{tmp_path / 'contract.db'}")


@pytest.fixture(params=BACKENDS)
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Store]:
    if request.param == "postgres":
        url = os.environ.get("TICKWORK_TEST_POSTGRES_URL")
        if not url:
            if os.environ.get("CI"):
                pytest.fail("CI must set TICKWORK_TEST_POSTGRES_URL")
            pytest.skip("set TICKWORK_TEST_POSTGRES_URL to run the PostgreSQL contract tests")
        backend = open_store(url)
    else:
        backend = _sqlite_store(tmp_path)
    backend.migrate()
    try:
        yield backend
    finally:
        backend.close()
