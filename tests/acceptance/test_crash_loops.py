"""Real worker processes killed by their own step (``os._exit(1)``, as a segfault or an OOM
kill would end them): a step that keeps doing it fails its run after ``max_recoveries``
lost workers instead of killing every worker the fleet starts; a run whose every step
kills one worker once completes, however many workers it cost in all.

A worker lost is blamed on a run only when that run was its only one in flight: a step
that kills its worker fails its run, not the runs that shared the worker with it.

The test plays the process supervisor: it starts one ``tickwork worker`` (1-second lease)
at a time on one SQLite file (or PostgreSQL schema) and starts the next once that one
died, until the runs end. The workflows are in ``crash_loop_workflows.py``.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
from tests.acceptance.neighbours import load_neighbour

from tickwork import Engine, RunInfo

pytestmark = pytest.mark.acceptance

HERE = Path(__file__).parent
APP = f"{HERE / 'crash_loop_app.py'}:engine"


workflows = load_neighbour("crash_loop_workflows")  # the workers import it as a file


def _start_worker(harness: Any, threads: int = 1) -> Any:
    """``tickwork worker crash_loop_app.py:engine`` on the harness's database, one thread
    unless told, 1-second lease; the harness kills it when the test ends."""
    ns = type(harness).worker.__globals__  # the acceptance conftest (not importable by name)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ACCEPT_", "TICKWORK_"))}
    env.update(
        TICKWORK_DATABASE_URL=harness.url, ACCEPT_DIR=str(harness.dir), ACCEPT_LEASE="1s",
        PYTHONUNBUFFERED="1",
    )  # fmt: skip
    name = f"w{len(harness.workers) + 1}"
    args = [
        *ns["tickwork_command"](), "worker", APP, "--threads", str(threads), "--log-level",
        "INFO",
    ]  # fmt: skip
    worker = ns["WorkerProcess"](name, args, env, harness.dir / f"{name}.log")
    harness.workers.append(worker)
    return worker


def _executions(harness: Any, run_id: str) -> list[tuple[str, int]]:
    """(step, pid) of each step execution of the run, in log order."""
    path = harness.dir / workflows.EXECUTIONS
    lines = path.read_text().splitlines() if path.exists() else []
    return [
        (step, int(pid)) for rid, step, pid in (line.split(" ") for line in lines) if rid == run_id
    ]


def _supervise(harness: Any, run_id: str, most: int = 10) -> tuple[RunInfo, list[int]]:
    """Start a worker, and another each time the last one dies, until the run ends: the
    run as it ended, and the pids of the workers that died on the way."""
    (run,), died = _supervise_all(harness, [run_id], most)
    return run, died


def _supervise_all(
    harness: Any, run_ids: list[str], most: int = 10, threads: int = 1
) -> tuple[list[RunInfo], list[int]]:
    """``_supervise`` for several runs, with workers of ``threads`` threads: until every
    run ended, the runs as they ended and the pids of the workers that died."""
    died = []
    for _ in range(most):
        worker = _start_worker(harness, threads)

        def ended_or_died(worker: Any = worker) -> bool:
            ended = all(harness.status(rid) in ("completed", "failed") for rid in run_ids)
            return ended or worker.returncode is not None

        harness.wait_until(ended_or_died, f"runs {run_ids} ended or {worker.name} died")
        if worker.returncode is None:
            return [harness.run(rid) for rid in run_ids], died
        assert worker.returncode == 1, worker.log()  # os._exit(1) in a step, nothing else
        died.append(worker.pid)
    pytest.fail(f"runs {run_ids} still unfinished after {most} workers\n{harness.logs()}")


@pytest.fixture(params=["sqlite", "postgres"])
def any_harness(request: pytest.FixtureRequest) -> Any:
    """The harness on SQLite, then on PostgreSQL."""
    if request.param == "postgres":
        return request.getfixturevalue("pg_harness")  # skips without PostgreSQL
    return request.getfixturevalue("harness")


@pytest.fixture
def engine(harness: Any) -> Any:
    """An engine on the harness's database that knows the crashing workflows (to start
    their runs; it executes nothing)."""
    with Engine(harness.url) as engine:
        workflows.define(engine)
        yield engine


def test_a_step_that_kills_its_worker_every_time_fails_the_run_after_five(harness, engine):
    """``crash-loop`` (max_recoveries left at its default, 5): its step "crash" ends every
    worker that runs it. Five workers die, then the sixth fails the run without running
    the step, and stays up."""
    run_id = engine.start("crash-loop").id
    run, died = _supervise(harness, run_id)

    assert run.status == "failed"
    assert run.error is not None
    assert "step 'crash' lost its worker 5 times in a row (max_recoveries=5)" in run.error
    assert len(died) == 5
    assert [pid for step, pid in _executions(harness, run_id) if step == "crash"] == died
    assert [step for step, _ in _executions(harness, run_id)].count("prepare") == 1
    assert harness.workers[-1].returncode is None  # the sixth worker is still up


def test_a_run_whose_every_step_kills_one_worker_completes(harness, engine):
    """``crash-once-each`` (max_recoveries=2): each of its four steps ends the first worker
    that runs it. Four workers lost in all, more than max_recoveries, but never two in a
    row at one step: the fifth worker completes the run."""
    run_id = engine.start("crash-once-each").id
    run, died = _supervise(harness, run_id)

    assert run.status == "completed", run.error
    assert run.result == ["a", "b", "c", "d"]
    assert len(died) == 4
    assert run.attempt == 1  # a lost worker is not a failed attempt
    executed = _executions(harness, run_id)
    assert [step for step, _ in executed] == ["a", "a", "b", "b", "c", "c", "d", "d"]
    assert [pid for _, pid in executed[::2]] == died  # each first try ended its worker


def test_a_step_that_kills_its_worker_fails_its_run_not_the_one_sharing_the_worker(
    any_harness: Any,
) -> None:
    """Workers of two threads, one run each: ``poison``'s step ends every worker that
    runs it, while ``innocent``'s five-second step (Retry(max_attempts=10)) is in flight
    beside it. The losses the two shared are blamed on neither; run alone, the innocent
    run completes and the poison run loses five workers on its own, then fails naming
    its step."""
    harness = any_harness
    with Engine(harness.url) as engine:
        workflows.define(engine)
        poison_id = engine.start("poison").id
        innocent_id = engine.start("innocent").id
    (poison, innocent), died = _supervise_all(harness, [poison_id, innocent_id], 15, threads=2)

    assert innocent.status == "completed", innocent.error
    assert innocent.result == "done" and innocent.attempt == 1
    assert poison.status == "failed"
    assert poison.error is not None
    assert "step 'poison' lost its worker 5 times in a row (max_recoveries=5)" in poison.error
    # The first worker took both runs and died: more workers lost than the poison run's
    # own five, the ones it shared with the innocent run counted against neither.
    assert _executions(harness, poison_id)[0][1] == died[0]
    assert len(died) > 5
    assert harness.workers[-1].returncode is None  # the last worker is still up
