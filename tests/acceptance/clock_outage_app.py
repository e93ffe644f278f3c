"""The app of the clock-outage test: ``tickwork worker path/to/clock_outage_app.py:engine``.

Five schedules fire every second; each run returns this machine's wall time (UTC epoch
ms) when it started. The tests' PostgreSQL server runs on this machine, so that is the
database's time too: a run that returns less than its occurrence ran early.

The engine's reference clock syncs every 2 s rather than every 30 (test-only, through a
private attribute), so that a sync comes due while the test holds the database away.
"""

from __future__ import annotations

import os
import time

from tickwork import Context, Engine
from tickwork._values.clock import ReferenceClock

SCHEDULES = 5
REFRESH_NS = 2_000_000_000

engine = Engine(os.environ["TICKWORK_DATABASE_URL"], lease="10s")
assert isinstance(engine.clock, ReferenceClock)
engine.clock._refresh_ns = REFRESH_NS
engine.clock._due = None


@engine.workflow("clock-tick")
def clock_tick(ctx: Context) -> int:
    return time.time_ns() // 1_000_000


for i in range(SCHEDULES):
    engine.schedule("clock-tick", every="1s", key=f"clock-{i}", catchup="all")
