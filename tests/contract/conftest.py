"""One ``store`` fixture, parametrized by backend: every contract test runs on each.

PostgreSQL cases use a fresh schema each (see ``tests/pg.py``): they skip with a reason
without ``TICKWORK_TEST_POSTGRES_URL``, and fail instead under CI.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from tests.pg import fresh_schema

from tickwork._store import Store, open_store

BACKENDS = ["sqlite", "postgres"]


@pytest.fixture(params=BACKENDS)
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Store]:
    if request.param == "postgres":
        with fresh_schema() as url:
            backend = open_store(url)
            backend.migrate()
            try:
                yield backend
            finally:
                backend.close()
        return
    backend = open_store(f"sqlite:///{tmp_path / 'contract.db'}")
    backend.migrate()
    try:
        yield backend
    finally:
        backend.close()
