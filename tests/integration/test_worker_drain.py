"""A stopping worker drains every run it claimed for its threads, those no thread had
begun yet included (docs/behaviour.md, Workers): handed back, they read ``running`` with
no lease until some other worker came, which a fleet stopped at once (a deploy) never
had."""

from __future__ import annotations

import logging
import threading
from pathlib import Path

import pytest
from tests.polling import wait_until

from tickwork import Context, Engine, RunStatus
from tickwork._services.worker import Worker


def test_runs_claimed_but_not_begun_when_the_worker_stops_still_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    # The executor threads take nothing until the drain has begun: every claim waits in
    # the worker's queue when it is told to stop, as one a firing pass just made would.
    gate = threading.Event()
    execute, drain = Worker._execute_forever, Worker._drain

    def gated_execute(self: Worker) -> None:
        gate.wait()
        execute(self)

    def opening_drain(self: Worker, pool: list[threading.Thread]) -> None:
        gate.set()
        drain(self, pool)

    monkeypatch.setattr(Worker, "_execute_forever", gated_execute)
    monkeypatch.setattr(Worker, "_drain", opening_drain)
    caplog.set_level(logging.INFO, logger="tickwork")
    with Engine(f"sqlite:///{tmp_path / 'drain.db'}") as engine:

        @engine.workflow("double")
        def double(ctx: Context, input: int) -> int:
            return ctx.step("twice", lambda: input * 2)  # type: ignore[no-any-return]

        with engine.worker(threads=2):
            runs = [engine.start("double", n).id for n in (1, 2)]
            wait_until(
                lambda: all(engine.get_run(r).status == RunStatus.RUNNING for r in runs),
                "both runs are claimed",
            )
            assert not gate.is_set()  # claimed, and no thread has begun them
        assert [engine.get_run(r).result for r in runs] == [2, 4]
    stopped = [r.getMessage() for r in caplog.records if " stopped (" in r.getMessage()]
    assert len(stopped) == 1 and stopped[0].endswith("(0 run(s) left to other workers)")
