"""The firing side has one owner (``_firing.Firing``): one pass takes every kind of firing
(schedules due, deadlines passed, debounce/batch buffers due), and when it is next due is
one answer, the earliest of the three. Each test fails if a kind is dropped from the pass
or from the store's next-due read."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from tests.timeline import at, run_id

from tickwork import Context, DeadlineMissed, Engine, On
from tickwork._values.clock import from_ms
from tickwork.testing import FakeClock


def register(engine: Engine) -> list[DeadlineMissed]:
    """A scheduled workflow and a debounced subscriber; what the deadline hook receives."""

    @engine.workflow("report")
    def report(ctx: Context) -> str:
        return "done"

    @engine.workflow("sync", on=On("ping", debounce="5m"))
    def sync(ctx: Context, input: Any) -> Any:
        return input

    engine.sync_subscriptions()
    missed: list[DeadlineMissed] = []
    engine.on_deadline_missed(missed.append)
    return missed


def next_due(engine: Engine) -> datetime | None:
    """When the firing side says it next has something to do."""
    due = engine._firing.next_due_ms()
    return None if due is None else from_ms(due)


def test_the_next_due_answer_is_the_earliest_of_the_three_kinds(
    engine: Engine, clock: FakeClock
) -> None:
    """In turn the schedule, the buffer and the deadline are the earliest: each is the
    answer when it is."""
    register(engine)
    engine.schedule("report", every="1h", key="k", deadline="15m")
    assert next_due(engine) == at(60)  # the schedule's occurrence
    engine.emit("ping", {"n": 1})
    assert next_due(engine) == at(5)  # the buffer's flush, before it
    clock.set(at(5))
    (flushed,) = engine.tick()
    assert engine.get_run(flushed).workflow == "sync"  # type: ignore[union-attr]
    assert next_due(engine) == at(60)
    clock.set(at(60))
    assert engine.tick() == [run_id("k", at(60))]  # left pending: its deadline comes
    assert next_due(engine) == at(75)  # the deadline, before the next occurrence (2 h)


def test_one_pass_fires_schedules_records_deadlines_and_flushes_buffers(
    engine: Engine, clock: FakeClock
) -> None:
    """All three due at once: one tick does each kind's work."""
    missed = register(engine)
    engine.schedule("report", every="1h", key="k", deadline="15m")
    clock.set(at(60))
    assert engine.tick() == [run_id("k", at(60))]  # its deadline: 13:15
    engine.schedule("report", every="20m", key="often")
    info = engine.get_schedule("often")
    assert info is not None and info.next_fire_at is not None
    clock.set(at(72))
    engine.emit("ping", {"n": 1})  # flushed at 13:17
    clock.set(max(at(80), info.next_fire_at))
    started = engine.tick()
    workflows = sorted(engine.get_run(r).workflow for r in started)  # type: ignore[union-attr]
    assert run_id("often", info.next_fire_at) in started  # the schedule due
    assert workflows == ["report", "sync"]  # and the buffer's run
    assert [m.run_id for m in missed] == [run_id("k", at(60))]  # and the deadline passed
    assert engine.tick() == [] and len(missed) == 1
