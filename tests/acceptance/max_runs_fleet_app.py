"""The app of ``test_max_runs_fleet``: ``tickwork worker path/to/max_runs_fleet_app.py:engine``.

The workers only execute: the test registers the schedules (``max_runs`` set) before it
starts them. ``TICKWORK_DATABASE_URL`` names the database.
"""

from __future__ import annotations

from tickwork import Context, Engine

WORKFLOW = "limited-job"

engine = Engine()


@engine.workflow(WORKFLOW)
def limited_job(ctx: Context) -> str:
    assert ctx.scheduled_for is not None
    return ctx.scheduled_for.isoformat()
