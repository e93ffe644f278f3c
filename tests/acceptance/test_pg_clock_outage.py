"""A worker cut off from PostgreSQL while its clock's sync comes due runs nothing early
once the database is back.

The worker reaches the database through a TCP proxy that the test cuts off for a few
seconds (the shared server itself is never stopped). Its reference clock syncs every 2 s
(``clock_outage_app.py``), so a sync waits out the outage for a pooled connection. That
wait once counted in the sync's round trip: the clock ran ahead by half of it, and runs
started up to seconds before their occurrences (520 of 1,240 runs after an 8 s outage).
"""

from __future__ import annotations

import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from tests.pg_proxy import proxied

from tickwork import RunStatus

pytestmark = [pytest.mark.acceptance, pytest.mark.postgres]

APP = f"{Path(__file__).parent / 'clock_outage_app.py'}:engine"
OUTAGE_S = 6.0
#: how much earlier than its occurrence a run may read this machine's wall clock: the
#: worker counts time between syncs on the steady clock, from which NTP may slew the
#: wall clock by up to 0.5 ms a second (2 s between syncs here); anything more is early
SLEW = timedelta(milliseconds=5)


def test_no_run_starts_before_its_occurrence_after_an_outage_in_the_middle_of_a_sync(
    pg_harness,
):
    """Five one-second schedules on one worker; the database cut off for 6 s, then
    given back, while its clock's sync waits; every run it completed started at or
    after its occurrence, by the database server's (this machine's) clock."""
    with proxied(pg_harness.base_url) as proxy:
        url = pg_harness.worker_url("w1").replace(pg_harness.base_url, proxy.url, 1)
        worker = pg_harness.app_worker(APP, env={"TICKWORK_DATABASE_URL": url}, name="w1")
        engine = pg_harness.engine

        def completed() -> list:
            return engine.list_runs(workflow="clock-tick", status=RunStatus.COMPLETED, limit=1000)

        pg_harness.wait_until(lambda: len(completed()) >= 10, "runs completed", alive=[worker])
        proxy.cut()
        time.sleep(OUTAGE_S)
        proxy.restore()
        back = datetime.now(UTC)
        pg_harness.wait_until(
            lambda: any(r.scheduled_for > back + timedelta(seconds=6) for r in completed()),
            "runs completed 6 s after the outage",
            alive=[worker],
        )
        worker.terminate()
        worker.wait_exit()
    runs = completed()
    early = [
        (run.id, run.scheduled_for - datetime.fromtimestamp(run.result / 1000, UTC))
        for run in runs
        if datetime.fromtimestamp(run.result / 1000, UTC) < run.scheduled_for - SLEW
    ]
    after = [run for run in runs if run.scheduled_for > back]
    assert len(after) >= 5 * 5, "runs after the outage"
    assert early == [], f"{len(early)} of {len(runs)} runs started early: {early[:5]}"
