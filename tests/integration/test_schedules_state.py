"""Schedule state, trigger, removal and introspection (DESIGN §3)."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from tests.timeline import START, at, rid

from tickwork import Context, Engine, RunStatus, UnknownWorkflowError
from tickwork.testing import FakeClock

#: the history's record of state changes themselves (tested in test_state_notes*.py)
STATE_CHANGES = {"paused", "resumed", "deactivated", "activated"}


def history(engine: Engine, key: str = "k") -> list[tuple[str, datetime, int]]:
    """(decision, occurrence, count) of the decisions about occurrences, oldest first."""
    return [
        (h.decision, h.occurrence, h.count)
        for h in reversed(engine.schedule_history(key))
        if h.decision not in STATE_CHANGES
    ]


@pytest.fixture
def job(engine: Engine) -> Engine:
    @engine.workflow("job")
    def job(ctx: Context, input: Any = None) -> Any:
        if input == "fail":
            raise RuntimeError("asked to fail")
        return input

    return engine


def tick_every(engine: Engine, clock: FakeClock, until: float, step: float = 10) -> list[str]:
    """Advance in steps to START + until minutes, ticking at each; the runs started."""
    started = []
    while clock.now() < at(until):
        clock.advance(timedelta(minutes=step))
        started += engine.tick()
    return started


# -- 8. pause / resume ------------------------------------------------------------------


def test_paused_schedule_does_not_fire(job: Engine, clock: FakeClock) -> None:
    """While paused, ticks start nothing."""
    job.schedule("job", None, every="10m", key="k")
    clock.set(at(5))
    assert job.pause("k") is True
    assert tick_every(job, clock, 60) == []
    info = job.get_schedule("k")
    assert info is not None and info.state == "paused"
    assert job.list_runs() == []


def test_resume_applies_catchup_one_and_records_missed_occurrences(
    job: Engine, clock: FakeClock
) -> None:
    """On resume catchup=1 starts the latest missed occurrence; the rest are missed_paused."""
    job.schedule("job", None, every="10m", key="k")
    clock.set(at(5))
    job.pause("k")
    tick_every(job, clock, 65, step=5)
    assert job.resume("k") is True
    assert job.tick() == [rid(60)]
    assert history(job) == [("missed_paused", at(10), 5), ("started", at(60), 1)]
    (missed,) = [h for h in job.schedule_history("k") if h.decision == "missed_paused"]
    assert missed.last_occurrence == at(50)
    info = job.get_schedule("k")
    assert info is not None and info.state == "active" and info.next_fire_at == at(70)
    clock.set(at(70))
    assert job.tick() == [rid(70)]


def test_resume_applies_catchup_n(job: Engine, clock: FakeClock) -> None:
    """catchup=3: the three latest occurrences missed while paused start on resume."""
    job.schedule("job", None, every="10m", key="k", catchup=3)
    clock.set(at(5))
    job.pause("k")
    clock.set(at(65))
    job.resume("k")
    assert job.tick() == [rid(40), rid(50), rid(60)]
    assert history(job)[0] == ("missed_paused", at(10), 3)


def test_resume_with_catchup_all_starts_every_missed_occurrence(
    job: Engine, clock: FakeClock
) -> None:
    """catchup="all": every occurrence of the pause starts on resume."""
    job.schedule("job", None, cron="*/10 * * * *", key="k", catchup="all")
    clock.set(at(5))
    job.pause("k")
    clock.set(at(65))
    job.resume("k")
    assert job.tick() == [rid(m) for m in (10, 20, 30, 40, 50, 60)]


def test_resume_before_any_occurrence_was_missed_just_continues(
    job: Engine, clock: FakeClock
) -> None:
    """A pause that spans no occurrence leaves the cadence as it was."""
    job.schedule("job", None, every="10m", key="k")
    clock.set(at(2))
    job.pause("k")
    clock.set(at(4))
    job.resume("k")
    assert tick_every(job, clock, 20) == [rid(10), rid(20)]
    assert [d for d, _, _ in history(job)] == ["started", "started"]


def test_registering_paused_creates_a_paused_schedule(job: Engine, clock: FakeClock) -> None:
    """paused=True at registration: nothing fires until resume."""
    job.schedule("job", None, every="10m", key="k", paused=True)
    info = job.get_schedule("k")
    assert info is not None and info.state == "paused"
    assert tick_every(job, clock, 30) == []
    job.resume("k")
    assert job.tick() == [rid(30)]
    assert history(job) == [("missed_paused", at(10), 2), ("started", at(30), 1)]


def test_occurrences_after_resume_are_not_recorded_as_missed_while_paused(
    job: Engine, clock: FakeClock
) -> None:
    """Paused 12:05-12:25, next tick at 12:45: 12:30 was missed while active, not paused."""
    job.schedule("job", None, every="10m", key="k")
    clock.set(at(5))
    job.pause("k")
    clock.set(at(25))
    job.resume("k")
    clock.set(at(45))
    assert job.tick() == [rid(40)]
    assert history(job) == [
        ("missed_paused", at(10), 2),
        ("dropped_catchup", at(30), 1),
        ("started", at(40), 1),
    ]


# -- 8. deactivate / activate -----------------------------------------------------------


def test_inactive_schedule_never_runs_its_occurrences(job: Engine, clock: FakeClock) -> None:
    """Occurrences while inactive are not started on activate, whatever catchup says."""
    job.schedule("job", None, every="10m", key="k", catchup="all")
    clock.set(at(5))
    assert job.deactivate("k") is True
    assert tick_every(job, clock, 65, step=5) == []
    info = job.get_schedule("k")
    assert info is not None and info.state == "inactive"
    assert job.activate("k") is True
    assert job.tick() == []
    info = job.get_schedule("k")
    assert info is not None and info.state == "active" and info.next_fire_at == at(70)
    clock.set(at(70))
    assert job.tick() == [rid(70)]
    assert [d for d, _, _ in history(job)] == ["started"]


def test_activate_computes_the_next_cron_occurrence_from_that_moment(
    job: Engine, clock: FakeClock
) -> None:
    """A daily cron activated after its missed occurrence waits for tomorrow's."""
    job.schedule("job", None, cron="0 13 * * *", key="k")
    job.deactivate("k")
    clock.set(at(90))  # 13:30: today's 13:00 passed while inactive
    job.activate("k")
    assert job.tick() == []
    info = job.get_schedule("k")
    assert info is not None and info.next_fire_at == datetime(2026, 3, 2, 13, 0, tzinfo=UTC)


