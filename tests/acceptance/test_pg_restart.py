"""PostgreSQL gone in the middle of a fleet's work, then back some seconds later (every
connection is cut, and none can be made meanwhile): the workers recover by themselves,
the fleet's invariants hold (``pg_fleet``), and each worker reports the outage once, not
once per attempt, then says the database is reachable again.

The workers reach the server through a TCP proxy that the test cuts off
(``tests.pg_proxy``): to them it is a restarted server, and the shared server itself is
never stopped, so other suites using it at the same time are not disturbed.
"""

from __future__ import annotations

import re
import time

import pytest
from pg_fleet import Fleet
from tests.pg_proxy import proxied

pytestmark = pytest.mark.acceptance

WORKERS = 4
SCHEDULES = 5
SECONDS = 14
#: at most this many reports of the outage per worker: one from the loop, one from a
#: lease renewal and one from a pruning pass that were due while the server was down
#: (each background activity reports an outage once)
MAX_REPORTS = 3
DOWN_AFTER_NOTICED = 3.0  # seconds
RECOVERED = "the database is reachable again"


def _outage_reports(log: str) -> int:
    # "<time> ERROR tickwork <where>" (tickwork worker's readable lines): the reports go
    # to the "tickwork" logger itself; a run's life goes to "tickwork.runs"
    return len(re.findall(r" ERROR tickwork ", log))


def test_fleet_recovers_by_itself_from_a_postgres_restart(pg_harness):
    """5 schedules x 14 one-second occurrences, 4 workers; PostgreSQL cut off mid-way,
    kept away until every worker has met the outage and kept trying, then given back."""
    fleet = Fleet(pg_harness, schedules=SCHEDULES, seconds=SECONDS, nap_ms=100, threads=4)
    with proxied(pg_harness.base_url) as proxy:

        def start_worker(number: int):
            url = pg_harness.worker_url(f"w{number}").replace(pg_harness.base_url, proxy.url, 1)
            return fleet.start_worker(env={"TICKWORK_DATABASE_URL": url})

        workers = [start_worker(number) for number in range(1, WORKERS + 1)]
        pg_harness.wait_until(
            lambda: fleet.completed() >= 3 * SCHEDULES,
            "the fleet has completed runs",
            alive=workers,
        )
        # Cut the server off while a step executes: its checkpoint cannot be written, and
        # the worker holds the run's lease (renewing it in vain) until it abandons the
        # attempt.
        pg_harness.wait_until(fleet.in_step, "a step is executing", alive=workers)
        proxy.cut()
        try:
            pg_harness.wait_until(
                lambda: all(_outage_reports(w.log()) for w in workers),
                "every worker has reported the outage",
                alive=workers,
            )
            # Down a little longer: each worker's loop tries again every second meanwhile.
            time.sleep(DOWN_AFTER_NOTICED)
        finally:
            proxy.restore()
        pg_harness.wait_until(
            fleet.all_completed, f"all {fleet.total} runs are completed", alive=workers, timeout=120
        )
        pg_harness.wait_until(
            lambda: all(RECOVERED in w.log() for w in workers),
            "every worker has found the database again",
            alive=workers,
        )
        pg_harness.stop_cleanly(workers)

    counts = fleet.check()
    reports = {}
    for worker in workers:
        log = worker.log()
        reports[worker.name] = _outage_reports(log)
        assert 1 <= reports[worker.name] <= MAX_REPORTS, log
    print(f"\nafter a PostgreSQL restart: {counts}; errors reported per worker: {reports}")
