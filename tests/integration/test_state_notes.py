"""Notes on state changes (DESIGN §3): ``pause/resume/deactivate/activate(key, note=)``
keep the note on the schedule with ``state_changed_at``, and in its history."""

from __future__ import annotations

from datetime import timedelta

import pytest
from tests.timeline import START

from tickwork import ConfigError, Context, Decision, Engine, ScheduleState
from tickwork.testing import FakeClock


@pytest.fixture
def job(engine: Engine) -> Engine:
    @engine.workflow("job")
    def job(ctx: Context) -> None:
        return None

    engine.schedule("job", every="10m", key="k")
    return engine


def test_a_pause_keeps_its_note_and_when_and_records_it_in_the_history(
    job: Engine, clock: FakeClock
) -> None:
    clock.advance(timedelta(minutes=3))
    assert job.pause("k", note="incident 42: the warehouse is down") is True
    info = job.get_schedule("k")
    assert info is not None and info.state is ScheduleState.PAUSED
    assert info.note == "incident 42: the warehouse is down"
    assert info.state_changed_at == START + timedelta(minutes=3)
    (entry,) = job.schedule_history("k")
    assert entry.decision is Decision.PAUSED
    assert entry.reason == "incident 42: the warehouse is down"
    assert entry.decided_at == START + timedelta(minutes=3)


def test_each_state_change_takes_a_note(job: Engine, clock: FakeClock) -> None:
    changes = [
        ("deactivate", "migration"),
        ("activate", "migrated"),
        ("pause", "p"),
        ("resume", "r"),
    ]
    for action, note in changes:
        clock.advance(timedelta(minutes=1))
        assert getattr(job, action)("k", note=note) is True
        info = job.get_schedule("k")
        assert info is not None and (info.note, info.state_changed_at) == (note, clock.now())
    decisions = [(h.decision.value, h.reason) for h in reversed(job.schedule_history("k"))]
    assert decisions == [
        ("deactivated", "migration"), ("activated", "migrated"), ("paused", "p"), ("resumed", "r"),
    ]  # fmt: skip


def test_a_new_note_replaces_the_last_and_no_note_clears_it(job: Engine, clock: FakeClock) -> None:
    job.pause("k", note="incident 42")
    clock.advance(timedelta(minutes=1))
    job.resume("k")
    info = job.get_schedule("k")
    assert info is not None and info.note is None and info.state_changed_at == clock.now()
    entries = [(h.decision.value, h.reason) for h in job.schedule_history("k")]
    assert entries == [("resumed", ""), ("paused", "incident 42")]  # recorded without one too


def test_a_state_the_schedule_has_already_keeps_its_note(job: Engine, clock: FakeClock) -> None:
    job.pause("k", note="incident 42")
    clock.advance(timedelta(minutes=1))
    assert job.pause("k", note="again") is True
    info = job.get_schedule("k")
    assert info is not None and info.note == "incident 42" and info.state_changed_at == START


def test_state_changed_at_of_a_schedule_never_changed_is_its_creation(job: Engine) -> None:
    info = job.get_schedule("k")
    assert info is not None and info.note is None
    assert info.state_changed_at == info.created_at == START


def test_a_note_on_an_unknown_key_is_false(job: Engine) -> None:
    assert job.pause("nope", note="why") is False


@pytest.mark.parametrize(
    "note",
    ["x" * 1001, "two\nlines", "an \x1b[31m escape", "nul\x00", 42, "\ud800"],
)
def test_a_bad_note_is_refused_and_changes_nothing(job: Engine, note: object) -> None:
    with pytest.raises(ConfigError, match="note"):
        job.pause("k", note=note)  # type: ignore[arg-type]
    info = job.get_schedule("k")
    assert info is not None and info.state is ScheduleState.ACTIVE and info.note is None
    assert job.schedule_history("k") == []


def test_a_blank_note_is_no_note_and_a_long_one_fits(job: Engine) -> None:
    job.pause("k", note="   ")
    assert [(h.decision.value, h.reason) for h in job.schedule_history("k")] == [("paused", "")]
    job.resume("k", note="é" * 1000)
    info = job.get_schedule("k")
    assert info is not None and info.note == "é" * 1000


def test_notes_have_async_twins(job: Engine) -> None:
    import asyncio

    assert asyncio.run(job.pause_async("k", note="async")) is True
    info = job.get_schedule("k")
    assert info is not None and info.note == "async"
