"""Firing schedules with ``tick()`` (DESIGN §3): run ids, exactly once, catch-up, jitter,
errors."""

from __future__ import annotations

import threading
from datetime import datetime, timedelta
from typing import Any

import pytest
from tests.timeline import START, at, run_id

from tickwork import Context, Engine, Retry, RunStatus
from tickwork._services.firing import ScheduleFiring
from tickwork.testing import FakeClock


def register_job(engine: Engine, seen: list[tuple[Any, ...]] | None = None) -> None:
    """Register a workflow "job" that records what its context says."""

    @engine.workflow("job")
    def job(ctx: Context, input: Any = None) -> Any:
        if seen is not None:
            seen.append((ctx.run_id, ctx.schedule_key, ctx.scheduled_for, input))
        return input


def decisions(engine: Engine, key: str) -> list[tuple[str, datetime, int]]:
    """(decision, occurrence, count) of a schedule's history, oldest first."""
    return [(h.decision, h.occurrence, h.count) for h in reversed(engine.schedule_history(key))]


# -- 4. firing --------------------------------------------------------------------------


def test_tick_returns_the_ids_of_the_runs_it_started(engine: Engine, clock: FakeClock) -> None:
    """One due occurrence: tick starts one run, named key@occurrence, and returns its id."""
    register_job(engine)
    engine.schedule("job", {"n": 1}, every="15m", key="k")
    clock.advance("15m")
    assert engine.tick() == ["k@2026-03-01T12:15:00.000Z"]
    run = engine.get_run("k@2026-03-01T12:15:00.000Z")
    assert run is not None
    assert run.status == RunStatus.PENDING
    assert run.workflow == "job" and run.input == {"n": 1}
    assert run.schedule_key == "k"
    assert run.scheduled_for == at(15)


def test_late_tick_keeps_the_occurrence_in_run_id_and_scheduled_for(
    engine: Engine, clock: FakeClock
) -> None:
    """A tick 7 minutes late still names the run after the occurrence, not the tick."""
    register_job(engine)
    engine.schedule("job", None, every="15m", key="k")
    clock.advance("22m")
    assert engine.tick() == [run_id("k", at(15))]
    run = engine.get_run(run_id("k", at(15)))
    assert run is not None and run.scheduled_for == at(15)
    assert run.created_at == at(22)


def test_context_knows_the_schedule_and_occurrence(engine: Engine, clock: FakeClock) -> None:
    """ctx.schedule_key and ctx.scheduled_for are set in a scheduled run."""
    seen: list[tuple[Any, ...]] = []
    register_job(engine, seen)
    engine.schedule("job", {"n": 1}, cron="*/30 * * * *", key="k")
    clock.advance("31m")
    (started,) = engine.tick()
    assert engine.run_until_idle() == 1
    assert seen == [(started, "k", at(30), {"n": 1})]
    assert seen[0][2].tzinfo is not None and seen[0][2].utcoffset() == timedelta(0)
    run = engine.get_run(started)
    assert run is not None and run.status == RunStatus.COMPLETED and run.result == {"n": 1}


def test_second_tick_at_the_same_instant_starts_nothing(engine: Engine, clock: FakeClock) -> None:
    """Ticking again before the next occurrence starts nothing new."""
    register_job(engine)
    engine.schedule("job", None, every="1h", key="k")
    clock.advance("1h")
    assert len(engine.tick()) == 1
    assert engine.tick() == []
    clock.advance("59m")
    assert engine.tick() == []
    assert len(engine.list_runs()) == 1


def test_successive_occurrences_each_fire_once(engine: Engine, clock: FakeClock) -> None:
    """Ticking at every occurrence starts one run per occurrence, in order."""
    register_job(engine)
    engine.schedule("job", None, every="10m", key="k")
    started = []
    for _ in range(5):
        clock.advance("10m")
        started += engine.tick()
        engine.run_until_idle()
    assert started == [run_id("k", at(m)) for m in (10, 20, 30, 40, 50)]
    assert {r.status for r in engine.list_runs()} == {RunStatus.COMPLETED}


def test_two_engines_ticking_one_after_the_other_fire_each_occurrence_once(
    db_url: str, clock: FakeClock
) -> None:
    """Two engines on one SQLite file: the second tick at an instant finds nothing to do."""
    with Engine(db_url, clock=clock) as a, Engine(db_url, clock=clock) as b:
        register_job(a)
        register_job(b)
        a.schedule("job", None, every="10m", key="k")
        assert b.schedule("job", None, every="10m", key="k") == "k"
        started: list[str] = []
        for i in range(6):
            clock.advance("10m")
            first, second = (a, b) if i % 2 else (b, a)
            started += first.tick()
            started += second.tick()
        assert sorted(started) == [run_id("k", at(10 * m)) for m in range(1, 7)]
        assert len(a.list_runs(limit=1000)) == 6
        assert [d for d, _, _ in decisions(a, "k")] == ["started"] * 6


