"""Fixtures shared by every test layer."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest

from tickwork import Engine
from tickwork.testing import FakeClock

START = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock(START)


@pytest.fixture
def db_url(tmp_path: Path) -> str:
    return f"sqlite:///{tmp_path / 'tickwork.db'}"


@pytest.fixture
def engine(db_url: str, clock: FakeClock) -> Iterator[Engine]:
    with Engine(db_url, clock=clock, lease="30s") as engine:
        yield engine
