"""``deadline="15m"`` (DESIGN §2): when an occurrence's run has not completed that long
after its occurrence, it is recorded once as ``deadline_missed`` in the history, logged at
WARNING, counted in ``tickwork_deadline_misses_total{key}`` and handed to the
``engine.on_deadline_missed`` hooks — never again on replay, restart, or by another
engine on the same store. A run that completed in time is no miss; one that completed
late is one, once."""

from __future__ import annotations

import logging
import threading
from datetime import timedelta

import pytest

from tickwork import Context, DeadlineMissed, Decision, Engine, RunStatus
from tickwork.testing import FakeClock

EVERY = timedelta(hours=1)
FIRST = "k@2026-03-01T13:00:00.000Z"


@pytest.fixture
def missed(engine: Engine) -> list[DeadlineMissed]:
    """What the engine's on_deadline_missed hook received."""
    got: list[DeadlineMissed] = []
    engine.on_deadline_missed(got.append)
    return got


@pytest.fixture
def slow(engine: Engine) -> Engine:
    """A workflow that sleeps 20 minutes (durably) between two steps."""

    @engine.workflow()
    def report(ctx: Context) -> str:
        ctx.step("gather", lambda: "rows")
        ctx.sleep("cool-down", "20m")
        return ctx.step("send", lambda: "sent")

    return engine


def deadline_entries(engine: Engine, key: str = "k") -> list[str]:
    return [
        h.reason for h in engine.schedule_history(key) if h.decision is Decision.DEADLINE_MISSED
    ]


def test_a_run_unfinished_at_its_deadline_is_recorded_once(
    slow: Engine, clock: FakeClock, missed: list[DeadlineMissed], caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING, logger="tickwork.firing")
    slow.schedule("report", every=EVERY, key="k", deadline="15m")
    clock.advance(EVERY)
    assert slow.tick() == [FIRST]
    slow.run_until_idle()  # sleeping for 20 minutes
    clock.advance("14m")
    slow.tick()
    assert missed == [] and deadline_entries(slow) == []
    clock.advance("2m")  # 16 minutes after the occurrence
    slow.tick()
    (miss,) = missed
    assert (miss.key, miss.run_id, miss.status) == ("k", FIRST, RunStatus.SLEEPING)
    assert miss.occurrence == clock.now() - timedelta(minutes=16)
    assert miss.deadline_at == miss.occurrence + timedelta(minutes=15)
    assert deadline_entries(slow) == [miss.reason]
    assert FIRST in miss.reason and "still sleeping 1 min after it" in miss.reason
    entry = next(h for h in slow.schedule_history("k") if h.decision is Decision.DEADLINE_MISSED)
    assert (entry.run_id, entry.occurrence) == (FIRST, miss.occurrence)
    (line,) = [r for r in caplog.records if "deadline_missed" in r.getMessage()]
    assert line.levelno == logging.WARNING and FIRST in line.getMessage()
    # Never again: later passes, the run's replay after its sleep, its late completion.
    slow.tick()
    clock.advance("10m")
    slow.run_until_idle()
    run = slow.get_run(FIRST)
    assert run is not None and run.status is RunStatus.COMPLETED
    slow.tick()
    assert len(missed) == 1 and len(deadline_entries(slow)) == 1
    assert slow.console.stats().deadline_misses == {"k": 1}


def test_a_run_completed_in_time_is_no_miss(
    engine: Engine, clock: FakeClock, missed: list[DeadlineMissed]
) -> None:
    @engine.workflow()
    def quick(ctx: Context) -> str:
        return "done"

    engine.schedule("quick", every=EVERY, key="k", deadline="15m")
    for _ in range(3):
        clock.advance(EVERY)
        engine.tick()
        engine.run_until_idle()
    clock.advance("30m")
    engine.tick()
    assert missed == [] and deadline_entries(engine) == []
    assert engine.console.stats().deadline_misses == {}


def test_a_run_that_completes_late_is_recorded_once_as_completed_late(
    slow: Engine, clock: FakeClock, missed: list[DeadlineMissed]
) -> None:
    slow.schedule("report", every=EVERY, key="k", deadline="15m")
    clock.advance(EVERY)
    slow.tick()
    slow.run_until_idle()
    clock.advance("21m")  # nobody ticked at the deadline: the run ends first
    slow.run_until_idle()
    run = slow.get_run(FIRST)
    assert run is not None and run.status is RunStatus.COMPLETED
    slow.tick()
    (miss,) = missed
    assert miss.status is RunStatus.COMPLETED and "completed 6 min late" in miss.reason
    slow.tick()
    assert len(missed) == 1


def test_a_failed_run_misses_its_deadline(
    engine: Engine, clock: FakeClock, missed: list[DeadlineMissed]
) -> None:
    @engine.workflow()
    def broken(ctx: Context) -> None:
        raise RuntimeError("no data")

    engine.schedule("broken", every=EVERY, key="k", deadline="15m")
    clock.advance(EVERY)
    engine.tick()
    engine.run_until_idle()
    assert missed == []  # failed, but its deadline has not passed yet
    clock.advance("15m")
    engine.tick()
    (miss,) = missed
    assert miss.status is RunStatus.FAILED and "ended failed" in miss.reason


