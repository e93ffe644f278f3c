"""Metrics counted as events happen, on every backend: each event once, in its own
transaction, and never lowered when runs, steps or history rows are deleted."""

from __future__ import annotations

import threading
from collections.abc import Callable

import pytest
from tests.pg import delete_rows

from tickwork import RunStatus
from tickwork._rules.planning import Plan, PlannedDecision, PlannedRun
from tickwork._store import (
    ClaimedRun,
    ClaimRequest,
    DueSchedule,
    FireResult,
    LeaseLost,
    NewRun,
    ScheduleRecord,
    StatsSource,
    StepRecord,
    Store,
)
from tickwork._values.buckets import LATENESS_MS, RUN_MS, STEP_MS, bucket_of
from tickwork._values.ids import occurrence_run_id
from tickwork._values.models import Decision, Histogram, Stats

T0 = 1_772_366_400_000  # 2026-03-01T12:00:00Z
MINUTE = 60_000
HOUR = 60 * MINUTE
LEASE = 10 * MINUTE


def register(store: Store) -> None:
    """Schedule "k" of workflow "wf", every hour from T0."""
    fields: dict[str, object] = dict(
        key="k", workflow="wf", version="1", input_json=None, cron=None, every_ms=HOUR,
        timezone="UTC", overlap="allow", catchup=1, catchup_window_ms=None, jitter_ms=None,
        pool="default", priority=0, retry_json=None, start_ms=None, end_ms=None,
    )  # fmt: skip
    record = ScheduleRecord(**fields, definition="k")  # type: ignore[arg-type]
    store.schedules.upsert_schedule(record, now_ms=T0, on_conflict="update", paused=None)


def starting(occurrence: int) -> Callable[[DueSchedule, int], Plan]:
    """A planner that starts the occurrence's run."""

    def planner(schedule: DueSchedule, now_ms: int) -> Plan:
        run_id = occurrence_run_id("k", occurrence)
        return Plan(
            starts=[PlannedRun(occurrence, run_id, now_ms)],
            decisions=[PlannedDecision(Decision.STARTED, occurrence, "due", run_id)],
            next_fire_ms=now_ms + HOUR,
        )

    return planner


def fire(store: Store, at: int, decider: Callable[[DueSchedule, int], Plan]) -> FireResult:
    return store.firing.fire_due(
        now_ms=at, pools=("default",), workflows=("wf",), limit=10, decide=decider
    )


def stats(store: Store) -> Stats:
    assert isinstance(store, StatsSource)
    return store.read_stats(now_ms=T0)


def one(bounds: tuple[int, ...], value_ms: int) -> Histogram:
    """A histogram holding one observation."""
    counts = [0] * (len(bounds) + 1)
    counts[bucket_of(bounds, value_ms)] = 1
    return Histogram(counts=tuple(counts), sum_ms=value_ms)


def started(store: Store, run_id: str, *, at: int = T0, workflow: str = "wf") -> ClaimedRun:
    """Insert a run and claim it at ``at``."""
    store.runs.insert_run(NewRun(run_id, workflow, "1", None, 0, "default", at, at))
    claimed = store.runs.claim_runs(
        ClaimRequest(
            now_ms=at,
            lease_ms=LEASE,
            worker="w",
            pools=("default",),
            limits={workflow: None},
            limit=1,
            idle=True,
        )
    )
    assert [c.info.id for c in claimed] == [run_id]
    return claimed[0]


def finish(store: Store, claim: ClaimedRun, status: RunStatus, at: int, *, token: str = "") -> None:
    store.runs.finish_run(
        run_id=claim.info.id, token=token or claim.lease_token, status=status, result_json=None,
        error=None, now_ms=at, running=claim.info,
    )  # fmt: skip


def try_of(
    name: str, status: str, started_ms: int, finished_ms: int, kind: str = "step"
) -> StepRecord:
    return StepRecord(kind, name, 1, status, None, None, 1, started_ms, finished_ms)


