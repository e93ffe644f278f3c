"""``max_runs=N`` (DESIGN §2, §3): a schedule starts at most N runs — occurrences it fires,
catch-up included, and backfills; a person's ``trigger`` does not count — then deactivates
itself in the same transaction with a note and a ``max_runs_reached`` entry in its
history. ``ScheduleInfo.runs_left`` says how many are left. A manual run never consumes
an occurrence: the occurrence at that time still fires on its own."""

from __future__ import annotations

import logging
from datetime import timedelta

import pytest

from tickwork import ConfigError, Context, Decision, Engine, Every, ScheduleInfo, ScheduleState
from tickwork.testing import FakeClock

EVERY = timedelta(minutes=10)


@pytest.fixture
def app(engine: Engine) -> Engine:
    @engine.workflow()
    def job(ctx: Context) -> str:
        return "done"

    return engine


def fire_next(engine: Engine, clock: FakeClock) -> list[str]:
    clock.advance(EVERY)
    started = engine.tick()
    engine.run_until_idle()
    return started


def info_of(engine: Engine, key: str = "k") -> ScheduleInfo:
    info = engine.get_schedule(key)
    assert info is not None
    return info


def test_the_schedule_starts_n_runs_then_deactivates_itself_with_a_note(
    app: Engine, clock: FakeClock, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="tickwork.firing")
    app.schedule("job", every=EVERY, key="k", max_runs=3)
    assert (info_of(app).max_runs, info_of(app).runs_left) == (3, 3)
    assert len(fire_next(app, clock)) == 1
    assert info_of(app).runs_left == 2
    fire_next(app, clock)
    assert info_of(app).state is ScheduleState.ACTIVE
    (third,) = fire_next(app, clock)
    info = info_of(app)
    assert (info.state, info.runs_left) == (ScheduleState.INACTIVE, 0)
    assert info.note == "started its 3 runs (max_runs=3)"
    assert info.state_changed_at == clock.now()
    latest = app.schedule_history("k")[0]
    assert (latest.decision, latest.reason) == (Decision.MAX_RUNS_REACHED, info.note)
    assert info.last_run_id == third
    assert any("max_runs_reached" in r.getMessage() for r in caplog.records)
    # Inactive: later occurrences start nothing.
    for _ in range(3):
        assert fire_next(app, clock) == []
    assert len(app.list_runs(schedule_key="k")) == 3


def test_catch_up_starts_only_the_runs_left_and_records_the_rest(
    app: Engine, clock: FakeClock
) -> None:
    app.schedule("job", every=EVERY, key="k", max_runs=2, catchup="all")
    clock.advance(EVERY * 5)  # five occurrences missed: two may start
    started = app.tick()
    assert len(started) == 2
    history = list(reversed(app.schedule_history("k")))
    assert [h.decision for h in history] == [
        Decision.STARTED, Decision.STARTED, Decision.MAX_RUNS_REACHED,
        Decision.MAX_RUNS_REACHED, Decision.MAX_RUNS_REACHED, Decision.MAX_RUNS_REACHED,
    ]  # fmt: skip
    assert "max_runs=2" in history[2].reason
    assert info_of(app).state is ScheduleState.INACTIVE


def test_backfills_count_toward_the_limit(app: Engine, clock: FakeClock) -> None:
    app.schedule("job", every=EVERY, key="k", max_runs=4)
    start = clock.now() - EVERY * 3
    backfilled = app.backfill("k", start, clock.now())  # three occurrences
    assert len(backfilled) == 3 and info_of(app).runs_left == 1
    assert info_of(app).state is ScheduleState.ACTIVE
    fire_next(app, clock)
    assert (info_of(app).state, info_of(app).runs_left) == (ScheduleState.INACTIVE, 0)
    # A backfill beyond the limit starts nothing and says why.
    assert app.backfill("k", start - EVERY * 2, start) == []
    assert app.schedule_history("k")[0].decision is Decision.MAX_RUNS_REACHED


def test_a_backfill_that_reaches_the_limit_deactivates_the_schedule(
    app: Engine, clock: FakeClock
) -> None:
    app.schedule("job", every=EVERY, key="k", max_runs=2)
    started = app.backfill("k", clock.now() - EVERY * 3, clock.now())
    assert len(started) == 2
    info = info_of(app)
    assert (info.state, info.runs_left, info.note) == (
        ScheduleState.INACTIVE, 0, "started its 2 runs (max_runs=2)"
    )  # fmt: skip


def test_a_trigger_with_new_run_does_not_count(app: Engine, clock: FakeClock) -> None:
    app.schedule("job", every=EVERY, key="k", max_runs=2)
    for _ in range(3):
        assert app.trigger("k", new_run=True) is not None
    assert info_of(app).runs_left == 2
    fire_next(app, clock)
    fire_next(app, clock)
    assert info_of(app).state is ScheduleState.INACTIVE
    # 3 manual runs and the 2 the schedule started on its own.
    assert len(app.list_runs(schedule_key="k")) == 5


def test_a_manual_run_leaves_the_occurrence_at_that_time_to_fire_on_its_own(
    app: Engine, clock: FakeClock
) -> None:
    """Airflow's users lost scheduled runs to a manual run at the same instant
    (apache/airflow#41208): here the manual run has an id of its own."""
    app.schedule("job", every=EVERY, key="k")
    clock.advance(EVERY)  # exactly at the occurrence, before any worker fired it
    manual = app.trigger("k", new_run=True)
    started = app.tick()
    assert started == ["k@2026-03-01T12:10:00.000Z"]
    assert manual not in started
    app.run_until_idle()
    runs = {run.id: run for run in app.list_runs(schedule_key="k")}
    assert set(runs) == {manual, started[0]}
    assert runs[started[0]].scheduled_for == clock.now()
    assert [h.decision for h in reversed(app.schedule_history("k"))] == [
        Decision.TRIGGERED, Decision.STARTED,
    ]  # fmt: skip


