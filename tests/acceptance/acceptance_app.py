"""The app the acceptance tests' worker processes run: ``tickwork worker acceptance_app.py:engine``.

Configured by environment variables (see ``acceptance_workflows`` for the others):
``TICKWORK_DATABASE_URL`` (read by ``Engine`` itself), ``ACCEPT_LEASE`` (the lease length)
and ``ACCEPT_CLOCK_OFFSET`` (a duration this process's clock runs ahead of the wall clock:
a worker "coming back later", without the test waiting for it).
"""

from __future__ import annotations

import os
from datetime import UTC, datetime, timedelta

from acceptance_workflows import define, sigterm_inside_event_clear, watch_sigterm

from tickwork import Engine, parse_duration


class OffsetClock:
    """The wall clock, ``offset`` ahead."""

    def __init__(self, offset: timedelta) -> None:
        self.offset = offset

    def now(self) -> datetime:
        return datetime.now(UTC) + self.offset


_offset = os.environ.get("ACCEPT_CLOCK_OFFSET")
engine = Engine(
    lease=os.environ.get("ACCEPT_LEASE", "30s"),
    clock=OffsetClock(parse_duration(_offset)) if _offset else None,
)
define(engine)
if os.environ.get("ACCEPT_HOLD", "").endswith("=sigterm"):
    watch_sigterm()
if os.environ.get("ACCEPT_SIGTERM_INSIDE_EVENT_CLEAR"):
    sigterm_inside_event_clear()
