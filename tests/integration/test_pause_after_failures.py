"""``pause_after_failures=N`` (DESIGN §3): after N runs of a schedule in a row ended
``failed`` (after all their retries) the schedule pauses itself, with a note naming the
last failed run and its error, recorded in its history and logged; a completed run resets
the count."""

from __future__ import annotations

import logging
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest

from tickwork import Context, Decision, Engine, Every, Retry, RunStatus, ScheduleState
from tickwork.testing import FakeClock


@pytest.fixture
def outcomes(engine: Engine) -> list[str]:
    """What the next runs of "flaky" do, in order ("fail" or "ok"); "ok" once empty."""
    plan: list[str] = []

    @engine.workflow("flaky")
    def flaky(ctx: Context) -> str:
        if plan and plan.pop(0) == "fail":
            raise RuntimeError(f"warehouse unreachable at {ctx.scheduled_for:%H:%M}")
        return "ok"

    return plan


def next_occurrence(engine: Engine, clock: FakeClock, every: timedelta) -> list[str]:
    """Advance to the next occurrence, fire it and run everything (retries included, their
    back-off waited for second by second); the runs started."""
    clock.advance(every)
    started = engine.tick()
    for _ in range(30):
        engine.run_until_idle()
        clock.advance(timedelta(seconds=1))
    return started


def state(engine: Engine, key: str = "k") -> ScheduleState:
    info = engine.get_schedule(key)
    assert info is not None
    return info.state


EVERY = timedelta(minutes=10)


def test_n_failed_runs_in_a_row_pause_the_schedule_naming_the_last(
    engine: Engine, clock: FakeClock, outcomes: list[str], caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="tickwork.firing")
    engine.schedule("flaky", every=EVERY, key="k", pause_after_failures=3)
    outcomes.extend(["fail"] * 5)
    for _ in range(2):
        next_occurrence(engine, clock, EVERY)
    assert state(engine) is ScheduleState.ACTIVE
    (last,) = next_occurrence(engine, clock, EVERY)
    run = engine.get_run(last)
    assert run is not None and run.status is RunStatus.FAILED
    info = engine.get_schedule("k")
    assert info is not None and info.state is ScheduleState.PAUSED
    assert info.note is not None and last in info.note
    assert "RuntimeError: warehouse unreachable at 12:30" in info.note
    assert info.state_changed_at == run.finished_at
    entry = engine.schedule_history("k")[0]
    assert (entry.decision, entry.run_id, entry.reason) == (Decision.AUTO_PAUSED, last, info.note)
    (line,) = [r for r in caplog.records if r.name == "tickwork.firing"]
    assert "auto_paused" in line.getMessage() and last in line.getMessage()
    assert line.levelno == logging.INFO
    # Paused: later occurrences are missed, not run.
    assert next_occurrence(engine, clock, EVERY) == []


def test_a_completed_run_resets_the_count(
    engine: Engine, clock: FakeClock, outcomes: list[str]
) -> None:
    engine.schedule("flaky", every=EVERY, key="k", pause_after_failures=2)
    outcomes.extend(["fail", "ok", "fail", "ok", "fail"])
    for _ in range(5):
        next_occurrence(engine, clock, EVERY)
    assert state(engine) is ScheduleState.ACTIVE
    assert [r.status for r in engine.list_runs(schedule_key="k")].count(RunStatus.FAILED) == 3


def test_the_retries_of_one_run_count_once(engine: Engine, clock: FakeClock) -> None:
    tries: list[int] = []

    @engine.workflow("stubborn", retry=Retry(max_attempts=3, backoff="1s"))
    def stubborn(ctx: Context) -> None:
        tries.append(ctx.attempt)
        raise RuntimeError("still broken")

    engine.schedule("stubborn", every=EVERY, key="k", pause_after_failures=2)
    next_occurrence(engine, clock, EVERY)
    assert tries == [1, 2, 3] and state(engine) is ScheduleState.ACTIVE
    next_occurrence(engine, clock, EVERY)
    assert tries == [1, 2, 3] * 2 and state(engine) is ScheduleState.PAUSED


def test_resuming_after_an_auto_pause_fires_again_and_counts_afresh(
    engine: Engine, clock: FakeClock, outcomes: list[str]
) -> None:
    engine.schedule("flaky", every=EVERY, key="k", pause_after_failures=2, catchup=1)
    outcomes.extend(["fail"] * 4)
    next_occurrence(engine, clock, EVERY)
    next_occurrence(engine, clock, EVERY)
    assert state(engine) is ScheduleState.PAUSED
    assert engine.resume("k", note="warehouse is back") is True
    assert len(next_occurrence(engine, clock, EVERY)) == 1  # the latest missed one
    assert state(engine) is ScheduleState.ACTIVE  # one failure since the resume
    next_occurrence(engine, clock, EVERY)
    assert state(engine) is ScheduleState.PAUSED
    decisions = [h.decision for h in engine.schedule_history("k", limit=100)]
    assert decisions.count(Decision.AUTO_PAUSED) == 2 and Decision.RESUMED in decisions


def test_without_the_option_a_schedule_never_pauses_itself(
    engine: Engine, clock: FakeClock, outcomes: list[str]
) -> None:
    engine.schedule("flaky", every=EVERY, key="k")
    outcomes.extend(["fail"] * 6)
    for _ in range(6):
        next_occurrence(engine, clock, EVERY)
    info = engine.get_schedule("k")
    assert info is not None and info.state is ScheduleState.ACTIVE
    assert info.pause_after_failures is None


def test_the_option_is_part_of_the_definition(engine: Engine, outcomes: list[str]) -> None:
    engine.schedule("flaky", every=EVERY, key="k")
    before = engine.get_schedule("k")
    engine.schedule("flaky", every=EVERY, key="k")  # the same: nothing changes
    engine.schedule("flaky", every=EVERY, key="k", pause_after_failures=4)
    info = engine.get_schedule("k")
    assert before is not None and info is not None
    assert (before.revision, info.revision, info.pause_after_failures) == (1, 2, 4)
    assert info.next_fire_at == before.next_fire_at


def test_declared_schedules_and_the_config_file_carry_the_option(
    db_url: str, clock: FakeClock, tmp_path: Path
) -> None:
    config = tmp_path / "tickwork.toml"
    config.write_text(
        '[[schedules]]\nworkflow = "job"\nkey = "from-file"\nevery = "1h"\n'
        "pause_after_failures = 5\n"
    )
    with Engine(db_url, clock=clock, config=config) as engine:

        @engine.workflow("job", schedule=Every("10m", pause_after_failures=2))
        def job(ctx: Context) -> Any:
            return None

        engine.sync_schedules()
        declared, from_file = engine.get_schedule("job"), engine.get_schedule("from-file")
        assert declared is not None and declared.pause_after_failures == 2
        assert from_file is not None and from_file.pause_after_failures == 5
