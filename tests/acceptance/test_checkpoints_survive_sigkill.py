"""A step's checkpoint is stored before the code after the step runs, even when the
checkpoints of a worker's threads share commits (group commit, on both backends).

Real ``tickwork worker`` processes of 8 threads drain runs of trivial steps, so their
threads checkpoint at once; in each of several workers, the code right after one
``ctx.step`` SIGKILLs the process (``durable_steps_app.py``), while other threads are
mid-checkpoint. Every step whose caller went on (a ``stored`` line) must then be found
completed in the store and never be executed again; once a worker that is not killed
has finished every run, each step ran exactly once unless a kill cut it short.
"""

from __future__ import annotations

import os
from collections import defaultdict
from pathlib import Path
from typing import Any

import pytest
from tests.acceptance.neighbours import load_neighbour

pytestmark = pytest.mark.acceptance

HERE = Path(__file__).parent
APP = f"{HERE / 'durable_steps_app.py'}:engine"
RUNS = 60
#: workers killed in turn, each by the code after its KILL_AT-th returning step
KILLED_WORKERS = 3
KILL_AT = 20


app = load_neighbour("durable_steps_app")  # the workers import it as a file


@pytest.fixture(params=["sqlite", "postgres"])
def any_harness(request: pytest.FixtureRequest) -> Any:
    return request.getfixturevalue("harness" if request.param == "sqlite" else "pg_harness")


def _start_worker(harness: Any, *, kill_at: int = 0) -> Any:
    """``tickwork worker durable_steps_app.py:engine``, 8 threads, 1-second lease."""
    ns = type(harness).worker.__globals__  # the acceptance conftest (not importable by name)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ACCEPT_", "TICKWORK_"))}
    name = f"w{len(harness.workers) + 1}"
    url = harness.worker_url(name) if hasattr(harness, "worker_url") else harness.url
    env.update(
        TICKWORK_DATABASE_URL=url, ACCEPT_DIR=str(harness.dir), ACCEPT_LEASE="1s",
        DURABLE_KILL_AT=str(kill_at), PYTHONUNBUFFERED="1",
    )  # fmt: skip
    args = [*ns["tickwork_command"](), "worker", APP, "--threads", "8", "--log-level", "INFO"]
    worker = ns["WorkerProcess"](name, args, env, harness.dir / f"{name}.log")
    harness.workers.append(worker)
    return worker


def _lines(harness: Any) -> list[tuple[str, str, str, int]]:
    """(kind, run_id, step, pid) of each line of the app's log, in order."""
    path = harness.dir / app.LOG
    lines = path.read_text().splitlines() if path.exists() else []
    return [(kind, run_id, step, int(pid)) for kind, run_id, step, pid in map(str.split, lines)]


def _completed(harness: Any, run_id: str) -> set[str]:
    return {s.name for s in harness.engine.list_steps(run_id) if s.status == "completed"}


def _check_stored_steps_are_durable(harness: Any) -> None:
    """Every step whose caller went on is completed in the store, and was not entered
    again after its caller went on."""
    went_on: set[tuple[str, str]] = set()
    for kind, run_id, step, pid in _lines(harness):
        where = (run_id, step)
        if kind == "stored":
            went_on.add(where)
        else:
            assert where not in went_on, f"step {where} executed again (pid {pid})"
    missing = [
        (run_id, step)
        for run_id, step in sorted(went_on)
        if step not in _completed(harness, run_id)
    ]
    assert not missing, f"steps whose caller went on, not stored: {missing}"


def test_a_step_is_stored_before_its_caller_goes_on_even_when_commits_are_shared(
    any_harness: Any,
) -> None:
    harness = any_harness
    app.define(harness.engine)
    run_ids = [harness.engine.start(app.WORKFLOW, n, run_id=f"marked-{n:02d}").id
               for n in range(RUNS)]  # fmt: skip

    killed = []
    for _ in range(KILLED_WORKERS):
        worker = _start_worker(harness, kill_at=KILL_AT)
        harness.wait_until(lambda w=worker: w.returncode is not None, f"{worker.name} is killed")
        assert worker.returncode == -9, worker.log()  # by its own step's caller
        killed.append(worker.pid)
        _check_stored_steps_are_durable(harness)

    survivor = _start_worker(harness)
    for run_id in run_ids:
        harness.wait_for_status(run_id, "completed", alive=[survivor])
    _check_stored_steps_are_durable(harness)

    for n, run_id in enumerate(run_ids):
        run = harness.run(run_id)
        assert run.result == sum(n + index for index in range(len(app.STEPS))), run_id
        assert _completed(harness, run_id) == set(app.STEPS), run_id
    # Each step ran once, or more only when a killed worker was inside it (it had begun,
    # its caller had not gone on): the last execution is the one that was stored.
    executions: dict[tuple[str, str], list[int]] = defaultdict(list)
    for kind, run_id, step, pid in _lines(harness):
        if kind == "exec":
            executions[(run_id, step)].append(pid)
    assert set(executions) == {(run_id, step) for run_id in run_ids for step in app.STEPS}
    for where, pids in executions.items():
        assert all(pid in killed for pid in pids[:-1]), (where, pids)
