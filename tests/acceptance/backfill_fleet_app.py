"""The app of ``test_backfill_fleet``: ``tickwork worker path/to/backfill_fleet_app.py:engine``.

One workflow that takes ``input["seconds"]`` to run (so that runs of a one-second schedule
overlap and ``buffer_all`` has occurrences to queue). The test registers the schedules;
``TICKWORK_DATABASE_URL`` names the database.
"""

from __future__ import annotations

import time
from typing import Any

from tickwork import Context, Engine

WORKFLOW = "bf-job"

engine = Engine()


@engine.workflow(WORKFLOW)
def bf_job(ctx: Context, input: dict[str, Any]) -> str:
    time.sleep(float(input["seconds"]))
    assert ctx.scheduled_for is not None
    return ctx.scheduled_for.isoformat()
