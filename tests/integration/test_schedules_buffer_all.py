"""overlap="buffer_all" (DESIGN §3): every occurrence that finds an earlier run unfinished
waits; they start one at a time, oldest first, each when the one before it ends; at most
1,000 wait, past that each is dropped and recorded. Cron and interval alike, both
backends."""

from __future__ import annotations

from datetime import datetime
from typing import Any

import pytest
from tests.timeline import at, rid

from tickwork import Context, Engine, RunStatus
from tickwork.testing import FakeClock

CADENCES = [{"every": "10m"}, {"cron": "*/10 * * * *"}]


@pytest.fixture(params=CADENCES, ids=["interval", "cron"])
def cadence(request: pytest.FixtureRequest) -> dict[str, Any]:
    return dict(request.param)


def decisions(engine: Engine) -> list[tuple[str, datetime]]:
    return [(h.decision, h.occurrence) for h in reversed(engine.schedule_history("k", 1000))]


@pytest.fixture
def job(engine: Engine) -> Engine:
    @engine.workflow("job")
    def job(ctx: Context) -> str:
        return ctx.run_id

    return engine


def tick_at(engine: Engine, clock: FakeClock, minutes: float) -> list[str]:
    clock.set(at(minutes))
    return engine.tick()


def drain(engine: Engine) -> list[str]:
    """Run what is runnable, then fire: the ids started, one pass at a time, in order."""
    started: list[str] = []
    for _ in range(50):
        engine.run_until_idle()
        fired = engine.tick()
        if not fired:
            break
        started.extend(fired)
    return started


def test_buffer_all_starts_every_waiting_occurrence_one_at_a_time_oldest_first(
    job: Engine, clock: FakeClock, cadence: dict[str, Any]
) -> None:
    """Three occurrences pass during a long run: all three wait (no run yet), then start
    one by one, each after the one before it ended."""
    job.schedule("job", None, key="k", overlap="buffer_all", **cadence)
    assert tick_at(job, clock, 10) == [rid(10)]
    for minutes in (20, 30, 40):
        assert tick_at(job, clock, minutes) == []
    assert all(job.get_run(rid(m)) is None for m in (20, 30, 40))
    assert job.run_until_idle() == 1
    assert job.tick() == [rid(20)]
    assert job.tick() == []  # 20 is pending: 30 keeps waiting
    assert drain(job) == [rid(30), rid(40)]
    for minutes in (10, 20, 30, 40):
        run = job.get_run(rid(minutes))
        assert run is not None and run.status == RunStatus.COMPLETED
        assert run.scheduled_for == at(minutes)
    assert decisions(job) == [
        ("started", at(10)),
        ("buffered", at(20)),
        ("buffered", at(30)),
        ("buffered", at(40)),
        ("started", at(20)),
        ("started", at(30)),
        ("started", at(40)),
    ]
    assert tick_at(job, clock, 50) == [rid(50)]  # nothing waits: the cadence resumes


def test_buffer_all_keeps_order_with_new_occurrences_arriving_while_it_drains(
    job: Engine, clock: FakeClock, cadence: dict[str, Any]
) -> None:
    """An occurrence that comes due while others wait goes behind them, even at a moment
    when no run is unfinished."""
    job.schedule("job", None, key="k", overlap="buffer_all", **cadence)
    tick_at(job, clock, 10)
    tick_at(job, clock, 20)
    job.run_until_idle()  # 10 ended; 20 waits, not started yet
    assert tick_at(job, clock, 30) == [rid(20)]  # the oldest first; 30 queues behind it
    assert job.get_run(rid(30)) is None
    assert drain(job) == [rid(30)]


def test_buffer_all_starts_the_next_when_the_running_one_is_cancelled(
    job: Engine, clock: FakeClock, cadence: dict[str, Any]
) -> None:
    """Cancelling the run in flight ends it: the oldest waiting occurrence starts."""
    job.schedule("job", None, key="k", overlap="buffer_all", **cadence)
    tick_at(job, clock, 10)
    tick_at(job, clock, 20)
    tick_at(job, clock, 30)
    assert job.cancel(rid(10))
    assert job.tick() == [rid(20)]
    assert job.get_run(rid(30)) is None


def test_buffer_all_keeps_1000_waiting_and_drops_the_rest_each_recorded(
    job: Engine, clock: FakeClock
) -> None:
    """After a long outage with catchup="all", 1,000 occurrences wait behind the first;
    the four past that are dropped, each with its own history entry."""
    job.schedule("job", None, key="k", every="1m", overlap="buffer_all", catchup="all")
    clock.set(at(1005))
    assert job.tick() == [rid(1)]
    history = job.schedule_history("k", 2000)
    assert sum(h.decision == "buffered" for h in history) == 1000
    dropped = [h for h in history if h.decision == "skipped_overlap"]
    assert sorted(h.occurrence for h in dropped) == [at(m) for m in (1002, 1003, 1004, 1005)]
    assert all("1000" in h.reason and h.count == 1 for h in dropped)
    assert drain(job)[:3] == [rid(2), rid(3), rid(4)]


def test_deactivate_forgets_the_waiting_occurrences(
    job: Engine, clock: FakeClock, cadence: dict[str, Any]
) -> None:
    """Like buffer_one's buffered occurrence, the queue is forgotten when the schedule is
    deactivated: after activate nothing of it starts."""
    job.schedule("job", None, key="k", overlap="buffer_all", **cadence)
    tick_at(job, clock, 10)
    tick_at(job, clock, 20)
    tick_at(job, clock, 30)
    assert job.deactivate("k")
    job.run_until_idle()
    assert job.activate("k")
    assert job.tick() == []
    assert job.get_run(rid(20)) is None and job.get_run(rid(30)) is None
    assert tick_at(job, clock, 40) == [rid(40)]


def test_buffer_all_is_accepted_on_every_face_of_a_definition(job: Engine) -> None:
    """The value is part of the one schedule spec: stored and read back."""
    job.schedule("job", None, key="k", every="1h", overlap="buffer_all")
    info = job.get_schedule("k")
    assert info is not None and info.overlap == "buffer_all"