def test_a_cancelled_run_misses_no_deadline(
    slow: Engine, clock: FakeClock, missed: list[DeadlineMissed]
) -> None:
    """Someone decided it should not complete: no alert for it."""
    slow.schedule("report", every=EVERY, key="k", deadline="15m")
    clock.advance(EVERY)
    (run_id,) = slow.tick()
    slow.run_until_idle()  # sleeping
    assert slow.cancel(run_id)
    clock.advance("30m")
    slow.tick()
    assert missed == [] and deadline_entries(slow) == []


def test_another_engine_on_the_same_store_records_no_second_miss(
    db_url: str, clock: FakeClock
) -> None:
    """A restart, or a second worker: the miss is marked in the store, not in memory."""
    seen: list[tuple[str, DeadlineMissed]] = []

    def engine_named(name: str) -> Engine:
        engine = Engine(db_url, clock=clock)

        @engine.workflow()
        def report(ctx: Context) -> None:
            ctx.sleep("long", "1h")

        engine.on_deadline_missed(lambda miss: seen.append((name, miss)))
        return engine

    with engine_named("first") as first, engine_named("second") as second:
        first.schedule("report", every=EVERY, key="k", deadline="15m")
        clock.advance(EVERY)
        first.tick()
        first.run_until_idle()
        clock.advance("20m")
        second.tick()
        first.tick()
        second.tick()
    with engine_named("restarted") as restarted:
        restarted.tick()
        assert [name for name, _ in seen] == ["second"]
        assert len(deadline_entries(restarted)) == 1


def test_backfilled_and_manual_runs_have_no_deadline(
    slow: Engine, clock: FakeClock, missed: list[DeadlineMissed]
) -> None:
    slow.schedule("report", every=EVERY, key="k", deadline="15m")
    clock.advance(EVERY * 3)
    assert slow.tick() == ["k@2026-03-01T15:00:00.000Z"]  # catch-up: the latest
    slow.backfill("k", clock.now() - EVERY * 3, clock.now() - EVERY)  # late by construction
    slow.trigger("k", new_run=True)
    slow.run_until_idle()
    clock.advance("1h")
    slow.run_until_idle()
    slow.tick()
    # Only the occurrence the schedule fired itself (15:00) has a deadline: it completed
    # at 16:00, late; the backfilled 12:00 and 13:00 and the manual run completed too.
    assert [m.run_id for m in missed] == ["k@2026-03-01T15:00:00.000Z"]
    runs = slow.list_runs(schedule_key="k")
    assert len(runs) == 5 and all(run.status is RunStatus.COMPLETED for run in runs[1:])


def test_a_failing_hook_is_reported_and_the_miss_still_recorded(
    db_url: str, clock: FakeClock
) -> None:
    errors: list[dict[str, object]] = []
    with Engine(db_url, clock=clock, on_error=lambda e, info: errors.append(info)) as engine:

        @engine.workflow()
        def report(ctx: Context) -> None:
            ctx.sleep("long", "1h")

        @engine.on_deadline_missed
        def page_someone(miss: DeadlineMissed) -> None:
            raise RuntimeError("pager down")

        engine.schedule("report", every=EVERY, key="k", deadline="15m")
        clock.advance(EVERY)
        engine.tick()
        engine.run_until_idle()
        clock.advance("20m")
        engine.tick()
        assert [e["where"] for e in errors] == ["hook page_someone"]
        assert len(deadline_entries(engine)) == 1
        assert engine.console.recent_deadline_misses()[0].run_id == FIRST


def test_a_removed_schedule_leaves_no_miss(
    slow: Engine, clock: FakeClock, missed: list[DeadlineMissed]
) -> None:
    slow.schedule("report", every=EVERY, key="k", deadline="15m")
    clock.advance(EVERY)
    slow.tick()
    slow.unschedule("k")
    clock.advance("20m")
    slow.tick()
    assert missed == []


def test_two_engines_checking_at_once_record_each_miss_once(db_url: str, clock: FakeClock) -> None:
    """Two workers' passes at the same instant over 250 missed deadlines (three batches
    each): every miss is recorded, by one of them, once."""
    seen: list[tuple[str, str]] = []

    def engine_named(name: str) -> Engine:
        engine = Engine(db_url, clock=clock)

        @engine.workflow()
        def report(ctx: Context) -> None:
            return None

        engine.on_deadline_missed(lambda miss: seen.append((name, miss.run_id)))
        return engine

    with engine_named("a") as a, engine_named("b") as b:
        a.schedule("report", every="1m", key="k", deadline="1m", catchup="all")
        clock.advance(timedelta(minutes=250))
        assert len(a.tick()) == 250  # nobody executes them
        clock.advance(timedelta(minutes=2))
        barrier = threading.Barrier(2)

        def check(engine: Engine) -> None:
            barrier.wait()
            engine.tick()

        threads = [threading.Thread(target=check, args=(e,)) for e in (a, b)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        # Each tick fired the occurrences due then too (12:01 to 16:12, nobody ran them):
        # every one whose deadline passed missed it.
        passed = {
            run.id
            for run in a.list_runs(schedule_key="k", limit=1000)
            if run.scheduled_for is not None
            and run.scheduled_for + timedelta(minutes=1) <= clock.now()
        }
        run_ids = [run_id for _, run_id in seen]
        assert len(passed) == 251 and sorted(run_ids) == sorted(passed)  # none twice
        history = a.schedule_history("k", limit=1000)
        recorded = [h.run_id for h in history if h.decision is Decision.DEADLINE_MISSED]
        assert sorted(recorded) == sorted(passed)  # type: ignore[type-var]
        assert a.console.stats().deadline_misses == {"k": 251}