def test_activate_an_interval_next_fires_within_one_interval(job: Engine, clock: FakeClock) -> None:
    """After activate, an interval's next occurrence is after now and within one interval."""
    job.schedule("job", None, every="1h", key="k")
    job.deactivate("k")
    clock.set(at(200))
    job.activate("k")
    info = job.get_schedule("k")
    assert info is not None and info.next_fire_at is not None
    assert at(200) < info.next_fire_at <= at(260)
    assert job.tick() == []


def test_activate_before_start_at_still_waits_for_start_at(job: Engine, clock: FakeClock) -> None:
    """A cron schedule bounded by start_at=15:30 never fires earlier, even after activate."""
    job.schedule("job", None, cron="0 * * * *", key="k", start_at=at(210))
    job.deactivate("k")
    clock.set(at(10))
    job.activate("k")
    info = job.get_schedule("k")
    assert info is not None and info.next_fire_at == at(240)
    assert tick_every(job, clock, 180) == []


def test_state_survives_reregistration_without_paused(job: Engine, clock: FakeClock) -> None:
    """Re-registering (same or new definition) keeps paused and inactive states."""
    job.schedule("job", 1, every="10m", key="p")
    job.schedule("job", 1, every="10m", key="i")
    job.pause("p")
    job.deactivate("i")
    for value in (1, 2):
        job.schedule("job", value, every="10m", key="p")
        job.schedule("job", value, every="10m", key="i")
        states = {s.key: s.state for s in job.list_schedules()}
        assert states == {"p": "paused", "i": "inactive"}
    assert tick_every(job, clock, 30) == []