def test_a_run_end_is_counted_once_with_its_duration(store: Store) -> None:
    claim = started(store, "r1")
    finish(store, claim, RunStatus.COMPLETED, T0 + 700)
    failed = started(store, "r2", at=T0 + 1000)
    store.runs.finish_run(  # without the claimed run: read back in the transaction
        run_id="r2", token=failed.lease_token, status=RunStatus.FAILED, result_json=None,
        error="boom", now_ms=T0 + 1003,
    )  # fmt: skip
    found = stats(store)
    assert found.runs == {("wf", "completed"): 1, ("wf", "failed"): 1}
    assert found.run_durations == {
        ("wf", "completed"): one(RUN_MS, 700),
        ("wf", "failed"): one(RUN_MS, 3),
    }


def test_a_finish_whose_lease_is_lost_counts_nothing(store: Store) -> None:
    claim = started(store, "r1")
    before = stats(store)
    with pytest.raises(LeaseLost):
        finish(store, claim, RunStatus.COMPLETED, T0 + 5, token="not-the-lease")
    with pytest.raises(LeaseLost):
        store.runs.record_step(
            run_id="r1", token="not-the-lease", step=try_of("a", "completed", T0, T0 + 1),
            now_ms=T0, lease_ms=LEASE,
        )  # fmt: skip
    assert stats(store) == before
    finish(store, claim, RunStatus.COMPLETED, T0 + 5)
    with pytest.raises(LeaseLost):  # ended: a second finish changes nothing
        finish(store, claim, RunStatus.COMPLETED, T0 + 9)
    assert stats(store).runs == {("wf", "completed"): 1}


def test_each_try_of_a_step_is_counted_but_not_sleeps_nor_now(store: Store) -> None:
    claim = started(store, "r1")
    for record in (
        try_of("a", "failed", T0, T0 + 7),
        try_of("a", "failed", T0 + 10, T0 + 70),  # replaces the first try's row
        try_of("a", "completed", T0 + 100, T0 + 100),
        try_of("nap", "completed", T0, T0 + 60_000, kind="sleep"),
        try_of("now", "completed", T0, T0, kind="now"),
    ):
        store.runs.record_step(
            run_id="r1", token=claim.lease_token, step=record, now_ms=T0, lease_ms=LEASE
        )
    failed = Histogram(
        counts=tuple(
            int(i == bucket_of(STEP_MS, 7)) + int(i == bucket_of(STEP_MS, 60))
            for i in range(len(STEP_MS) + 1)
        ),
        sum_ms=67,
    )
    assert stats(store).step_durations == {"failed": failed, "completed": one(STEP_MS, 0)}


def test_a_step_recorded_after_cancellation_was_asked_is_counted(store: Store) -> None:
    claim = started(store, "r1")
    assert store.runs.cancel_run("r1", now_ms=T0)  # running: asked to stop, not ended
    assert stats(store).runs == {("wf", "running"): 1}
    asked = store.runs.record_step(
        run_id="r1", token=claim.lease_token, step=try_of("a", "completed", T0, T0 + 2),
        now_ms=T0, lease_ms=LEASE,
    )  # fmt: skip
    assert asked
    finish(store, claim, RunStatus.CANCELLED, T0 + 4)
    found = stats(store)
    assert found.step_durations == {"completed": one(STEP_MS, 2)}
    assert found.runs == {("wf", "cancelled"): 1}
    assert found.run_durations == {("wf", "cancelled"): one(RUN_MS, 4)}


def test_cancelling_an_idle_run_counts_its_end(store: Store) -> None:
    store.runs.insert_run(NewRun("never", "wf", "1", None, 0, "default", T0, T0))
    assert store.runs.cancel_run("never", now_ms=T0 + 50)
    assert not store.runs.cancel_run("never", now_ms=T0 + 60)  # ended: nothing more
    found = stats(store)
    assert found.runs == {("wf", "cancelled"): 1}
    assert found.run_durations == {}  # it never started: no duration


def test_firing_counts_each_decision_its_span_and_the_lateness_of_inserted_runs(
    store: Store,
) -> None:
    register(store)
    occurrence = T0 + HOUR
    run_id = occurrence_run_id("k", occurrence)

    def planner(schedule: DueSchedule, now_ms: int) -> Plan:
        return Plan(
            starts=[PlannedRun(occurrence, run_id, now_ms)],
            decisions=[
                PlannedDecision(
                    Decision.DROPPED_CATCHUP,
                    T0,
                    "missed",
                    count=3,
                    last_occurrence_ms=T0 + 2 * MINUTE,
                ),
                PlannedDecision(Decision.STARTED, occurrence, "due", run_id),
            ],
            next_fire_ms=now_ms + HOUR,
        )

    assert fire(store, occurrence + 1_500, decider=planner).run_ids == [run_id]
    assert fire(store, occurrence + 2 * HOUR, decider=planner).run_ids == []  # run exists
    found = stats(store)
    assert found.firings == {"dropped_catchup": 6, "started": 1, "already_started": 1}
    assert found.lateness == {"wf": one(LATENESS_MS, 1_500)}  # the inserted run alone
    assert found.runs == {("wf", "pending"): 1}


