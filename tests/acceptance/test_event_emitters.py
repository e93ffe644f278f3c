"""Several processes emitting the same event ids at once (DESIGN §9): each event starts
exactly one run per subscription, and every emitter is answered the same run ids."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from tests.pg import fresh_schema

from tickwork import Context, Engine

pytestmark = pytest.mark.acceptance

EVENTS = 1000
# One emitter: waits for the "go" file so that all emit at once, then emits every id and
# prints what each emit answered. It registers no workflow: the subscriptions are stored.
EMITTER = """
import json, os, sys, time
from tickwork import Engine
url, go, count = sys.argv[1], sys.argv[2], int(sys.argv[3])
engine = Engine(url)
while not os.path.exists(go):
    time.sleep(0.005)
answers = {f"order-{n}": engine.emit("order.paid", {"n": n}, id=f"order-{n}")
           for n in range(count)}
engine.close()
print(json.dumps(answers))
"""


@pytest.fixture(params=[("sqlite", 3), ("postgres", 4)], ids=["sqlite-3", "postgres-4"])
def fleet(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[tuple[str, int]]:
    backend, processes = request.param
    if backend == "postgres":
        with fresh_schema() as url:
            yield url, processes
        return
    yield f"sqlite:///{tmp_path / 'events.db'}", processes


def test_processes_emitting_the_same_ids_start_each_run_once(
    fleet: tuple[str, int], tmp_path: Path
) -> None:
    url, processes = fleet
    with Engine(url) as engine:

        @engine.workflow("fulfil")
        def fulfil(ctx: Context, input: object) -> None:
            return None

        @engine.workflow("audit")
        def audit(ctx: Context, input: object) -> None:
            return None

        engine.subscribe("fulfil", "order.paid", key="fulfil")
        engine.subscribe("audit", "order.paid", key="audit")
    go = tmp_path / "go"
    emitters = [
        subprocess.Popen(
            [sys.executable, "-c", EMITTER, url, str(go), str(EVENTS)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for _ in range(processes)
    ]
    try:
        go.touch()
        outputs = [p.communicate(timeout=300) for p in emitters]
    finally:
        for p in emitters:
            p.kill()
    for p, (_, err) in zip(emitters, outputs, strict=True):
        assert p.returncode == 0, err
    answers = [json.loads(out) for out, _ in outputs]
    assert all(a == answers[0] for a in answers)  # every emitter got the same run ids
    with Engine(url) as engine:
        for workflow in ("fulfil", "audit"):
            runs = engine.list_runs(workflow=workflow, limit=10_000)
            assert len(runs) == EVENTS, workflow
        assert len(engine.list_events(limit=10_000)) == EVENTS
        assert engine.console.event_counts() == {"order.paid": EVENTS}
    assert {run for ids in answers[0].values() for run in ids} == {
        f"{key}@event:order-{n}" for key in ("fulfil", "audit") for n in range(EVENTS)
    }