def test_reregistration_with_paused_sets_the_state(job: Engine, clock: FakeClock) -> None:
    """paused=True pauses an active schedule; paused=False resumes a paused one."""
    job.schedule("job", None, every="10m", key="k")
    job.schedule("job", None, every="10m", key="k", paused=True)
    info = job.get_schedule("k")
    assert info is not None and info.state == "paused"
    assert tick_every(job, clock, 20) == []
    job.schedule("job", None, every="10m", key="k", paused=False)
    info = job.get_schedule("k")
    assert info is not None and info.state == "active"
    assert job.tick() == [rid(20)]


@pytest.mark.parametrize("action", ["pause", "resume", "activate", "deactivate", "unschedule"])
def test_state_changes_on_unknown_key_return_false(job: Engine, action: str) -> None:
    """pause, resume, activate, deactivate and unschedule say False for an unknown key."""
    assert getattr(job, action)("nope") is False
    assert job.list_schedules() == []


def test_lookups_on_unknown_key_return_none(job: Engine) -> None:
    """trigger and get_schedule say None for an unknown key; history is empty."""
    assert job.trigger("nope") is None
    assert job.get_schedule("nope") is None
    assert job.schedule_history("nope") == []
    assert job.list_runs() == []


def test_unschedule_removes_the_schedule_but_keeps_its_runs(job: Engine, clock: FakeClock) -> None:
    """After unschedule nothing fires; runs already started stay and still execute."""
    job.schedule("job", None, every="10m", key="k")
    job.schedule("job", None, every="10m", key="other")
    clock.set(at(10))
    assert sorted(job.tick()) == [rid(10, "k"), rid(10, "other")]
    assert job.unschedule("k") is True
    assert job.get_schedule("k") is None
    assert [s.key for s in job.list_schedules()] == ["other"]
    assert job.unschedule("k") is False
    clock.set(at(20))
    assert job.tick() == [rid(20, "other")]
    assert job.run_until_idle() == 3
    run = job.get_run(rid(10))
    assert run is not None and run.status == RunStatus.COMPLETED and run.schedule_key == "k"


def test_unscheduled_key_can_be_registered_afresh(job: Engine, clock: FakeClock) -> None:
    """Registering a removed key starts over: revision 1, a new first occurrence."""
    job.schedule("job", None, every="10m", key="k")
    job.unschedule("k")
    clock.set(at(3))
    job.schedule("job", None, every="10m", key="k")
    info = job.get_schedule("k")
    assert info is not None
    assert (info.revision, info.created_at, info.next_fire_at) == (1, at(3), at(13))


# -- 9. trigger -------------------------------------------------------------------------


def test_trigger_starts_the_latest_occurrence_at_or_before_now(
    job: Engine, clock: FakeClock
) -> None:
    """At 13:30 an hourly schedule's current occurrence is 13:00; its run starts at once."""
    job.schedule("job", {"n": 1}, cron="0 * * * *", key="k")
    clock.set(at(90))
    assert job.trigger("k") == rid(60)
    run = job.get_run(rid(60))
    assert run is not None and run.scheduled_for == at(60) and run.input == {"n": 1}
    assert run.schedule_key == "k" and run.schedule_revision == 1
    assert job.run_until_idle() == 1
    assert job.trigger("k") == rid(60)
    assert len(job.list_runs()) == 1
    # the tick that finds 13:00 due does not start it a second time
    assert job.tick() == []
    assert len(job.list_runs()) == 1


def test_trigger_twice_returns_the_same_run(job: Engine, clock: FakeClock) -> None:
    """trigger is idempotent per occurrence."""
    job.schedule("job", None, every="10m", key="k")
    clock.set(at(15))
    first = job.trigger("k")
    assert first == rid(10)
    assert job.trigger("k") == first
    assert [r.id for r in job.list_runs()] == [first]


def test_trigger_returns_the_run_the_tick_already_started(job: Engine, clock: FakeClock) -> None:
    """Triggering an occurrence that already has a run returns that run's id."""
    job.schedule("job", None, every="10m", key="k")
    clock.set(at(10))
    (fired,) = job.tick()
    clock.set(at(12))
    assert job.trigger("k") == fired
    assert len(job.list_runs()) == 1


