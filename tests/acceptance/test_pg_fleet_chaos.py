"""Eight worker processes on PostgreSQL race on twenty 1-second schedules while a chaos loop
SIGKILLs a random worker every 2 s (on average) and starts a replacement: every occurrence still
starts exactly one run, none is missed, every run completes, and no step whose
checkpoint was stored runs again (``pg_fleet`` states the invariants).

Workers hold 5-second leases: a killed worker's runs wait for that long, then a survivor
takes them over. The kills are random; the seed is printed (``pytest -s``) with what
happened, so a failure can be replayed.
"""

from __future__ import annotations

import random
import time

import pytest
from pg_fleet import Fleet

pytestmark = pytest.mark.acceptance

WORKERS = 8
SCHEDULES = 20
SECONDS = 20
KILL_EVERY = 2.0


def test_fleet_under_sigkill_chaos_fires_each_occurrence_once_and_loses_nothing(pg_harness):
    """20 schedules x 20 one-second occurrences, 8 workers, one SIGKILLed every 2 s."""
    fleet = Fleet(pg_harness, schedules=SCHEDULES, seconds=SECONDS, nap_ms=100, threads=4)
    seed = random.randrange(1 << 32)
    rng = random.Random(seed)
    live = [fleet.start_worker() for _ in range(WORKERS)]
    killed: set[int] = set()

    # Chaos until the window's last occurrence is due: each kill can land anywhere (in a
    # step, between a checkpoint and the next, while firing, while claiming).
    while fleet.seconds_until_closed() > 0:
        # Random intervals (2 s on average): runs are fired in bursts on the whole second,
        # and a fixed period would keep hitting the same phase of that burst.
        time.sleep(rng.uniform(0.5, 2 * KILL_EVERY - 0.5))
        victim = rng.choice(live)
        victim.kill()
        killed.add(victim.pid)
        live.remove(victim)
        live.append(fleet.start_worker())

    # Quiet: the survivors fire what is left and take over the killed workers' runs.
    try:
        pg_harness.wait_until(
            fleet.all_completed, f"all {fleet.total} runs are completed", alive=live, timeout=120
        )
    except pytest.fail.Exception as failed:  # say which runs, and why, before the logs
        pytest.fail(f"chaos seed {seed}: {fleet.not_completed()}\n{failed}")
    pg_harness.stop_cleanly(live)

    counts = fleet.check(killed=frozenset(killed))
    print(f"\nchaos seed {seed}: {len(killed)} workers SIGKILLed; {counts}")
