"""A parent with 10,000 children served by several worker processes, SIGKILLed one after
another throughout (DESIGN §10): every child is one run that completes once, the parent
completes once with every result in the inputs' order, on SQLite (3 workers) and on
PostgreSQL (4 workers). The kills are random; the seed is printed (``pytest -s``)."""

from __future__ import annotations

import os
import random
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from tests.acceptance.conftest import WorkerProcess, tickwork_command

from tickwork import Engine, RunStatus

pytestmark = pytest.mark.acceptance

APP = f"{Path(__file__).parent / 'children_app.py'}:engine"
CHILDREN = 10_000
KILL_FOR = 12.0  # seconds of kills, then the survivors finish
PARENT = "fan-1"


def _fleet(
    engine: Engine, start: Callable[[str], WorkerProcess], workers: int, tmp_path: Path
) -> None:
    seed = random.randrange(1 << 32)
    rng = random.Random(seed)
    live = [start(f"w{n}") for n in range(workers)]
    started = len(live)
    killed = 0
    engine.workflow("parent")(lambda ctx, count: None)  # named here only to start it
    engine.start("parent", CHILDREN, run_id=PARENT)
    deadline = time.monotonic() + KILL_FOR
    while time.monotonic() < deadline:
        time.sleep(rng.uniform(0.3, 1.5))
        victim = rng.choice(live)
        victim.kill()
        killed += 1
        live.remove(victim)
        started += 1
        live.append(start(f"w{started}"))
    finish = time.monotonic() + 240
    while (run := engine.get_run(PARENT)) is None or run.status is not RunStatus.COMPLETED:
        assert run is None or run.status not in (RunStatus.FAILED, RunStatus.CANCELLED), run
        assert time.monotonic() < finish, f"seed {seed}: the parent is {run}\n" + "\n".join(
            w.log()[-2000:] for w in live
        )
        time.sleep(0.2)
    for worker in live:
        worker.kill()
    print(f"\nchildren fleet seed {seed}: {killed} workers SIGKILLed")

    assert run.result == [n * 2 for n in range(CHILDREN)]
    children = []
    before = None
    while page := engine.list_runs(parent=PARENT, limit=10_000, before=before):
        children += page
        before = page[-1].id
    assert len(children) == CHILDREN
    assert {c.id for c in children} == {f"{PARENT}/leaf/{n}" for n in range(CHILDREN)}
    assert {c.status for c in children} == {RunStatus.COMPLETED}
    assert all(c.result == int(c.id.rsplit("/", 1)[1]) * 2 for c in children)
    # The parent's end was logged once, by one worker, across every worker that ran.
    logs = "".join(p.read_text(errors="replace") for p in tmp_path.glob("w*.log"))
    assert logs.count(f"run {PARENT} completed") == 1
    # A child's step may run again only when a kill came before its checkpoint: never
    # more times than there were kills.
    executed = (tmp_path / "children.log").read_text().split("\n")
    again = len([line for line in executed if line]) - CHILDREN
    assert 0 <= again <= killed * 8, f"{again} steps ran again with {killed} kills"


def _worker(name: str, url: str, tmp_path: Path) -> WorkerProcess:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ACCEPT_", "TICKWORK_"))}
    env.update(TICKWORK_DATABASE_URL=url, ACCEPT_DIR=str(tmp_path), PYTHONUNBUFFERED="1")
    args = [*tickwork_command(), "worker", APP, "--threads", "4", "--log-level", "INFO"]
    return WorkerProcess(name, args, env, tmp_path / f"{name}.log")


def test_ten_thousand_children_on_sqlite_with_workers_killed_throughout(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'children.db'}"
    with Engine(url) as engine:
        engine.migrate()
        _fleet(engine, lambda name: _worker(name, url, tmp_path), 3, tmp_path)


def test_ten_thousand_children_on_postgresql_with_workers_killed_throughout(
    pg_harness, tmp_path: Path
) -> None:
    engine = pg_harness.engine
    start = lambda name: pg_harness.app_worker(  # noqa: E731
        APP, env={"ACCEPT_DIR": str(tmp_path)}, threads=4, name=name
    )
    _fleet(engine, start, 4, pg_harness.dir)