def test_trigger_ignores_pause(job: Engine, clock: FakeClock) -> None:
    """Run now works on a paused schedule (it is a person's explicit request)."""
    job.schedule("job", None, every="10m", key="k")
    job.pause("k")
    clock.set(at(25))
    assert job.trigger("k") == rid(20)
    assert job.run_until_idle() == 1


def test_trigger_before_the_first_interval_starts_the_registration_instant(
    job: Engine, clock: FakeClock
) -> None:
    """Before the first occurrence of an interval, its start (the registration) is the
    current occurrence, so triggering twice starts one run."""
    job.schedule("job", None, every="1h", key="k")
    clock.set(at(5))
    assert job.trigger("k") == rid(0)
    clock.set(at(6))
    assert job.trigger("k") == rid(0)
    run = job.get_run(rid(0))
    assert run is not None and run.scheduled_for == at(0)


def test_trigger_and_tick_decisions_are_in_the_history(job: Engine, clock: FakeClock) -> None:
    """Both trigger outcomes are recorded, and the tick that found a run says so."""
    job.schedule("job", None, every="10m", key="k")
    clock.set(at(10))
    job.trigger("k")
    job.trigger("k")
    job.tick()
    assert [d for d, _, _ in history(job)] == ["triggered", "already_started", "already_started"]


def test_trigger_after_end_at_does_not_start_an_occurrence_beyond_it(
    job: Engine, clock: FakeClock
) -> None:
    """After end_at the current occurrence is the last one inside the bounds."""
    job.schedule("job", None, cron="0 * * * *", key="k", end_at=at(90))
    clock.set(at(190))
    assert job.tick() == [rid(60)]
    assert job.trigger("k") == rid(60)
    assert [r.id for r in job.list_runs()] == [rid(60)]


def test_trigger_before_start_at_of_an_interval_uses_now(job: Engine, clock: FakeClock) -> None:
    """Before start_at there is no occurrence yet: the current instant is triggered."""
    job.schedule("job", None, every="1h", key="k", start_at=at(300))
    clock.set(at(90))
    assert job.trigger("k") == rid(90)


def test_trigger_before_start_at_of_a_cron_uses_now(job: Engine, clock: FakeClock) -> None:
    """Before start_at a cron schedule has no occurrence yet: the current instant is used."""
    job.schedule("job", None, cron="0 * * * *", key="k", start_at=at(300))
    clock.set(at(90))
    assert job.trigger("k") == rid(90)


# -- 10. ScheduleInfo -------------------------------------------------------------------


def test_schedule_info_describes_a_new_schedule(job: Engine) -> None:
    """Every field of ScheduleInfo right after registration."""
    job.schedule(
        "job", {"n": 1}, cron="0 9 * * 1-5", timezone="Europe/London", key="k",
        overlap="skip", catchup=3, jitter="30s", pool="reports", priority=4,
    )  # fmt: skip
    info = job.get_schedule("k")
    assert info is not None
    assert info.key == "k"
    assert info.workflow == "job"
    assert info.input == {"n": 1}
    assert info.cron == "0 9 * * 1-5"
    assert info.every is None
    assert info.timezone == "Europe/London"
    assert info.overlap == "skip"
    assert info.catchup == 3
    assert info.jitter == timedelta(seconds=30)
    assert info.pool == "reports"
    assert info.priority == 4
    assert info.state == "active"
    assert info.revision == 1
    assert info.next_fire_at == datetime(2026, 3, 2, 9, 0, tzinfo=UTC)  # Monday
    assert info.last_fire_at is None
    assert info.last_run_id is None
    assert info.last_run_status is None
    assert info.created_at == info.updated_at == START
    assert job.list_schedules() == [info]


