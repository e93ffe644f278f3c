"""``Engine(fire_ahead=...)``: an ``overlap="allow"`` occurrence is decided a little before
it, its run created then and runnable from the occurrence on (docs/behaviour.md,
"Firing ahead"). Exactly once, catch-up and the other overlap policies are unchanged.
Both backends."""

from __future__ import annotations

import time
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta

import pytest
from tests.timeline import START, at, run_id

from tickwork import ConfigError, Context, Engine, RunStatus
from tickwork._values.clock import to_ms
from tickwork.testing import FakeClock


def history(engine: Engine, key: str) -> list[tuple[str, datetime, int]]:
    return [(h.decision, h.occurrence, h.count) for h in reversed(engine.schedule_history(key))]


@pytest.fixture
def ahead(db_url: str, clock: FakeClock) -> Iterator[Engine]:
    """An engine that fires up to 500 ms ahead, with a workflow "job"."""
    with Engine(db_url, clock=clock, fire_ahead="500ms") as engine:
        register(engine)
        yield engine


def register(engine: Engine) -> None:
    @engine.workflow("job")
    def job(ctx: Context) -> str:
        return ctx.run_id


def test_an_occurrence_is_decided_ahead_and_runs_from_its_occurrence_on(
    ahead: Engine, clock: FakeClock
) -> None:
    """400 ms before 12:01 the run of 12:01 exists, pending and not runnable; at 12:01 it
    runs. Its history entry says "started", decided before the occurrence."""
    ahead.schedule("job", every="1m", key="k")
    clock.set(at(1) - timedelta(milliseconds=600))
    assert ahead.tick() == []  # further away than fire_ahead
    clock.set(at(1) - timedelta(milliseconds=400))
    assert ahead.tick() == [run_id("k", at(1))]
    run = ahead.get_run(run_id("k", at(1)))
    assert run is not None and run.status is RunStatus.PENDING
    assert run.scheduled_for == at(1)
    assert run.created_at == at(1) - timedelta(milliseconds=400)
    assert ahead.run_until_idle() == 0  # not before its occurrence
    schedule = ahead.get_schedule("k")
    assert schedule is not None and schedule.next_fire_at == at(2)
    assert schedule.last_run_id == run_id("k", at(1))
    assert schedule.overdue_by is None
    clock.set(at(1))
    assert ahead.tick() == []  # decided already: never a second run
    assert ahead.run_until_idle() == 1
    done = ahead.get_run(run_id("k", at(1)))
    assert done is not None and done.status is RunStatus.COMPLETED
    assert done.started_at is not None and done.started_at >= at(1)
    assert history(ahead, "k") == [("started", at(1), 1)]
    [entry] = ahead.schedule_history("k")
    assert entry.decided_at == at(1) - timedelta(milliseconds=400)


def test_without_fire_ahead_nothing_is_decided_before_its_occurrence(
    engine: Engine, clock: FakeClock
) -> None:
    """The default: an occurrence 1 ms away is not decided yet."""
    register(engine)
    engine.schedule("job", every="1m", key="k")
    clock.set(at(1) - timedelta(milliseconds=1))
    assert engine.tick() == []
    assert engine.list_runs() == []


def test_jitter_still_delays_a_run_decided_ahead(ahead: Engine, clock: FakeClock) -> None:
    """The run waits for its occurrence plus its jitter, as when decided on time."""
    ahead.schedule("job", every="1m", key="k", jitter="20s")
    clock.set(at(1) - timedelta(milliseconds=100))
    assert ahead.tick() == [run_id("k", at(1))]
    clock.set(at(1))
    runnable_now = ahead.run_until_idle()
    clock.set(at(1) + timedelta(seconds=20))
    runnable_later = ahead.run_until_idle()
    assert runnable_now + runnable_later == 1
    run = ahead.get_run(run_id("k", at(1)))
    assert run is not None and run.started_at is not None and run.started_at > at(1)


