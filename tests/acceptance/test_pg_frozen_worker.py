"""A worker frozen inside a transaction (SIGSTOP: a VM paused, a swap storm, a debugger)
holds its row locks only briefly: the PostgreSQL server ends the idle transaction (the
store sets ``idle_in_transaction_session_timeout`` on every pooled connection, a third of
the lease), so the schedules it was firing fire and the run it was checkpointing is
taken over by the others. Before, they stayed locked for as long as it stayed frozen.

The frozen worker is a real process that takes the locks through the store's own pool
(configured as every tickwork connection is), reports it, and stops itself.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest
from tests.pg import fresh_schema

from tickwork import Context, Engine, RunStatus

pytestmark = [pytest.mark.acceptance, pytest.mark.postgres]

#: how long the others may take to get past the frozen worker (the lease is 3 s, the idle
#: transaction timeout 1 s): a bound with a wide margin, not a measurement
BOUND_S = 20.0

FREEZER = """
import os, signal, sys
from tickwork import Engine
engine = Engine(sys.argv[1], lease="3s")
engine.migrate()
db = engine._runtime.database._pg
with db.transaction() as tx:
    tx.execute(sys.argv[2], *sys.argv[3:])
    print("locked", flush=True)
    os.kill(os.getpid(), signal.SIGSTOP)
"""


@pytest.fixture
def url() -> Iterator[str]:
    with fresh_schema() as url:
        yield url


class Frozen:
    """A process that holds row locks in an open transaction, stopped (SIGSTOP)."""

    def __init__(self, url: str, statement: str, *params: str, folder: Path) -> None:
        script = folder / "freezer.py"
        script.write_text(FREEZER)
        self.proc = subprocess.Popen(
            [sys.executable, str(script), url, statement, *params],
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            env=os.environ.copy(),
        )
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline()
        assert line.strip() == "locked", line + self.proc.stdout.read()

    def end(self) -> None:
        self.proc.send_signal(signal.SIGCONT)
        self.proc.kill()
        self.proc.communicate()  # reaps it and closes its pipe


def until(condition: object, what: str) -> None:
    deadline = time.monotonic() + BOUND_S
    while not condition():  # type: ignore[operator]
        assert time.monotonic() < deadline, f"not within {BOUND_S:.0f} s: {what}"
        time.sleep(0.1)


def test_schedules_locked_by_a_worker_frozen_while_firing_fire_on_the_others(
    url: str, tmp_path: Path
) -> None:
    with Engine(url, lease="3s") as engine:

        @engine.workflow("tick")
        def tick(ctx: Context) -> None:
            return None

        keys = [engine.schedule("tick", every="1s", key=f"s{i}") for i in range(20)]
        # The frozen worker claimed every schedule's row, as a firing pass does.
        frozen = Frozen(url, "SELECT key FROM tickwork_schedules FOR UPDATE", folder=tmp_path)
        try:
            frozen_at = datetime.now(UTC)

            def every_schedule_fired_since_the_freeze() -> bool:
                engine.tick()
                for key in keys:
                    info = engine.get_schedule(key)
                    if info is None or info.last_fire_at is None:
                        return False
                    if info.last_fire_at <= frozen_at:
                        return False
                return True

            until(every_schedule_fired_since_the_freeze, "every schedule fired again")
        finally:
            frozen.end()


def test_a_run_locked_by_a_worker_frozen_inside_a_checkpoint_is_taken_over(
    url: str, tmp_path: Path
) -> None:
    with Engine(url, lease="3s") as engine:

        @engine.workflow("work")
        def work(ctx: Context) -> str:
            return ctx.step("only", lambda: "done")

        run = engine.start("work")
        (claim,) = engine._runtime.claim(1)  # held under a lease by "the frozen worker"
        assert claim.info.id == run.id
        # The frozen worker is inside a checkpoint: the run's queue row (its lease) is locked.
        frozen = Frozen(
            url,
            "UPDATE tickwork_queue SET available_at = available_at WHERE id = %s",
            run.id,
            folder=tmp_path,
        )
        try:

            def taken_over_and_completed() -> bool:
                engine.run_until_idle()
                found = engine.get_run(run.id)
                return found is not None and found.status is RunStatus.COMPLETED

            until(taken_over_and_completed, "the run taken over and completed")
            assert run.result(timeout=1) == "done"
        finally:
            frozen.end()