def test_schedule_info_defaults_for_an_interval(job: Engine) -> None:
    """every is a timedelta; catchup "all", pool and priority from the workflow."""

    @job.workflow("pooled", pool="batch", priority=2)
    def pooled(ctx: Context) -> None:
        return None

    job.schedule("pooled", None, every="90m", key="k", catchup="all")
    info = job.get_schedule("k")
    assert info is not None
    assert info.every == timedelta(minutes=90) and info.cron is None
    assert info.timezone == "UTC"
    assert info.overlap == "allow"
    assert info.catchup == "all"
    assert info.jitter is None
    assert (info.pool, info.priority) == ("batch", 2)
    assert info.next_fire_at == at(90)


def test_schedule_info_follows_firing_and_completion(job: Engine, clock: FakeClock) -> None:
    """last_fire_at, last_run_id, last_run_status and next_fire_at track the runs."""
    job.schedule("job", None, every="10m", key="k")
    clock.set(at(13))
    (fired,) = job.tick()
    info = job.get_schedule("k")
    assert info is not None
    assert info.last_fire_at == at(13)  # when the run was created, not its occurrence
    assert info.last_run_id == fired == rid(10)
    assert info.last_run_status == RunStatus.PENDING
    assert info.next_fire_at == at(20)
    job.run_until_idle()
    info = job.get_schedule("k")
    assert info is not None and info.last_run_status == RunStatus.COMPLETED
    assert info.created_at == START


def test_schedule_info_reports_a_failed_last_run(job: Engine, clock: FakeClock) -> None:
    """last_run_status is failed when the latest run failed."""
    job.schedule("job", "fail", every="10m", key="k")
    clock.set(at(10))
    job.tick()
    job.run_until_idle()
    info = job.get_schedule("k")
    assert info is not None and info.last_run_status == RunStatus.FAILED


def test_schedule_info_tracks_state_changes(job: Engine, clock: FakeClock) -> None:
    """state and updated_at follow pause, deactivate and activate."""
    job.schedule("job", None, every="10m", key="k")
    for minutes, action, state in [
        (1, "pause", "paused"),
        (2, "resume", "active"),
        (3, "deactivate", "inactive"),
        (4, "activate", "active"),
    ]:
        clock.set(at(minutes))
        getattr(job, action)("k")
        info = job.get_schedule("k")
        assert info is not None
        assert (info.state, info.updated_at, info.created_at) == (state, at(minutes), START)


def test_list_schedules_returns_every_schedule(job: Engine) -> None:
    """list_schedules holds each registered schedule once, as get_schedule describes it."""
    for key in ("b", "a", "c"):
        job.schedule("job", None, every="1h", key=key)
    listed = job.list_schedules()
    assert sorted(s.key for s in listed) == ["a", "b", "c"]
    assert all(job.get_schedule(s.key) == s for s in listed)


def test_list_schedules_is_not_silently_truncated(job: Engine) -> None:
    """With 1001 schedules, list_schedules returns all 1001."""
    for i in range(1001):
        job.schedule("job", None, every="1h", key=f"k{i:04d}")
    assert len(job.list_schedules()) == 1001


# -- async twins -----------------------------------------------------------------------


def test_schedule_api_has_async_twins_with_the_same_results(job: Engine, clock: FakeClock) -> None:
    async def scenario() -> None:
        key = await job.schedule_async("job", "x", every="1h", key="k", catchup=2)
        assert key == "k" and await job.get_schedule_async(key) == job.get_schedule(key)
        assert await job.pause_async(key) is True
        assert (await job.list_schedules_async())[0].state == "paused"
        assert await job.resume_async(key) is True
        assert await job.deactivate_async(key) is True
        assert await job.activate_async(key) is True
        clock.advance("90m")
        run_id = await job.trigger_async(key)
        assert run_id == rid(60)
        history = await job.schedule_history_async(key, 1)
        assert [h.decision for h in history] == ["triggered"]
        job.run_until_idle()
        assert [s.name for s in await job.list_steps_async(run_id)] == []
        assert await job.unschedule_async(key) is True
        assert await job.unschedule_async(key) is False
        assert await job.get_schedule_async(key) is None

    asyncio.run(scenario())


def test_async_twin_raises_the_blocking_calls_error(job: Engine) -> None:
    with pytest.raises(UnknownWorkflowError):
        asyncio.run(job.schedule_async("missing", every="1h"))
    assert job.list_schedules() == []
