"""Overlap policies (DESIGN §3), for cron and interval alike, each decision in the history."""

from __future__ import annotations

from datetime import datetime
from typing import Any

import pytest
from tests.timeline import at, rid

from tickwork import Context, Engine, RunStatus
from tickwork.testing import FakeClock

# Both cadences fire at 12:10, 12:20, 12:30... after registration at 12:00.
CADENCES = [{"every": "10m"}, {"cron": "*/10 * * * *"}]


@pytest.fixture(params=CADENCES, ids=["interval", "cron"])
def cadence(request: pytest.FixtureRequest) -> dict[str, Any]:
    return dict(request.param)


def history(engine: Engine) -> list[tuple[str, datetime, str | None]]:
    """(decision, occurrence, run id) of schedule "k", oldest first."""
    return [(h.decision, h.occurrence, h.run_id) for h in reversed(engine.schedule_history("k"))]


def status(engine: Engine, run_id: str) -> RunStatus:
    run = engine.get_run(run_id)
    assert run is not None, run_id
    return run.status


@pytest.fixture
def job(engine: Engine) -> Engine:
    @engine.workflow("job")
    def job(ctx: Context) -> str:
        return ctx.run_id

    return engine


def tick_at(engine: Engine, clock: FakeClock, minutes: float) -> list[str]:
    clock.set(at(minutes))
    return engine.tick()


def test_allow_starts_while_an_earlier_run_is_unfinished(
    job: Engine, clock: FakeClock, cadence: dict[str, Any]
) -> None:
    """overlap="allow": a pending earlier run does not hold the next occurrence back."""
    job.schedule("job", None, key="k", overlap="allow", **cadence)
    assert tick_at(job, clock, 10) == [rid(10)]
    assert tick_at(job, clock, 20) == [rid(20)]
    assert status(job, rid(10)) == status(job, rid(20)) == RunStatus.PENDING
    assert history(job) == [("started", at(10), rid(10)), ("started", at(20), rid(20))]


def test_skip_skips_occurrences_while_an_earlier_run_is_unfinished(
    job: Engine, clock: FakeClock, cadence: dict[str, Any]
) -> None:
    """overlap="skip": the occurrence is skipped (recorded), the next one after it ends runs."""
    job.schedule("job", None, key="k", overlap="skip", **cadence)
    assert tick_at(job, clock, 10) == [rid(10)]
    assert tick_at(job, clock, 20) == []
    assert job.get_run(rid(20)) is None
    assert job.run_until_idle() == 1
    assert tick_at(job, clock, 30) == [rid(30)]
    assert [(d, o) for d, o, _ in history(job)] == [
        ("started", at(10)),
        ("skipped_overlap", at(20)),
        ("started", at(30)),
    ]


def test_skip_applies_to_a_sleeping_run(
    engine: Engine, clock: FakeClock, cadence: dict[str, Any]
) -> None:
    """A run in a durable sleep is unfinished: overlap="skip" skips the next occurrence."""

    @engine.workflow("napper")
    def napper(ctx: Context) -> None:
        ctx.sleep("nap", "15m")

    engine.schedule("napper", None, key="k", overlap="skip", **cadence)
    tick_at(engine, clock, 10)
    engine.run_until_idle()
    assert status(engine, rid(10)) == RunStatus.SLEEPING
    assert tick_at(engine, clock, 20) == []
    engine.run_until_idle()  # 12:20: still asleep until 12:25
    clock.set(at(25))
    engine.run_until_idle()
    assert status(engine, rid(10)) == RunStatus.COMPLETED
    assert tick_at(engine, clock, 30) == [rid(30)]


def test_skip_during_catchup_starts_only_the_first(
    job: Engine, clock: FakeClock, cadence: dict[str, Any]
) -> None:
    """catchup=3 with overlap="skip": the oldest of the three starts, the other two skip."""
    job.schedule("job", None, key="k", overlap="skip", catchup=3, **cadence)
    assert tick_at(job, clock, 30) == [rid(10)]
    assert [d for d, _, _ in history(job)] == ["started", "skipped_overlap", "skipped_overlap"]


