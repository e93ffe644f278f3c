"""The app of the PostgreSQL fleet tests: ``tickwork worker path/to/pg_fleet_app.py:engine``.

Every worker registers the same one-second interval schedules when it imports this module
(unchanged definitions: registering again changes nothing), bounded by ``start_at`` and
``end_at``, so the set of occurrences that must fire is known in advance, exactly, however
slowly the fleet fires them: ``catchup="all"`` lets none be dropped, only be late. The
test registers them first (``schedule_window``), before it starts any worker: a schedule's
occurrences before its first registration never fire (DESIGN §3), and a worker slow to
start under load registered them after the window had opened.

Configured by environment variables, the same in every worker of a test:

- ``TICKWORK_DATABASE_URL``: the database (read by ``Engine`` itself).
- ``FLEET_SCHEDULES``: how many schedules (keys ``fleet-00``, ``fleet-01``, ...).
- ``FLEET_START_MS`` and ``FLEET_SECONDS``: the window (UTC epoch ms, seconds): the
  occurrences are ``start + 1 s`` ... ``start + FLEET_SECONDS s``.
- ``FLEET_LEASE``: the workers' lease; ``FLEET_NAP_MS``: how long each step takes.
- ``ACCEPT_DIR``: where ``fleet.log`` is written (see ``LOG``).
"""

from __future__ import annotations

import os
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

from tickwork import Context, Engine

WORKFLOW = "fleet-steps"
STEPS = ("one", "two", "three")
#: one line per event, ``KIND run_id attempt step pid``, each written with one ``write`` on
#: an ``O_APPEND`` descriptor (lines of concurrent processes never interleave). KIND is
#: ``exec`` when a step function is entered and ``stored`` when ``ctx.step`` has returned
#: in the workflow (its checkpoint is stored: now, or by an earlier execution).
LOG = "fleet.log"


def keys(count: int) -> list[str]:
    return [f"fleet-{i:02d}" for i in range(count)]


def expected_result(key: str) -> dict[str, object]:
    return {"key": key, "value": len(key) + 6}


def _log(kind: str, ctx: Context, step: str) -> None:
    line = f"{kind} {ctx.run_id} {ctx.attempt} {step} {os.getpid()}\n".encode()
    fd = os.open(Path(os.environ["ACCEPT_DIR"], LOG), os.O_WRONLY | os.O_APPEND | os.O_CREAT)
    try:
        os.write(fd, line)
    finally:
        os.close(fd)


def _work(ctx: Context, step: str, value: int) -> int:
    _log("exec", ctx, step)
    time.sleep(int(os.environ.get("FLEET_NAP_MS", "0")) / 1000)
    return value


engine = Engine(lease=os.environ.get("FLEET_LEASE", "5s"))


def fleet_steps(ctx: Context, input: dict[str, str]) -> dict[str, object]:
    """Three checkpointed steps; the result depends on each of them."""
    value = len(input["key"])
    for add, step in enumerate(STEPS, start=1):
        value = ctx.step(step, _work, ctx, step, value + add)
        _log("stored", ctx, step)
    return {"key": input["key"], "value": value}


def schedule_window(engine: Engine, start: datetime, seconds: int, count: int) -> None:
    """Register the fleet's ``count`` schedules on ``engine`` (which knows ``fleet_steps``):
    one occurrence a second from ``start`` + 1 s to ``start`` + ``seconds``."""
    end = start + timedelta(seconds=seconds)
    for key in keys(count):
        engine.schedule(
            WORKFLOW, {"key": key}, every="1s", key=key, catchup="all",
            start_at=start, end_at=end,
        )  # fmt: skip


engine.workflow(WORKFLOW)(fleet_steps)
if os.environ.get("FLEET_START_MS"):
    schedule_window(
        engine,
        datetime.fromtimestamp(int(os.environ["FLEET_START_MS"]) / 1000, UTC),
        int(os.environ["FLEET_SECONDS"]),
        int(os.environ["FLEET_SCHEDULES"]),
    )
