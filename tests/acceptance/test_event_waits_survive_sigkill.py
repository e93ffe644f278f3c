"""A worker SIGKILLed while its run waits for an event loses nothing (DESIGN §9): a
waiting run holds no worker, so the next emit wakes it and another worker finishes it."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest
from tests.acceptance.conftest import WAIT, WorkerProcess, tickwork_command

from tickwork import Engine, RunStatus

pytestmark = pytest.mark.acceptance

APP = f"{Path(__file__).parent / 'events_app.py'}:engine"


def _worker(name: str, url: str, tmp_path: Path) -> WorkerProcess:
    env = {**os.environ, "TICKWORK_DATABASE_URL": url, "PYTHONUNBUFFERED": "1"}
    args = [*tickwork_command(), "worker", APP, "--log-level", "INFO"]
    return WorkerProcess(name, args, env, tmp_path / f"{name}.log")


def _wait_for(engine: Engine, run_id: str, status: RunStatus, worker: WorkerProcess) -> None:
    deadline = time.monotonic() + WAIT
    while (run := engine.get_run(run_id)) is None or run.status is not status:
        assert worker.returncode is None, worker.log()
        assert time.monotonic() < deadline, f"run not {status}: {run}\n{worker.log()}"
        time.sleep(0.05)


def test_a_run_waiting_on_a_killed_worker_is_woken_and_finished_by_another(
    tmp_path: Path,
) -> None:
    url = f"sqlite:///{tmp_path / 'events.db'}"
    with Engine(url) as engine:
        engine.migrate()
        first = _worker("w1", url, tmp_path)
        second = None
        try:
            run_id = "order-7"
            # The workers execute it; here the workflow is only named, to start its run.
            engine.workflow("fulfil")(lambda ctx, input: None)
            engine.start("fulfil", 7, run_id=run_id)
            _wait_for(engine, run_id, RunStatus.WAITING, first)
            first.kill()
            first.wait_exit()
            second = _worker("w2", url, tmp_path)
            assert engine.emit("order.paid", {"order_id": 7}, id="paid-7") == []
            _wait_for(engine, run_id, RunStatus.COMPLETED, second)
            result = engine.get_run(run_id).result  # type: ignore[union-attr]
            assert result == {"before": first.pid, "after": second.pid, "paid": "paid-7"}
        finally:
            first.kill()
            if second is not None:
                second.kill()