def test_buffer_one_starts_the_buffered_occurrence_after_the_earlier_run_ends(
    job: Engine, clock: FakeClock, cadence: dict[str, Any]
) -> None:
    """overlap="buffer_one": one occurrence waits and starts on the tick after the run ends."""
    job.schedule("job", None, key="k", overlap="buffer_one", **cadence)
    assert tick_at(job, clock, 10) == [rid(10)]
    assert tick_at(job, clock, 20) == []  # buffered
    assert tick_at(job, clock, 30) == []  # one is already buffered: skipped
    assert job.get_run(rid(20)) is None and job.get_run(rid(30)) is None
    clock.set(at(35))
    assert job.tick() == []  # the earlier run has not ended yet
    assert job.run_until_idle() == 1
    assert status(job, rid(10)) == RunStatus.COMPLETED
    assert job.tick() == [rid(20)]  # same instant, right after it ended
    run = job.get_run(rid(20))
    assert run is not None and run.scheduled_for == at(20)
    assert job.tick() == []
    assert [(d, o) for d, o, _ in history(job)] == [
        ("started", at(10)),
        ("buffered", at(20)),
        ("skipped_overlap", at(30)),
        ("started", at(20)),
    ]
    assert job.run_until_idle() == 1
    assert tick_at(job, clock, 40) == [rid(40)]


def test_buffer_one_keeps_at_most_one_waiting_occurrence(
    job: Engine, clock: FakeClock, cadence: dict[str, Any]
) -> None:
    """However many occurrences pass during a long run, only one is buffered."""
    job.schedule("job", None, key="k", overlap="buffer_one", **cadence)
    tick_at(job, clock, 10)
    for minutes in (20, 30, 40, 50):
        assert tick_at(job, clock, minutes) == []
    job.run_until_idle()
    assert job.tick() == [rid(20)]
    decisions = [d for d, _, _ in history(job)]
    assert decisions.count("buffered") == 1
    assert decisions.count("skipped_overlap") == 3
    assert len(job.list_runs(schedule_key="k")) == 2


def test_buffer_one_starts_the_buffered_occurrence_when_the_earlier_run_is_cancelled(
    job: Engine, clock: FakeClock, cadence: dict[str, Any]
) -> None:
    """Cancelling the run in flight ends it too: the buffered occurrence may start."""
    job.schedule("job", None, key="k", overlap="buffer_one", **cadence)
    tick_at(job, clock, 10)
    tick_at(job, clock, 20)
    assert job.cancel(rid(10))
    assert job.tick() == [rid(20)]


def test_buffer_one_during_catchup_buffers_one_and_skips_the_rest(
    job: Engine, clock: FakeClock, cadence: dict[str, Any]
) -> None:
    """catchup=3 with buffer_one: first starts, second waits, third is skipped."""
    job.schedule("job", None, key="k", overlap="buffer_one", catchup=3, **cadence)
    assert tick_at(job, clock, 30) == [rid(10)]
    assert [d for d, _, _ in history(job)] == ["started", "buffered", "skipped_overlap"]
    job.run_until_idle()
    assert job.tick() == [rid(20)]


def test_cancel_previous_cancels_a_pending_run_and_starts_the_new_one(
    job: Engine, clock: FakeClock, cadence: dict[str, Any]
) -> None:
    """overlap="cancel_previous": the pending earlier run is cancelled at once."""
    job.schedule("job", None, key="k", overlap="cancel_previous", **cadence)
    tick_at(job, clock, 10)
    assert tick_at(job, clock, 20) == [rid(20)]
    assert status(job, rid(10)) == RunStatus.CANCELLED
    assert status(job, rid(20)) == RunStatus.PENDING
    assert job.run_until_idle() == 1
    assert status(job, rid(20)) == RunStatus.COMPLETED
    assert history(job) == [
        ("started", at(10), rid(10)),
        ("cancelled_previous", at(20), rid(10)),
        ("started", at(20), rid(20)),
    ]