def test_two_engines_ticking_concurrently_start_each_occurrence_exactly_once(
    db_url: str, clock: FakeClock
) -> None:
    """Two engines ticking at the same instant on threads never both start an occurrence."""
    with Engine(db_url, clock=clock) as a, Engine(db_url, clock=clock) as b:
        for engine in (a, b):
            register_job(engine)
        for n in range(20):
            a.schedule("job", {"n": n}, every="1m", key=f"k{n}", catchup=3)
        expected: list[str] = []
        for _round in range(3):
            clock.advance("2m")
            barrier = threading.Barrier(2)
            results: dict[str, list[str]] = {}

            def tick(
                name: str,
                engine: Engine,
                barrier: threading.Barrier = barrier,
                results: dict[str, list[str]] = results,
            ) -> None:
                barrier.wait()
                results[name] = engine.tick()

            threads = [threading.Thread(target=tick, args=p) for p in (("a", a), ("b", b))]
            for thread in threads:
                thread.start()
            for thread in threads:
                thread.join()
            both = results["a"] + results["b"]
            assert len(both) == len(set(both)) == 40  # 20 schedules x 2 minutes
            expected += both
        runs = a.list_runs(limit=1000)
        assert sorted(r.id for r in runs) == sorted(expected)
        assert len(runs) == 120


def test_engine_without_the_workflow_does_not_fire_it(db_url: str, clock: FakeClock) -> None:
    """A worker claims only schedules whose workflow it has registered."""
    with Engine(db_url, clock=clock) as owner, Engine(db_url, clock=clock) as stranger:
        register_job(owner)

        @stranger.workflow("other")
        def other(ctx: Context) -> None:
            return None

        owner.schedule("job", None, every="1h", key="k")
        clock.advance("1h")
        assert stranger.tick() == []
        assert stranger.list_runs() == []
        assert owner.tick() == [run_id("k", at(60))]


def test_engine_not_serving_the_pool_does_not_fire_it(db_url: str, clock: FakeClock) -> None:
    """A worker claims only schedules whose pool it serves."""
    with (
        Engine(db_url, clock=clock) as default,
        Engine(db_url, clock=clock, pools=["gpu"]) as gpu,
    ):
        register_job(default)
        register_job(gpu)
        default.schedule("job", None, every="1h", key="on-gpu", pool="gpu")
        default.schedule("job", None, every="1h", key="on-default")
        clock.advance("1h")
        assert gpu.tick() == [run_id("on-gpu", at(60))]
        assert default.tick() == [run_id("on-default", at(60))]
        run = default.get_run(run_id("on-gpu", at(60)))
        assert run is not None and run.pool == "gpu"


def test_schedule_priority_and_retry_reach_its_runs(engine: Engine, clock: FakeClock) -> None:
    """A schedule's priority and retry apply to the runs it starts."""
    attempts: list[int] = []

    @engine.workflow("flaky")
    def flaky(ctx: Context) -> str:
        attempts.append(ctx.attempt)
        if ctx.attempt < 2:
            raise RuntimeError("first try fails")
        return "ok"

    engine.schedule("flaky", None, every="1h", key="k", priority=9, retry=Retry(2, "1s"))
    clock.advance("1h")
    (started,) = engine.tick()
    engine.run_until_idle()
    clock.advance("1s")
    engine.run_until_idle()
    run = engine.get_run(started)
    assert run is not None
    assert run.priority == 9
    assert (run.status, run.result, attempts) == (RunStatus.COMPLETED, "ok", [1, 2])


# -- 5. catch-up ------------------------------------------------------------------------


def test_catchup_one_starts_only_the_latest_missed_occurrence_once(
    engine: Engine, clock: FakeClock
) -> None:
    """After 3 h without ticks, catchup=1 starts the 15:00 occurrence alone."""
    register_job(engine)
    engine.schedule("job", None, every="10m", key="k")
    clock.advance("3h")
    assert engine.tick() == [run_id("k", at(180))]
    assert engine.tick() == []
    assert decisions(engine, "k") == [("dropped_catchup", at(10), 17), ("started", at(180), 1)]
    dropped = engine.schedule_history("k")[-1]
    assert dropped.last_occurrence == at(170)
    info = engine.get_schedule("k")
    assert info is not None and info.next_fire_at == at(190)
    clock.advance("10m")
    assert engine.tick() == [run_id("k", at(190))]