@pytest.mark.parametrize("overlap", ["skip", "buffer_one", "buffer_all", "cancel_previous"])
def test_other_overlap_policies_are_decided_at_the_occurrence(
    ahead: Engine, clock: FakeClock, overlap: str
) -> None:
    """Whether the earlier run is still going is known only at the occurrence."""
    ahead.schedule("job", every="1m", key="k", overlap=overlap)
    clock.set(at(1) - timedelta(milliseconds=400))
    assert ahead.tick() == []
    clock.set(at(1))
    assert ahead.tick() == [run_id("k", at(1))]


def test_missed_occurrences_are_caught_up_then_the_next_is_decided_ahead(
    ahead: Engine, clock: FakeClock
) -> None:
    """Workers down from 12:00 to 12:09:59.8 (catchup=1): 12:09 starts now as the latest
    missed occurrence, 12:01-12:08 are dropped, and 12:10 is decided ahead."""
    ahead.schedule("job", every="1m", key="k")
    clock.set(at(10) - timedelta(milliseconds=200))
    assert ahead.tick() == [run_id("k", at(9)), run_id("k", at(10))]
    assert history(ahead, "k") == [
        ("dropped_catchup", at(1), 8),
        ("started", at(9), 1),
        ("started", at(10), 1),
    ]
    assert ahead.run_until_idle() == 1  # 12:09 only: 12:10 is still ahead


def test_a_lead_longer_than_the_interval_decides_each_occurrence_within_it(
    db_url: str, clock: FakeClock
) -> None:
    """Every second, 2.5 s ahead: the occurrences of 12:00:01 and 12:00:02 are decided,
    each once, and none is taken for missed."""
    with Engine(db_url, clock=clock, fire_ahead="2500ms") as engine:
        register(engine)
        engine.schedule("job", every="1s", key="k")
        clock.set(START + timedelta(milliseconds=100))
        second = timedelta(seconds=1)
        assert engine.tick() == [run_id("k", START + second), run_id("k", START + 2 * second)]
        assert [d for d, _, _ in history(engine, "k")] == ["started", "started"]


def test_two_workers_firing_ahead_start_each_occurrence_once(db_url: str, clock: FakeClock) -> None:
    """Two engines on one database tick at the same instants: one run per occurrence."""
    with (
        Engine(db_url, clock=clock, fire_ahead="500ms") as one,
        Engine(db_url, clock=clock, fire_ahead="300ms") as two,
    ):
        register(one)
        register(two)
        one.schedule("job", every="1m", key="k")
        started: list[str] = []
        for minute in range(1, 6):
            for lead_ms in (450, 250, 0):
                clock.set(at(minute) - timedelta(milliseconds=lead_ms))
                started += one.tick() + two.tick()
        assert started == [run_id("k", at(m)) for m in range(1, 6)]
        assert len(one.list_runs(schedule_key="k")) == 5


def test_a_pause_after_the_decision_leaves_the_run_decided_ahead(
    ahead: Engine, clock: FakeClock
) -> None:
    """A run decided ahead is a run: pausing stops the occurrences not yet decided, as it
    leaves runs in flight alone (docs/behaviour.md says so)."""
    ahead.schedule("job", every="1m", key="k")
    clock.set(at(1) - timedelta(milliseconds=300))
    assert ahead.tick() == [run_id("k", at(1))]
    assert ahead.pause("k")
    clock.set(at(1))
    assert ahead.run_until_idle() == 1
    clock.set(at(3))
    assert ahead.tick() == []


def test_an_interval_shorter_than_the_lead_decides_every_occurrence_within_it_at_once(
    db_url: str, clock: FakeClock
) -> None:
    """Every 100 ms, 1 s ahead: one pass starts the ten occurrences within the second to
    come, each once, and the next tick starts only the ones that came into reach."""
    with Engine(db_url, clock=clock, fire_ahead="1s") as engine:
        register(engine)
        engine.schedule("job", every="100ms", key="k")
        clock.set(START + timedelta(milliseconds=50))
        step = timedelta(milliseconds=100)
        assert engine.tick() == [run_id("k", START + i * step) for i in range(1, 11)]
        clock.set(START + timedelta(milliseconds=250))
        assert engine.tick() == [run_id("k", START + i * step) for i in (11, 12)]
        assert {d for d, _, _ in history(engine, "k")} == {"started"}


