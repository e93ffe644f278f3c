"""A worker frozen inside a transaction (SIGSTOP: a VM paused, a swap storm, a debugger)
holds its row locks only briefly: the PostgreSQL server ends the idle transaction (the
store sets ``idle_in_transaction_session_timeout`` on every pooled connection, a third of
the lease), so the schedules it was firing fire and the run it was checkpointing is
taken over by the others. Before, they stayed locked for as long as it stayed frozen.

The frozen worker is a real process that takes the locks through the store's own pool
(configured as every tickwork connection is), reports it, and stops itself: either after
a statement of the test's own, or after each statement of a real firing pass and of a
real checkpoint in turn (``freezer_app.py``). The server must end the transaction
whatever statement it froze after: psycopg's pipelined ``executemany`` once left the
timeout disarmed (``_store/pg_bulk.py``), and a worker frozen after one held its
schedules for good.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from itertools import count
from pathlib import Path

import pytest
from tests.pg import fresh_schema

from tickwork import Context, Engine, RunStatus

pytestmark = [pytest.mark.acceptance, pytest.mark.postgres]

#: how long the others may take to get past the frozen worker (the lease is 3 s, the idle
#: transaction timeout 1 s): a bound with a wide margin, not a measurement
BOUND_S = 20.0
FREEZER_APP = Path(__file__).parent / "freezer_app.py"
#: schedules one firing pass of the frozen worker holds (all in one transaction)
SCHEDULES = 20

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


def _answer(condition: Callable[[], bool], answer: list[bool | Exception]) -> None:
    try:
        answer.append(condition())
    except Exception as exc:  # raised by until(), unless the call came too late
        answer.append(exc)


def until(condition: Callable[[], bool], what: str) -> None:
    """Wait for ``condition`` to hold, failing after ``BOUND_S`` even if a call of it
    never returns (a write that waits for the frozen transaction's row: a run id it
    inserted, say): each call is made on a thread of its own."""
    deadline = time.monotonic() + BOUND_S
    while True:
        answer: list[bool | Exception] = []
        call = threading.Thread(target=_answer, args=(condition, answer), daemon=True)
        call.start()
        call.join(max(0.0, deadline - time.monotonic()))
        if answer and isinstance(answer[0], Exception):
            raise answer[0]
        if answer and answer[0]:
            return
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


class FrozenInside:
    """A tickwork process frozen after the Nth statement of its next firing pass or
    checkpoint (``freezer_app.py``), or finished when that transaction had fewer."""

    def __init__(self, url: str, mode: str, statement: int, expected: int = 0) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, str(FREEZER_APP), url, mode, str(statement), str(expected)],
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            env=os.environ.copy(),
        )
        assert self.proc.stdout is not None
        self.line = self.proc.stdout.readline().strip()
        if self.line == "finished":
            self.proc.communicate()
        assert self.line.startswith(("frozen", "finished")), self.line + self.proc.stdout.read()

    @property
    def finished(self) -> bool:
        return self.line == "finished"

    def end(self) -> None:
        if self.proc.returncode is None:
            self.proc.send_signal(signal.SIGCONT)
            self.proc.kill()
            self.proc.communicate()
        print(self.line)


def test_a_worker_frozen_after_any_statement_of_a_firing_pass_holds_its_schedules_briefly(
    url: str,
) -> None:
    """For each statement of a firing pass of 20 schedules in turn (the select that locks
    them, the runs' and history's bulk inserts, the schedules' advance, the counters...),
    a worker frozen right after it: every schedule fires on another worker within the
    bound. It fails on a pass whose transaction the server does not end."""
    with Engine(url, lease="3s") as engine:

        @engine.workflow("tick")
        def tick(ctx: Context) -> None:
            return None

        start = datetime.now(UTC)  # one anchor: every schedule is due at the same instants
        keys = [
            engine.schedule("tick", every="1s", key=f"s{i}", start_at=start)
            for i in range(SCHEDULES)
        ]
        for statement in count(1):
            frozen = FrozenInside(url, "firing", statement, SCHEDULES)
            try:
                if frozen.finished:
                    break
                frozen_at = datetime.now(UTC)

                def every_schedule_fired_since_the_freeze(frozen_at: datetime = frozen_at) -> bool:
                    engine.tick()
                    infos = [engine.get_schedule(key) for key in keys]
                    return all(
                        info is not None and info.last_fire_at is not None
                        and info.last_fire_at > frozen_at
                        for info in infos
                    )  # fmt: skip

                until(
                    every_schedule_fired_since_the_freeze, f"every schedule fired ({frozen.line})"
                )
            finally:
                frozen.end()
        assert statement > 4, "a firing pass has more statements than that"


def test_a_worker_frozen_after_any_statement_of_a_checkpoint_loses_the_run_to_another(
    url: str,
) -> None:
    """For each statement of a checkpoint in turn (the lease check-and-renew with the
    step's upsert, the counters...), a worker frozen right after it: another worker takes
    the run over once its lease expires and completes it, within the bound."""
    with Engine(url, lease="3s") as engine:

        @engine.workflow("work")
        def work(ctx: Context) -> str:
            return ctx.step("only", lambda: "done")

        for statement in count(1):
            run = engine.start("work")
            frozen = FrozenInside(url, "checkpoint", statement)
            try:
                if frozen.finished:  # the frozen worker's checkpoint committed: its run ended
                    assert run.result(timeout=BOUND_S) == "done"
                    break

                def taken_over_and_completed(run_id: str = run.id) -> bool:
                    engine.run_until_idle()
                    found = engine.get_run(run_id)
                    return found is not None and found.status is RunStatus.COMPLETED

                until(taken_over_and_completed, f"the run taken over ({frozen.line})")
                assert run.result(timeout=1) == "done"
            finally:
                frozen.end()
        assert statement > 1, "a checkpoint has more statements than that"