def test_catchup_n_starts_the_n_latest_oldest_first(engine: Engine, clock: FakeClock) -> None:
    """catchup=3 after a gap starts 14:40, 14:50 and 15:00, in that order."""
    seen: list[tuple[Any, ...]] = []
    register_job(engine, seen)
    engine.schedule("job", None, cron="*/10 * * * *", key="k", catchup=3)
    clock.advance("3h")
    started = engine.tick()
    assert started == [run_id("k", at(m)) for m in (160, 170, 180)]
    assert engine.run_until_idle() == 3
    assert [s[2] for s in seen] == [at(160), at(170), at(180)]
    assert decisions(engine, "k") == [
        ("dropped_catchup", at(10), 15),
        ("started", at(160), 1),
        ("started", at(170), 1),
        ("started", at(180), 1),
    ]


def test_catchup_n_with_fewer_missed_starts_them_all(engine: Engine, clock: FakeClock) -> None:
    """catchup=5 with two missed occurrences starts both and drops nothing."""
    register_job(engine)
    engine.schedule("job", None, every="10m", key="k", catchup=5)
    clock.advance("25m")
    assert engine.tick() == [run_id("k", at(10)), run_id("k", at(20))]
    assert [d for d, _, _ in decisions(engine, "k")] == ["started", "started"]


def test_catchup_all_starts_every_missed_occurrence_oldest_first(
    engine: Engine, clock: FakeClock
) -> None:
    """catchup="all" starts each of the 18 missed occurrences, oldest first."""
    register_job(engine)
    engine.schedule("job", None, every="10m", key="k", catchup="all")
    clock.advance("3h")
    assert engine.tick() == [run_id("k", at(m)) for m in range(10, 181, 10)]
    assert engine.tick() == []
    assert all(d == "started" for d, _, _ in decisions(engine, "k"))


def test_catchup_all_beyond_one_batch_completes_within_one_tick(
    engine: Engine, clock: FakeClock
) -> None:
    """250 missed occurrences (several batches of 100) all start in a single tick()."""
    register_job(engine)
    engine.schedule("job", None, every="1m", key="k", catchup="all")
    clock.advance("250m")
    started = engine.tick()
    assert started == [run_id("k", at(m)) for m in range(1, 251)]
    assert engine.tick() == []
    assert len(engine.list_runs(schedule_key="k", limit=1000)) == 250
    history = engine.schedule_history("k", limit=1000)
    assert len(history) == 250 and {h.decision for h in history} == {"started"}
    info = engine.get_schedule("k")
    assert info is not None and info.next_fire_at == at(251)


def test_catchup_all_of_exactly_one_batch_leaves_nothing_behind(
    engine: Engine, clock: FakeClock
) -> None:
    """Exactly 100 missed occurrences: all start, and the next fire is the next one."""
    register_job(engine)
    engine.schedule("job", None, every="1m", key="k", catchup="all")
    clock.advance("100m")
    assert len(engine.tick()) == 100
    info = engine.get_schedule("k")
    assert info is not None and info.next_fire_at == at(101)


def test_catchup_window_drops_older_occurrences(engine: Engine, clock: FakeClock) -> None:
    """catchup="all" with a 30 min window after 3 h starts only 14:30 to 15:00."""
    register_job(engine)
    engine.schedule("job", None, every="10m", key="k", catchup="all", catchup_window="30m")
    clock.advance("3h")
    assert engine.tick() == [run_id("k", at(m)) for m in (150, 160, 170, 180)]
    history = list(reversed(engine.schedule_history("k")))
    assert (history[0].decision, history[0].occurrence, history[0].count) == (
        "dropped_catchup",
        at(10),
        14,
    )
    assert history[0].last_occurrence == at(140)
    assert [h.decision for h in history[1:]] == ["started"] * 4


def test_catchup_window_can_drop_even_the_latest(engine: Engine, clock: FakeClock) -> None:
    """An occurrence older than the window never starts, even with catchup=1."""
    register_job(engine)
    engine.schedule("job", None, every="1h", key="k", catchup_window="10m")
    clock.advance("90m")
    assert engine.tick() == []
    assert decisions(engine, "k") == [("dropped_catchup", at(60), 1)]
    info = engine.get_schedule("k")
    assert info is not None and info.next_fire_at == at(120)
    clock.advance("30m")
    assert engine.tick() == [run_id("k", at(120))]


# -- 7. jitter --------------------------------------------------------------------------


