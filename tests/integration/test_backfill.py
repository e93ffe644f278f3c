"""engine.backfill (DESIGN §3): a run for every occurrence in [start, end), oldest first,
idempotent by occurrence, recorded as "backfilled", the schedule's own cadence unmoved;
overlap overrides the schedule's policy. Both backends, FakeClock."""

from __future__ import annotations

import asyncio
from datetime import datetime, timedelta
from typing import Any

import pytest
from tests.timeline import START, at, rid

from tickwork import ConfigError, Context, Engine, RunStatus
from tickwork.testing import FakeClock

CADENCES = [{"every": "10m"}, {"cron": "*/10 * * * *"}]


@pytest.fixture(params=CADENCES, ids=["interval", "cron"])
def cadence(request: pytest.FixtureRequest) -> dict[str, Any]:
    return dict(request.param)


def decisions(engine: Engine) -> list[tuple[str, datetime, str | None]]:
    history = reversed(engine.schedule_history("k", 1000))
    return [(h.decision, h.occurrence, h.run_id) for h in history]


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


def test_backfill_starts_every_past_occurrence_oldest_first_and_returns_their_ids(
    job: Engine, clock: FakeClock, cadence: dict[str, Any]
) -> None:
    """Registered at 12:00, it has fired nothing; at 13:00 a backfill of 12:05-12:45
    starts 12:10, 12:20, 12:30, 12:40 now, each recorded "backfilled"."""
    job.schedule("job", None, key="k", **cadence)
    clock.set(at(5))  # before the first occurrence: nothing due yet
    ids = job.backfill("k", at(5), at(45))
    assert ids == [rid(10), rid(20), rid(30), rid(40)]
    for minutes in (10, 20, 30, 40):
        run = job.get_run(rid(minutes))
        assert run is not None and run.status == RunStatus.PENDING
        assert run.scheduled_for == at(minutes) and run.schedule_key == "k"
    assert decisions(job) == [("backfilled", at(m), rid(m)) for m in (10, 20, 30, 40)]
    info = job.get_schedule("k")
    assert info is not None and info.next_fire_at == at(10)  # the cadence did not move
    assert job.run_until_idle() == 4


def test_backfill_is_idempotent_by_occurrence(
    job: Engine, clock: FakeClock, cadence: dict[str, Any]
) -> None:
    """A second backfill over the same span starts nothing: it answers with the runs the
    occurrences already have; an overlapping span starts only the new ones."""
    job.schedule("job", None, key="k", **cadence)
    clock.set(at(60))
    first = job.backfill("k", at(-30), at(0))
    assert job.backfill("k", at(-30), at(0)) == first
    assert len(job.list_runs(schedule_key="k")) == 3
    assert job.backfill("k", at(-20), at(10)) == [rid(-20), rid(-10), rid(0)]
    assert len(job.list_runs(schedule_key="k")) == 4
    assert [d for d, _, _ in decisions(job)][-3:] == [
        "already_started",
        "already_started",
        "backfilled",
    ]


def test_an_intervals_backfill_lies_on_its_grid_extended_before_its_anchor(
    job: Engine, clock: FakeClock
) -> None:
    """every="10m" anchored at 12:00:00 has occurrences at 11:40, 11:50, 12:00 too."""
    clock.set(START + timedelta(seconds=7))
    job.schedule("job", None, key="k", every="10m")  # anchored at 12:00:07
    ids = job.backfill("k", at(-25), at(0.2))
    grid = [START + timedelta(minutes=m, seconds=7) for m in (-20, -10, 0)]
    assert [job.get_run(i).scheduled_for for i in ids] == grid  # type: ignore[union-attr]


def test_future_occurrences_backfilled_are_not_started_again_by_the_cadence(
    job: Engine, clock: FakeClock, cadence: dict[str, Any]
) -> None:
    """A backfill reaching into the future starts those runs now; when the cadence comes
    to them it finds their runs and starts nothing more."""
    job.schedule("job", None, key="k", **cadence)
    assert job.backfill("k", at(5), at(25)) == [rid(10), rid(20)]
    clock.set(at(10))
    assert job.tick() == []
    clock.set(at(30))
    assert job.tick() == [rid(30)]
    assert len(job.list_runs(schedule_key="k")) == 3
    assert ("already_started", at(10), rid(10)) in decisions(job)


