"""The app of ``test_schedule_fleet``: ``tickwork worker path/to/schedule_app.py:engine``.

Every worker process imports it and so registers the same 1-second interval schedules at
start-up, unconditionally: registering an unchanged definition again changes nothing
(DESIGN §3), which is what a fleet of identical workers relies on. ``TICKWORK_DATABASE_URL``
names the database (``Engine`` reads it itself).

``catchup="all"``: should every worker stall for more than a second on a loaded machine,
the late occurrences still start (late) instead of being dropped, so the test's "every
occurrence fired exactly once" is a statement about correctness, never about timing.
"""

from __future__ import annotations

from typing import Any

from tickwork import Context, Engine

WORKFLOW = "fleet-noop"
EVERY = "1s"
#: schedule key -> input
SCHEDULES = {f"fleet-{name}": {"name": name} for name in ("a", "b", "c", "d", "e")}

engine = Engine()


@engine.workflow(WORKFLOW)
def fleet_noop(ctx: Context, input: dict[str, str]) -> dict[str, Any]:
    """Does nothing but say which occurrence it belongs to."""
    assert ctx.scheduled_for is not None
    return {"name": input["name"], "scheduled_for": ctx.scheduled_for.isoformat()}


for _key, _input in SCHEDULES.items():
    engine.schedule(WORKFLOW, _input, every=EVERY, key=_key, catchup="all")
