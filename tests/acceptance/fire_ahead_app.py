"""The app of ``test_fire_ahead_kill``: ``tickwork worker path/to/fire_ahead_app.py:engine``.

One hourly schedule whose first occurrence is ``ACCEPT_OCCURRENCE`` (an ISO instant);
``ACCEPT_FIRE_AHEAD`` (a duration, or empty) is the worker's ``Engine(fire_ahead=...)``.
``TICKWORK_DATABASE_URL`` names the database.
"""

from __future__ import annotations

import os
from datetime import datetime, timedelta

from tickwork import Context, Engine

WORKFLOW = "ahead-noop"
KEY = "ahead"

engine = Engine(fire_ahead=os.environ.get("ACCEPT_FIRE_AHEAD") or None)


@engine.workflow(WORKFLOW)
def ahead_noop(ctx: Context) -> str:
    """Says which occurrence it ran for."""
    assert ctx.scheduled_for is not None
    return ctx.scheduled_for.isoformat()


_occurrence = datetime.fromisoformat(os.environ["ACCEPT_OCCURRENCE"])
# An interval's first occurrence is one interval after start_at.
engine.schedule(WORKFLOW, every="1h", key=KEY, start_at=_occurrence - timedelta(hours=1))
