"""The app of ``test_backfill_fleet``: ``tickwork worker path/to/backfill_fleet_app.py:engine``.

One workflow that takes ``input["seconds"]`` to run (so that runs of a one-second schedule
overlap and ``buffer_all`` has occurrences to queue). The test registers the schedules;
``TICKWORK_DATABASE_URL`` names the database. Each execution appends its run id and when
it began and ended, read off this machine's one wall clock, to ``EXECUTIONS`` in
``ACCEPT_DIR``: the runs' ``started_at``/``finished_at`` come from each process's clock
(on PostgreSQL the database's, as each process last read it: they agree within a round
trip, not to the millisecond), so whether executions overlapped is told from this log.
"""

from __future__ import annotations

import os
import time
from typing import Any

from tickwork import Context, Engine

WORKFLOW = "bf-job"
EXECUTIONS = "executions.log"

engine = Engine()


@engine.workflow(WORKFLOW)
def bf_job(ctx: Context, input: dict[str, Any]) -> str:
    began = time.time()
    time.sleep(float(input["seconds"]))
    line = f"{ctx.run_id} {began!r} {time.time()!r}\n"
    with open(os.path.join(os.environ["ACCEPT_DIR"], EXECUTIONS), "a") as log:
        log.write(line)  # one small append: whole lines, whichever process writes
    assert ctx.scheduled_for is not None
    return ctx.scheduled_for.isoformat()