def test_activating_a_schedule_that_started_its_runs_is_refused_until_max_runs_is_raised(
    app: Engine, clock: FakeClock
) -> None:
    app.schedule("job", every=EVERY, key="k", max_runs=1)
    fire_next(app, clock)
    assert info_of(app).state is ScheduleState.INACTIVE
    with pytest.raises(ConfigError, match=r"started its 1 run \(max_runs=1\).*higher max_runs"):
        app.activate("k")
    assert info_of(app).state is ScheduleState.INACTIVE
    # Raising the limit updates the definition but leaves the schedule inactive ...
    app.schedule("job", every=EVERY, key="k", max_runs=3)
    info = info_of(app)
    assert (info.revision, info.state, info.runs_left) == (2, ScheduleState.INACTIVE, 2)
    # ... until a person activates it; then it starts the runs left.
    assert app.activate("k", note="two more") is True
    assert len(fire_next(app, clock)) == 1
    fire_next(app, clock)
    assert (info_of(app).state, info_of(app).runs_left) == (ScheduleState.INACTIVE, 0)
    assert len(app.list_runs(schedule_key="k")) == 3


def test_lowering_max_runs_to_what_it_started_deactivates_it_at_once(
    app: Engine, clock: FakeClock
) -> None:
    app.schedule("job", every=EVERY, key="k", max_runs=5)
    fire_next(app, clock)
    fire_next(app, clock)
    app.schedule("job", every=EVERY, key="k", max_runs=2)
    info = info_of(app)
    assert (info.state, info.runs_left, info.note) == (
        ScheduleState.INACTIVE, 0, "started its 2 runs (max_runs=2)"
    )  # fmt: skip
    # Removing the limit: no runs_left, and activate works again.
    app.schedule("job", every=EVERY, key="k")
    assert info_of(app).runs_left is None and app.activate("k")
    assert len(fire_next(app, clock)) == 1


def test_a_schedule_without_max_runs_has_no_runs_left(app: Engine) -> None:
    app.schedule("job", every=EVERY, key="k")
    info = info_of(app)
    assert (info.max_runs, info.runs_left, info.deadline) == (None, None, None)


def test_declared_schedules_carry_max_runs_and_deadline(db_url: str, clock: FakeClock) -> None:
    with Engine(
        db_url, clock=clock, schedules=[{"workflow": "job", "key": "d", "every": "1h",
                                         "max_runs": 7, "deadline": "15m"}]
    ) as engine:  # fmt: skip

        @engine.workflow("job", schedule=Every("10m", max_runs=2, deadline="5m"))
        def job(ctx: Context) -> None:
            return None

        engine.sync_schedules()
        declared, listed = engine.get_schedule("job"), engine.get_schedule("d")
        assert declared is not None and listed is not None
        assert (declared.max_runs, declared.deadline) == (2, timedelta(minutes=5))
        assert (listed.max_runs, listed.runs_left, listed.deadline) == (
            7, 7, timedelta(minutes=15)
        )  # fmt: skip


def test_catch_up_of_n_with_fewer_runs_left_starts_exactly_those_and_deactivates(
    app: Engine, clock: FakeClock
) -> None:
    app.schedule("job", every=EVERY, key="k", max_runs=3, catchup=3)
    fire_next(app, clock)  # one of three started: two left
    clock.advance(EVERY * 5)  # five missed; catchup=3 decides the latest three
    started = app.tick()
    assert len(started) == 2
    info = info_of(app)
    assert (info.state, info.runs_left) == (ScheduleState.INACTIVE, 0)
    history = list(reversed(app.schedule_history("k")))
    decided = [(h.decision, h.occurrence) for h in history[1:]]  # after the first run
    latest = clock.now()
    assert decided[0][0] is Decision.DROPPED_CATCHUP and history[1].count == 2
    assert decided[1:] == [
        (Decision.STARTED, latest - EVERY * 2),
        (Decision.STARTED, latest - EVERY),
        (Decision.MAX_RUNS_REACHED, latest),
        (Decision.MAX_RUNS_REACHED, latest),  # the deactivation, with its note
    ]
    assert history[-2].reason == "max_runs=3: the schedule started its 3 run(s)"
    assert history[-1].reason == info.note == "started its 3 runs (max_runs=3)"
    assert set(started) == {h.run_id for h in history[1:] if h.decision is Decision.STARTED}


def test_a_trigger_with_new_run_never_counts_even_with_one_run_left_or_none(
    app: Engine, clock: FakeClock
) -> None:
    app.schedule("job", every=EVERY, key="k", max_runs=2)
    fire_next(app, clock)
    assert info_of(app).runs_left == 1
    manual = app.trigger("k", new_run=True)
    app.run_until_idle()
    assert manual is not None and info_of(app).runs_left == 1
    assert info_of(app).state is ScheduleState.ACTIVE
    (last,) = fire_next(app, clock)  # the last counted run is the schedule's own
    assert (info_of(app).state, info_of(app).runs_left) == (ScheduleState.INACTIVE, 0)
    # Spent and inactive, a person may still run it now: it counts nothing, changes nothing.
    again = app.trigger("k", new_run=True)
    app.run_until_idle()
    info = info_of(app)
    assert again is not None and (info.state, info.runs_left) == (ScheduleState.INACTIVE, 0)
    assert info.note == "started its 2 runs (max_runs=2)"
    assert {run.id for run in app.list_runs(schedule_key="k")} >= {manual, last, again}
    assert len(app.list_runs(schedule_key="k")) == 4