def test_cancel_previous_cancels_a_sleeping_run(
    engine: Engine, clock: FakeClock, cadence: dict[str, Any]
) -> None:
    """A run in a durable sleep is cancelled at once by the next occurrence."""
    after_sleep: list[str] = []

    @engine.workflow("napper")
    def napper(ctx: Context) -> None:
        ctx.sleep("nap", "1h")
        after_sleep.append(ctx.run_id)

    engine.schedule("napper", None, key="k", overlap="cancel_previous", **cadence)
    tick_at(engine, clock, 10)
    engine.run_until_idle()
    assert status(engine, rid(10)) == RunStatus.SLEEPING
    assert tick_at(engine, clock, 20) == [rid(20)]
    assert status(engine, rid(10)) == RunStatus.CANCELLED
    engine.run_until_idle()  # the new run starts its own nap, until 13:20
    clock.set(at(80))
    engine.run_until_idle()
    assert after_sleep == [rid(20)]
    assert status(engine, rid(10)) == RunStatus.CANCELLED


def test_cancel_previous_stops_a_running_run_at_its_next_step(
    engine: Engine, clock: FakeClock, cadence: dict[str, Any]
) -> None:
    """The next occurrence fires while a run executes: it stops before its next step."""
    reached: list[str] = []
    fired: list[str] = []

    def next_occurrence_fires(scheduled_for: datetime) -> None:
        if scheduled_for == at(10):  # only while the first run executes
            clock.set(at(20))
            fired.extend(engine.tick())

    @engine.workflow("long")
    def long(ctx: Context) -> None:
        assert ctx.scheduled_for is not None
        ctx.step("first", next_occurrence_fires, ctx.scheduled_for)
        ctx.step("second", reached.append, ctx.run_id)

    engine.schedule("long", None, key="k", overlap="cancel_previous", **cadence)
    tick_at(engine, clock, 10)
    engine.run_until_idle()
    assert fired == [rid(20)]
    assert status(engine, rid(10)) == RunStatus.CANCELLED
    assert status(engine, rid(20)) == RunStatus.COMPLETED
    assert reached == [rid(20)]  # the first run never reached its second step
    assert [d for d, _, _ in history(engine)] == ["started", "cancelled_previous", "started"]


def test_buffer_one_starts_the_buffered_occurrence_after_the_schedule_ended(
    job: Engine, clock: FakeClock, cadence: dict[str, Any]
) -> None:
    """The last occurrence before end_at, buffered, still starts when the earlier run ends."""
    job.schedule("job", None, key="k", overlap="buffer_one", end_at=at(25), **cadence)
    assert tick_at(job, clock, 10) == [rid(10)]
    assert tick_at(job, clock, 20) == []
    assert [d for d, _, _ in history(job)] == ["started", "buffered"]
    assert job.run_until_idle() == 1
    assert job.tick() == [rid(20)]


def test_updating_the_definition_does_not_hold_back_a_ready_buffered_occurrence(
    engine: Engine, clock: FakeClock, cadence: dict[str, Any]
) -> None:
    """The earlier run ended, then the schedule is updated: the buffered one starts at once."""

    @engine.workflow("job")
    def job(ctx: Context, input: Any = None) -> None:
        return None

    engine.schedule("job", 1, key="k", overlap="buffer_one", **cadence)
    tick_at(engine, clock, 10)
    tick_at(engine, clock, 20)  # buffered
    clock.set(at(25))
    assert engine.run_until_idle() == 1  # the earlier run ends: 12:20 may start now
    engine.schedule("job", 2, key="k", overlap="buffer_one", **cadence)  # a new input
    assert tick_at(engine, clock, 26) == [rid(20)]