def runnable_from(engine: Engine, clock: FakeClock, occurrence: datetime, jitter: int) -> int:
    """The delay (ms, to a 1 s grain) after which the occurrence's run first executes."""
    for seconds in range(jitter // 1000 + 1):
        clock.set(occurrence + timedelta(seconds=seconds))
        if engine.run_until_idle():
            return seconds * 1000
    raise AssertionError("the run never became runnable within the jitter")


def test_jitter_delays_the_run_without_changing_its_id_or_occurrence(
    engine: Engine, clock: FakeClock
) -> None:
    """The jittered run exists at once but executes only after its delay, inside [0, jitter)."""
    register_job(engine)
    engine.schedule("job", None, every="1h", key="jittery", jitter="10m")
    clock.advance("1h")
    assert engine.tick() == [run_id("jittery", at(60))]
    run = engine.get_run(run_id("jittery", at(60)))
    assert run is not None and run.scheduled_for == at(60)
    delay = runnable_from(engine, clock, at(60), 600_000)
    # A delay of 0 would make this test prove nothing: this key and instant jitter by > 0.
    assert 0 < delay < 600_000
    run = engine.get_run(run_id("jittery", at(60)))
    assert run is not None and run.status == RunStatus.COMPLETED
    assert run.scheduled_for == at(60)
    assert run.started_at is not None and run.started_at >= at(60) + timedelta(milliseconds=delay)


def test_jitter_delay_is_the_same_on_every_engine(tmp_path: Any) -> None:
    """Two engines on separate databases compute the same delay for the same occurrence."""
    delays = []
    for name in ("one", "two"):
        clock = FakeClock(START)
        with Engine(f"sqlite:///{tmp_path / name}.db", clock=clock) as engine:
            register_job(engine)
            engine.schedule("job", None, every="1h", key="jittery", jitter="10m")
            clock.advance("1h")
            engine.tick()
            delays.append(runnable_from(engine, clock, at(60), 600_000))
    assert delays[0] == delays[1] > 0


def test_jitter_delay_differs_between_occurrences(engine: Engine, clock: FakeClock) -> None:
    """The delay is derived from the occurrence too, not one fixed offset per schedule."""
    register_job(engine)
    engine.schedule("job", None, every="1h", key="jittery", jitter="10m")
    found = set()
    for hour in (1, 2, 3):
        clock.set(at(60 * hour))
        engine.tick()
        found.add(runnable_from(engine, clock, at(60 * hour), 600_000))
    assert len(found) > 1


# -- 12. one broken schedule never stops the others -------------------------------------


def test_error_while_firing_one_schedule_goes_to_on_error_and_others_fire(
    db_url: str, clock: FakeClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A schedule whose plan raises is reported with its key; the rest still fire."""
    reported: list[tuple[BaseException, dict[str, Any]]] = []
    original = ScheduleFiring._decide

    def broken(due: Any, now_ms: int) -> Any:
        if due.record.key == "bad":
            raise RuntimeError("cannot plan this one")
        return original(due, now_ms)

    monkeypatch.setattr(ScheduleFiring, "_decide", staticmethod(broken))
    with Engine(db_url, clock=clock, on_error=lambda e, i: reported.append((e, i))) as engine:
        register_job(engine)
        for key in ("a-good", "bad", "z-good"):
            engine.schedule("job", None, every="1h", key=key)
        clock.advance("1h")
        started = engine.tick()
        assert sorted(started) == [run_id("a-good", at(60)), run_id("z-good", at(60))]
        assert len(reported) == 1
        error, info = reported[0]
        assert isinstance(error, RuntimeError) and str(error) == "cannot plan this one"
        assert info["schedule_key"] == "bad"
        assert engine.list_runs(schedule_key="bad") == []
        # the broken one is not retried in a loop within the same tick / instant
        assert engine.tick() == []
        assert len(reported) == 1


def test_broken_schedule_fires_once_it_can_be_planned_again(
    db_url: str, clock: FakeClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A schedule postponed by an error is looked at again later and fires then."""
    reported: list[dict[str, Any]] = []
    original = ScheduleFiring._decide
    broken_now = True

    def flaky(due: Any, now_ms: int) -> Any:
        if broken_now and due.record.key == "bad":
            raise RuntimeError("transient")
        return original(due, now_ms)

    monkeypatch.setattr(ScheduleFiring, "_decide", staticmethod(flaky))
    with Engine(db_url, clock=clock, on_error=lambda e, i: reported.append(i)) as engine:
        register_job(engine)
        engine.schedule("job", None, every="1h", key="bad")
        clock.advance("1h")
        assert engine.tick() == []
        assert [i["schedule_key"] for i in reported] == ["bad"]
        broken_now = False
        clock.advance("5m")
        assert engine.tick() == [run_id("bad", at(60))]


def test_many_due_schedules_all_fire_within_one_tick(engine: Engine, clock: FakeClock) -> None:
    """600 schedules due at once (more than one firing batch) all start in a single tick."""
    register_job(engine)
    for i in range(600):
        engine.schedule("job", None, every="1h", key=f"k{i:03d}")
    clock.advance("1h")
    started = engine.tick()
    assert sorted(started) == sorted(run_id(f"k{i:03d}", at(60)) for i in range(600))
    assert engine.tick() == []