def test_a_plan_cancelling_an_idle_run_counts_its_end(store: Store) -> None:
    register(store)
    claim = started(store, "earlier")
    store.runs.reschedule_run(  # sleeping: idle, and it had started
        run_id="earlier", token=claim.lease_token, status=RunStatus.SLEEPING,
        available_ms=T0 + 2 * HOUR, attempt=1, error=None, new_attempt=False,
    )  # fmt: skip

    def cancelling(schedule: DueSchedule, now_ms: int) -> Plan:
        return Plan(cancel_run_ids=["earlier"], next_fire_ms=now_ms + HOUR)

    fire(store, T0 + HOUR, decider=cancelling)
    found = stats(store)
    assert found.runs == {("wf", "cancelled"): 1}
    assert found.run_durations == {("wf", "cancelled"): one(RUN_MS, HOUR)}


def test_trigger_counts_its_decision_and_the_lateness_of_its_run(store: Store) -> None:
    register(store)
    occurrence, now = T0 + HOUR, T0 + HOUR + 400
    run = NewRun(
        occurrence_run_id("k", occurrence), "wf", "1", None, 0, "default", now, now,
        schedule_key="k", schedule_revision=1, scheduled_for_ms=occurrence,
    )  # fmt: skip
    store.firing.trigger_schedule(
        "k", now_ms=now, occurrence_ms=occurrence, run=run, reason="run now"
    )
    store.firing.trigger_schedule(
        "k", now_ms=now + 9, occurrence_ms=occurrence, run=run, reason="run now"
    )
    found = stats(store)
    assert found.firings == {"triggered": 1, "already_started": 1}
    assert found.lateness == {"wf": one(LATENESS_MS, 400)}


def test_counters_never_go_down_when_runs_steps_and_history_are_deleted(store: Store) -> None:
    register(store)
    fired = fire(store, T0 + HOUR + 200, starting(T0 + HOUR)).run_ids
    claim = started(store, "r1")
    store.runs.record_step(
        run_id="r1", token=claim.lease_token, step=try_of("a", "completed", T0, T0 + 3),
        now_ms=T0, lease_ms=LEASE,
    )  # fmt: skip
    finish(store, claim, RunStatus.COMPLETED, T0 + 9)
    store.runs.insert_run(NewRun("waiting", "wf", "1", None, 0, "default", T0, T0))
    before = stats(store)
    assert before.runs == {("wf", "completed"): 1, ("wf", "pending"): 2}
    assert len(fired) == 1 and before.firings == {"started": 1}

    for table in ("tickwork_steps", "tickwork_schedule_history", "tickwork_queue", "tickwork_runs"):
        delete_rows(store.url, table)  # type: ignore[attr-defined]
    store.schedules.delete_schedule("k")
    after = stats(store)
    assert after.runs == {("wf", "completed"): 1}  # the unfinished ones are gone for good
    assert (after.firings, after.lateness) == (before.firings, before.lateness)
    assert (after.run_durations, after.step_durations) == (
        before.run_durations,
        before.step_durations,
    )


def test_concurrent_run_ends_are_each_counted_once(store: Store) -> None:
    claims = [started(store, f"r{n}") for n in range(40)]
    errors: list[BaseException] = []

    def end(batch: list[ClaimedRun]) -> None:
        try:
            for claim in batch:
                finish(store, claim, RunStatus.COMPLETED, T0 + 20)
        except BaseException as exc:  # pragma: no cover - reported below
            errors.append(exc)

    threads = [threading.Thread(target=end, args=(claims[n::8],)) for n in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    assert not errors
    found = stats(store)
    assert found.runs == {("wf", "completed"): 40}
    duration = found.run_durations[("wf", "completed")]
    assert duration.count == 40 and duration.sum_ms == 40 * 20
