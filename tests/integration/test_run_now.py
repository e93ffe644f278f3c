""" "Run now" that says what it did (DESIGN §3, ``trigger``): the current occurrence at most
once, or with ``new_run`` a new run whatever that occurrence has; ``last_fire_at`` is when
the last run was created; a triggered occurrence is never skipped as overlapping itself."""

from __future__ import annotations

from datetime import timedelta

import pytest
from tests.timeline import START

from tickwork import Context, Decision, Engine, RunStatus
from tickwork.testing import FakeClock


@pytest.fixture
def app(engine: Engine) -> Engine:
    @engine.workflow()
    def job(ctx: Context) -> str:
        return ctx.step("work", lambda: "done")

    return engine


def decisions(engine: Engine, key: str) -> list[tuple[Decision, str | None]]:
    return [(h.decision, h.run_id) for h in reversed(engine.schedule_history(key))]


def test_run_now_says_whether_it_started_the_run_or_found_it(app: Engine, clock: FakeClock) -> None:
    key = app.schedule("job", every="1h", key="hourly")
    clock.advance("90m")
    first = app.run_now(key)
    assert first is not None and first.started and first.status is RunStatus.PENDING
    assert first.run_id == "hourly@2026-03-01T13:00:00.000Z"
    app.run_until_idle()
    again = app.run_now(key)
    assert again is not None
    assert (again.run_id, again.started, again.status) == (
        first.run_id, False, RunStatus.COMPLETED
    )  # fmt: skip
    assert app.trigger(key) == first.run_id  # trigger is run_now's run id
    assert app.run_now("nope") is None and app.trigger("nope") is None


def test_new_run_starts_a_run_now_whatever_the_occurrence_has(
    app: Engine, clock: FakeClock
) -> None:
    key = app.schedule("job", every="1h", key="hourly", overlap="skip")
    clock.advance("90m")
    occurrence_run = app.trigger(key)
    first_new = app.run_now(key, new_run=True)
    second_new = app.trigger(key, new_run=True)
    assert first_new is not None and first_new.started
    ids = {occurrence_run, first_new.run_id, second_new}
    assert len(ids) == 3  # each new run has an id of its own
    run = app.get_run(first_new.run_id)
    assert run is not None and run.schedule_key == key and run.scheduled_for == clock.now()
    assert decisions(app, key) == [
        (Decision.TRIGGERED, occurrence_run),
        (Decision.TRIGGERED, first_new.run_id),
        (Decision.TRIGGERED, second_new),
    ]
    app.run_until_idle()
    assert {r.status for r in app.list_runs(schedule_key=key)} == {RunStatus.COMPLETED}
    assert app.get_schedule(key).last_run_id == second_new  # type: ignore[union-attr]


def test_last_fire_at_is_when_the_run_was_created_not_its_occurrence(
    app: Engine, clock: FakeClock
) -> None:
    key = app.schedule("job", every="1h", key="hourly")
    clock.advance("70m")  # the 13:00 occurrence is fired ten minutes late
    (run_id,) = app.tick()
    info = app.get_schedule(key)
    assert info is not None and info.last_run_id == run_id
    assert info.last_fire_at == START + timedelta(minutes=70)
    clock.advance("5m")
    triggered = app.run_now(key, new_run=True)
    info = app.get_schedule(key)
    assert triggered is not None and info is not None
    assert (info.last_run_id, info.last_fire_at) == (triggered.run_id, clock.now())
    clock.advance("1m")
    app.trigger(key)  # the occurrence already has its run: nothing fired
    info = app.get_schedule(key)
    assert info is not None and info.last_fire_at == START + timedelta(minutes=75)


@pytest.mark.parametrize("overlap", ["skip", "buffer_one", "cancel_previous"])
def test_an_occurrence_triggered_before_it_fired_is_not_an_overlap_with_itself(
    app: Engine, clock: FakeClock, overlap: str
) -> None:
    key = app.schedule("job", every="1h", key="hourly", overlap=overlap)
    clock.advance("60m")  # 13:00 is due; no worker has fired it yet
    run_id = app.trigger(key)
    assert run_id == "hourly@2026-03-01T13:00:00.000Z"
    assert app.tick() == []  # its run exists: nothing more to start
    assert decisions(app, key) == [
        (Decision.TRIGGERED, run_id),
        (Decision.ALREADY_STARTED, run_id),
    ]
    run = app.get_run(run_id)
    assert run is not None and run.status is RunStatus.PENDING  # not cancelled by itself
    info = app.get_schedule(key)
    assert info is not None and info.next_fire_at == START + timedelta(hours=2)
