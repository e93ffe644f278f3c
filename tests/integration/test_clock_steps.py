"""A worker whose wall clock steps an hour (either way) fires nothing early or late,
wakes no durable sleep early and takes no live lease (issue 13: before, a +1 h step fired
an hourly schedule half an hour early and woke a 30-minute sleep after a second).

The step is simulated by shifting the wall clock ``tickwork._values.clock`` reads (its
``time.time_ns``) after the engine's clock first read it; its steady clock runs on. On
PostgreSQL the engine keeps the database's time; on SQLite it keeps the steady clock's
for ten minutes (longer than any of these tests).
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from types import SimpleNamespace

import pytest
from tests.pg import fresh_schema

from tickwork import Context, Engine, RunStatus
from tickwork._values import clock as _clock

HOUR_NS = 3600 * 1_000_000_000


@pytest.fixture
def engine(db_url: str) -> Iterator[Engine]:
    with Engine(db_url, lease="30s") as engine:

        @engine.workflow("hourly")
        def hourly(ctx: Context) -> None:
            return None

        @engine.workflow("sleeper")
        def sleeper(ctx: Context) -> str:
            ctx.sleep("nap", "30m")
            return "rested"

        @engine.workflow("busy")
        def busy(ctx: Context) -> None:
            return None

        yield engine


def step_wall_clock(monkeypatch: pytest.MonkeyPatch, ns: int) -> None:
    monkeypatch.setattr(
        _clock,
        "time",
        SimpleNamespace(time_ns=lambda: time.time_ns() + ns, time=lambda: time.time() + ns / 1e9),
    )


@pytest.mark.parametrize("step", [HOUR_NS, -HOUR_NS], ids=["ahead", "behind"])
def test_a_stepped_wall_clock_fires_nothing_wakes_nothing_and_takes_no_live_lease(
    engine: Engine, monkeypatch: pytest.MonkeyPatch, step: int
) -> None:
    engine.schedule("hourly", every="1h", key="hourly")
    sleeping = engine.start("sleeper")
    assert engine.run_until_idle() == 1
    assert engine.get_run(sleeping.id).status is RunStatus.SLEEPING  # type: ignore[union-attr]
    held = engine.start("busy")
    (claim,) = engine._runtime.claim(1)  # a live lease, held by this worker
    assert claim.info.id == held.id
    before = engine.clock.now()

    step_wall_clock(monkeypatch, step)

    assert abs((engine.clock.now() - before).total_seconds()) < 5
    assert engine.tick() == []  # the hourly occurrence is an hour away still
    assert engine._runtime.claim(5) == []  # neither the sleeper nor the held run
    assert engine.get_run(sleeping.id).status is RunStatus.SLEEPING  # type: ignore[union-attr]
    hourly = engine.get_schedule("hourly")
    assert hourly is not None and hourly.last_run_id is None


@pytest.mark.postgres
def test_a_worker_started_after_its_clock_stepped_still_keeps_the_fleets_time(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """On PostgreSQL a worker whose clock is an hour ahead from the start reads the
    database's time: another worker's live lease is not expired to it. (SQLite workers
    share one machine's clock: docs/behaviour.md says what that means.)"""
    with fresh_schema() as db_url, Engine(db_url, lease="30s") as healthy:

        @healthy.workflow("busy")
        def busy(ctx: Context) -> None:
            return None

        held = healthy.start("busy")
        (claim,) = healthy._runtime.claim(1)
        assert claim.info.id == held.id
        step_wall_clock(monkeypatch, HOUR_NS)
        with Engine(db_url, lease="30s") as stepped:
            stepped.workflow("busy")(busy)
            assert stepped._runtime.claim(1) == []