def test_backfill_with_buffer_all_runs_them_one_by_one(
    job: Engine, clock: FakeClock, cadence: dict[str, Any]
) -> None:
    """overlap="buffer_all": the first starts, the others wait and start one at a time,
    oldest first, each when the one before it ended."""
    job.schedule("job", None, key="k", **cadence)
    clock.set(at(5))  # the cadence's first occurrence (12:10) is not due yet
    ids = job.backfill("k", at(-30), at(0), overlap="buffer_all")
    assert ids == [rid(-30), rid(-20), rid(-10)]
    assert status(job, rid(-30)) == RunStatus.PENDING
    assert job.get_run(rid(-20)) is None  # waits its turn: no run yet
    order = []
    for _ in range(10):
        job.run_until_idle()
        started = job.tick()
        if not started:
            break
        order.extend(started)
    assert order == [rid(-20), rid(-10)]
    assert all(status(job, i) == RunStatus.COMPLETED for i in ids)
    assert len(job.list_runs(schedule_key="k")) == 3


def test_overlap_allow_overrides_a_skip_schedule(
    job: Engine, clock: FakeClock, cadence: dict[str, Any]
) -> None:
    """overlap="allow" starts all at once, whatever the schedule's own policy."""
    job.schedule("job", None, key="k", overlap="skip", **cadence)
    clock.set(at(60))
    assert job.backfill("k", at(-30), at(0), overlap="allow") == [rid(-30), rid(-20), rid(-10)]
    assert all(status(job, rid(m)) == RunStatus.PENDING for m in (-30, -20, -10))


def test_the_schedules_skip_policy_applies_without_an_override(
    job: Engine, clock: FakeClock, cadence: dict[str, Any]
) -> None:
    """overlap="skip" (the schedule's): the first starts, the rest find it unfinished and
    are skipped, each recorded."""
    job.schedule("job", None, key="k", overlap="skip", **cadence)
    clock.set(at(60))
    assert job.backfill("k", at(-30), at(0)) == [rid(-30)]
    assert [d for d, _, _ in decisions(job)] == [
        "backfilled",
        "skipped_overlap",
        "skipped_overlap",
    ]


def test_cancel_previous_starts_only_the_latest_and_cancels_what_was_unfinished(
    job: Engine, clock: FakeClock, cadence: dict[str, Any]
) -> None:
    job.schedule("job", None, key="k", **cadence)
    clock.set(at(10))
    assert job.tick() == [rid(10)]
    assert job.backfill("k", at(-30), at(0), overlap="cancel_previous") == [rid(-10)]
    assert status(job, rid(10)) == RunStatus.CANCELLED
    assert job.get_run(rid(-30)) is None


def test_a_backfill_of_many_occurrences_goes_in_batches(job: Engine, clock: FakeClock) -> None:
    """2,500 occurrences (three transactions of at most 1,000) all start, once each."""
    job.schedule("job", None, key="k", every="1m")
    ids = job.backfill("k", at(-2500), at(0))
    assert len(ids) == len(set(ids)) == 2500
    assert ids[0] == rid(-2500) and ids[-1] == rid(-1)
    assert len(job.list_runs(schedule_key="k", limit=3000)) == 2500


@pytest.mark.parametrize(
    ("start", "end", "match"),
    [
        (at(-10), at(-20), "later than its start"),
        (at(-10), at(-10), "later than its start"),
        (START.replace(tzinfo=None), at(0), "aware datetime"),
        ("yesterday", at(0), "aware datetime"),
        (at(-100_001), at(0), "at most 100,000"),
    ],
)
def test_a_bad_backfill_is_refused_and_stores_nothing(
    job: Engine, start: Any, end: Any, match: str
) -> None:
    job.schedule("job", None, key="k", every="1m")
    with pytest.raises(ConfigError, match=match):
        job.backfill("k", start, end)
    assert job.list_runs(schedule_key="k") == []
    assert job.schedule_history("k") == []


def test_unknown_key_and_overlap_are_refused(job: Engine) -> None:
    job.schedule("job", None, key="k", every="1m")
    with pytest.raises(ConfigError, match="No schedule"):
        job.backfill("nope", at(-10), at(0))
    with pytest.raises(ConfigError, match="Unknown overlap"):
        job.backfill("k", at(-10), at(0), overlap="sometimes")
    assert job.list_runs() == []


def test_backfill_count_previews_the_number_of_occurrences(job: Engine) -> None:
    job.schedule("job", None, key="k", every="10m")
    assert job.backfill_count("k", at(-60), at(0)) == 6
    assert job.list_runs() == []


def test_backfill_has_an_async_twin(job: Engine, clock: FakeClock) -> None:
    job.schedule("job", None, key="k", every="10m")
    ids = asyncio.run(job.backfill_async("k", at(-20), at(0)))
    assert ids == [rid(-20), rid(-10)]