def test_a_schedule_that_cannot_be_planned_is_not_retried_at_once_when_firing_ahead(
    db_url: str, clock: FakeClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A broken schedule is looked at again a minute later, which the longest fire_ahead
    (10 s) does not bring into the same tick: reported once, the others fire."""
    import tickwork._services.firing as firing

    original = firing.plan

    def broken(state, occurrences):  # type: ignore[no-untyped-def]
        if state.key == "bad":
            raise RuntimeError("cannot plan this one")
        return original(state, occurrences)

    monkeypatch.setattr(firing, "plan", broken)
    reported: list[BaseException] = []
    with Engine(
        db_url, clock=clock, fire_ahead="10s", on_error=lambda e, _: reported.append(e)
    ) as engine:
        register(engine)
        engine.schedule("job", every="1m", key="bad")
        engine.schedule("job", every="1m", key="good")
        clock.set(at(1) - timedelta(seconds=5))
        assert engine.tick() == [run_id("good", at(1))]
        assert [str(e) for e in reported] == ["cannot plan this one"]


@pytest.mark.parametrize("bad", ["11s", "2m", "0s", -1, "soon"])
def test_a_bad_fire_ahead_is_refused_before_anything_is_opened(
    tmp_path: object, bad: object
) -> None:
    """Longer than 10 s, zero, negative or not a duration: ConfigError, no file made."""
    from pathlib import Path

    folder = Path(str(tmp_path))
    with pytest.raises(ConfigError, match=r"fire_ahead|duration"):
        Engine(f"sqlite:///{folder / 'never.db'}", fire_ahead=bad)  # type: ignore[arg-type]
    assert not (folder / "never.db").exists()


def test_a_worker_fires_ahead_on_the_real_clock(db_url: str) -> None:
    """A real worker with fire_ahead="2s": the run of an occurrence 3 s away exists before
    the occurrence and starts at or after it."""
    with Engine(db_url, fire_ahead="2s") as engine:
        register(engine)
        occurrence = datetime.fromtimestamp(time.time() // 1 + 4, UTC)
        engine.schedule("job", every="1h", key="k", start_at=occurrence - timedelta(hours=1))
        expected = run_id("k", occurrence)
        with engine.worker(threads=1, poll_interval="100ms"):
            run = engine.get_run(expected)
            for _ in range(1200):  # a minute at most, on a machine however busy
                if run is not None and run.status is RunStatus.COMPLETED:
                    break
                time.sleep(0.05)
                run = engine.get_run(expected)
        assert run is not None and run.status is RunStatus.COMPLETED, run
        assert run.created_at < occurrence <= run.started_at  # type: ignore[operator]


def test_the_loop_wakes_fire_ahead_before_an_allow_occurrence_and_on_time_for_others(
    db_url: str, clock: FakeClock
) -> None:
    """The worker ticks when the store first has something to fire: an overlap="skip"
    schedule at its occurrence, an "allow" one fire_ahead earlier, even behind the other."""
    with Engine(db_url, clock=clock, fire_ahead="5s") as engine:
        register(engine)
        wake = engine._firing.next_due_ms
        engine.schedule("job", every="10s", key="skip", overlap="skip")
        assert wake() == to_ms(START + timedelta(seconds=10))
        engine.schedule("job", every="12s", key="allow")
        assert wake() == to_ms(START + timedelta(seconds=7))
        clock.set(START + timedelta(seconds=7))
        assert engine.tick() == [run_id("allow", START + timedelta(seconds=12))]
        assert wake() == to_ms(START + timedelta(seconds=10))  # the skip one, on time
        clock.set(START + timedelta(seconds=8))
        assert engine.tick() == []  # nothing fired before its time
