"""An outage met by one part of a worker: reported to ``on_error`` once, however many
attempts fail, and said to be over once in the log, by that part alone (a worker's
heartbeat may meet an outage its loop never does: test_pg_restart)."""

from __future__ import annotations

import logging
from typing import Any

import pytest

from tickwork._runtime.hooks import Hooks, Outage
from tickwork.errors import StoreError


def test_an_outage_is_reported_once_and_its_end_said_once(caplog: pytest.LogCaptureFixture) -> None:
    reports: list[tuple[str, dict[str, Any]]] = []
    hooks = Hooks(on_error=lambda exc, info: reports.append((str(exc), info)))
    heartbeat = Outage(hooks, "recording the worker")
    with caplog.at_level(logging.WARNING, logger="tickwork"):
        heartbeat.succeeded()  # nothing was wrong: nothing said
        for attempt in range(3):
            heartbeat.failed(StoreError(f"gone {attempt}"))
        heartbeat.succeeded()
        heartbeat.succeeded()
        heartbeat.failed(StoreError("gone again"))
        heartbeat.succeeded()
    assert reports == [
        ("gone 0", {"where": "recording the worker", "outage": True}),
        ("gone again", {"where": "recording the worker", "outage": True}),
    ]
    said = [r.getMessage() for r in caplog.records if "reachable" in r.getMessage()]
    assert said == ["the database is reachable again (recording the worker)"] * 2
