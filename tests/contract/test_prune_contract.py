"""The store contract for retention (``prune_batch``), on every backend: what goes, what
always stays, batches within their budget, and pruners racing each other."""

from __future__ import annotations

import threading

from tickwork import RunStatus
from tickwork._rules.occurrences import occurrences_of
from tickwork._rules.planning import Plan, PlanInput, plan
from tickwork._rules.retention import KEEP_HISTORY, Cutoffs, PrunePosition
from tickwork._store import ClaimRequest, ExclusiveWrites, Store, open_store
from tickwork._values.clock import from_ms
from tickwork._values.models import Overlap
from tickwork._values.records import DueSchedule, NewRun, ScheduleRecord, StepRecord

T0 = 1_772_366_400_000  # 2026-03-01T12:00:00Z
MINUTE = 60_000
HOUR = 60 * MINUTE
DAY = 24 * HOUR
LEASE = 30_000


def new_run(run_id: str, *, workflow: str = "wf", at: int = T0) -> NewRun:
    return NewRun(run_id, workflow, "1", None, 0, "default", at, at)


def ended_runs(
    store: Store,
    ids: list[str],
    *,
    at: int,
    workflow: str = "wf",
    steps: int = 0,
    status: RunStatus = RunStatus.COMPLETED,
) -> None:
    """Insert runs, execute them at ``at`` (``steps`` checkpoints each) and end them."""
    for run_id in ids:
        store.runs.insert_run(new_run(run_id, workflow=workflow, at=at))
    claims = store.runs.claim_runs(
        ClaimRequest(
            now_ms=at,
            lease_ms=LEASE,
            worker="w",
            pools=["default"],
            limits={workflow: None},
            limit=len(ids),
            idle=True,
        )
    )
    assert sorted(c.info.id for c in claims) == sorted(ids)
    for claim in claims:
        for n in range(steps):
            step = StepRecord("step", f"s{n}", n, "completed", "1", None, 1, at, at)
            store.runs.record_step(
                run_id=claim.info.id, token=claim.lease_token, step=step, now_ms=at,
                lease_ms=LEASE,
            )  # fmt: skip
        store.runs.finish_run(
            run_id=claim.info.id, token=claim.lease_token, status=status,
            result_json=None if status is not RunStatus.COMPLETED else "1",
            error="boom" if status is RunStatus.FAILED else None, now_ms=at,
        )  # fmt: skip


def prune_all(store: Store, cutoffs: Cutoffs, *, budget: int = 1_000) -> tuple[int, list[int]]:
    """A full pass: rows removed, and what each batch removed."""
    position, batches = PrunePosition(), []
    while not position.done:
        batch = store.pruning.prune_batch(cutoffs=cutoffs, budget=budget, position=position)
        batches.append(batch.removed)
        position = batch.position
        assert len(batches) < 10_000, "the pass never ends"
    return sum(batches), batches


def record(key: str, every_ms: int, workflow: str) -> ScheduleRecord:
    return ScheduleRecord(
        key=key, workflow=workflow, version="1", input_json=None, cron=None, every_ms=every_ms,
        timezone="UTC", overlap="allow", catchup=1, catchup_window_ms=None, jitter_ms=None,
        pool="default", priority=0, retry_json=None, start_ms=None, end_ms=None,
        definition=f"every {every_ms}",
    )  # fmt: skip


def decide(due: DueSchedule, now_ms: int) -> Plan:
    """The real planner, as the engine hands it to ``fire_due``."""
    rec = due.record
    state = PlanInput(
        key=rec.key, overlap=Overlap(rec.overlap), catchup=rec.catchup,
        catchup_window_ms=rec.catchup_window_ms, jitter_ms=rec.jitter_ms, end_ms=rec.end_ms,
        next_fire_ms=due.firing.next_fire_ms, buffered_ms=due.firing.buffered_ms,
        paused_ms=due.firing.paused_ms, resumed_ms=due.firing.resumed_ms,
        active_run_ids=due.active_run_ids, now_ms=now_ms,
    )  # fmt: skip
    return plan(state, occurrences_of(rec, due.anchor_ms))


def fire_every(
    store: Store, key: str, every_ms: int, times: int, *, start: int = T0, workflow: str = "wf"
) -> None:
    """Register a schedule at ``start`` and fire its next ``times`` occurrences (only
    schedules of ``workflow`` are fired)."""
    rec = record(key, every_ms, workflow)
    store.schedules.upsert_schedule(rec, now_ms=start, on_conflict="update", paused=None)
    for n in range(1, times + 1):
        fired = store.firing.fire_due(
            now_ms=start + n * every_ms, pools=["default"], workflows=[workflow], limit=100,
            decide=decide,
        )  # fmt: skip
        assert fired.fired >= 1


def end_all_runs(store: Store, at: int) -> None:
    """Execute and end every runnable run of "wf" at ``at`` (no steps)."""
    while claims := store.runs.claim_runs(
        ClaimRequest(
            now_ms=at,
            lease_ms=LEASE,
            worker="w",
            pools=["default"],
            limits={"wf": None},
            limit=100,
            idle=True,
        )
    ):
        for claim in claims:
            store.runs.finish_run(
                run_id=claim.info.id, token=claim.lease_token, status=RunStatus.COMPLETED,
                result_json="1", error=None, now_ms=at,
            )  # fmt: skip


def test_prune_removes_only_ended_runs_past_their_retention_with_their_steps(
    store: Store,
) -> None:
    old, cutoff = T0, T0 + DAY
    ended_runs(store, ["done"], at=old, steps=3)
    ended_runs(store, ["failed"], at=old, steps=1, status=RunStatus.FAILED)
    store.runs.insert_run(new_run("cancelled", at=old))
    assert store.runs.cancel_run("cancelled", now_ms=old)
    ended_runs(store, ["recent"], at=cutoff + 1, steps=2)
    # Unfinished runs, however old: one running, one sleeping, one never started.
    store.runs.insert_run(new_run("running", workflow="busy", at=old))
    store.runs.insert_run(new_run("sleeping", workflow="nap", at=old))
    for workflow in ("busy", "nap"):
        (claim,) = store.runs.claim_runs(
            ClaimRequest(
                now_ms=old,
                lease_ms=LEASE,
                worker="w",
                pools=["default"],
                limits={workflow: None},
                limit=1,
                idle=True,
            )
        )
    store.runs.reschedule_run(
        run_id="sleeping", token=claim.lease_token, status=RunStatus.SLEEPING,
        available_ms=cutoff * 2, attempt=1, error=None, new_attempt=False,
    )  # fmt: skip
    store.runs.insert_run(new_run("pending", at=old))

    removed, _ = prune_all(store, Cutoffs(runs_ms=cutoff, history_ms=cutoff))

    assert removed == (1 + 3) + (1 + 1) + 1  # three runs with their four steps
    for gone in ("done", "failed", "cancelled"):
        assert store.runs.get_run(gone) is None
        assert store.runs.list_steps(gone) == []
    assert len(store.runs.list_steps("recent")) == 2
    statuses = {run.id: run.status for run in store.runs.list_runs()}
    assert statuses == {
        "recent": RunStatus.COMPLETED,
        "running": RunStatus.RUNNING,
        "sleeping": RunStatus.SLEEPING,
        "pending": RunStatus.PENDING,
    }
    assert prune_all(store, Cutoffs(runs_ms=cutoff, history_ms=cutoff))[0] == 0


def test_prune_keeps_each_schedules_latest_run_until_a_newer_one_is_its_latest(
    store: Store,
) -> None:
    fire_every(store, "k", HOUR, 3)
    end_all_runs(store, T0 + 3 * HOUR)
    latest = store.schedules.get_schedule("k")
    assert latest is not None and latest.last_run_id is not None
    cutoff = T0 + 10 * DAY

    removed, _ = prune_all(store, Cutoffs(runs_ms=cutoff, history_ms=None))

    assert removed == 2
    assert [run.id for run in store.runs.list_runs()] == [latest.last_run_id]
    again = store.schedules.get_schedule("k")
    assert again is not None and again.last_run_status is RunStatus.COMPLETED
    # A newer run becomes the latest: the old latest goes at the next pass.
    store.firing.fire_due(
        now_ms=T0 + 4 * HOUR, pools=["default"], workflows=["wf"], limit=10, decide=decide
    )
    end_all_runs(store, T0 + 4 * HOUR)
    assert prune_all(store, Cutoffs(runs_ms=cutoff, history_ms=None))[0] == 1
    assert store.runs.get_run(latest.last_run_id) is None
    assert len(store.runs.list_runs(schedule_key="k")) == 1


def test_prune_keeps_the_newest_history_entries_of_every_schedule(store: Store) -> None:
    many = KEEP_HISTORY + 50
    fire_every(store, "busy", MINUTE, many, workflow="busy")
    fire_every(store, "quiet", MINUTE, 30, workflow="quiet")
    fire_every(store, "late", MINUTE, 20, start=T0 + DAY, workflow="late")
    cutoff = T0 + HOUR * 12  # every entry of "busy" and "quiet" is older, none of "late"
    busy_newest = store.schedules.schedule_history("busy", limit=KEEP_HISTORY)

    removed, _ = prune_all(store, Cutoffs(runs_ms=None, history_ms=cutoff))

    assert removed == many - KEEP_HISTORY
    assert store.schedules.schedule_history("busy", limit=1_000) == busy_newest
    assert len(store.schedules.schedule_history("quiet", limit=1_000)) == 30
    assert len(store.schedules.schedule_history("late", limit=1_000)) == 20
    assert len(store.runs.list_runs(limit=1_000)) == many + 30 + 20  # unfinished: all kept


def test_prune_applies_each_workflows_own_cutoff(store: Store) -> None:
    ended_runs(store, ["s-old"], at=T0, workflow="short", steps=1)
    ended_runs(store, ["s-new"], at=T0 + 2 * DAY, workflow="short")
    ended_runs(store, ["k-old"], at=T0, workflow="kept", steps=1)
    ended_runs(store, ["d-old"], at=T0, workflow="default", steps=2)
    ended_runs(store, ["d-mid"], at=T0 + 2 * DAY, workflow="default")
    cutoffs = Cutoffs(
        runs_ms=T0 + DAY,  # the engine's: workflows without their own
        history_ms=T0 + DAY,
        workflows={"short": T0 + 3 * DAY, "kept": None},
    )

    removed, _ = prune_all(store, cutoffs)

    assert removed == (1 + 1) + 1 + (1 + 2)
    assert sorted(run.id for run in store.runs.list_runs()) == ["d-mid", "k-old"]


def test_a_batch_never_removes_more_than_its_budget(store: Store) -> None:
    ids = [f"r{n:03}" for n in range(60)]
    ended_runs(store, ids, at=T0, steps=4)  # 60 runs x 5 rows
    ended_runs(store, ["heavy"], at=T0, steps=90)  # heavier than a batch on its own
    fire_every(store, "h", MINUTE, KEEP_HISTORY + 75)
    end_all_runs(store, T0 + DAY)
    cutoff = T0 + 30 * DAY
    budget = 37

    removed, batches = prune_all(store, Cutoffs(runs_ms=cutoff, history_ms=cutoff), budget=budget)

    assert max(batches) <= budget
    # Nearly full batches: a run goes whole (5 rows), so a batch may stop 4 rows short.
    assert len(batches) <= removed // (budget - 4) + 4
    fired_runs = KEEP_HISTORY + 75 - 1  # the schedule's latest run stays
    assert removed == 60 * 5 + 91 + 75 + fired_runs
    assert [run.id for run in store.runs.list_runs(limit=1_000)] == [
        store.schedules.get_schedule("h").last_run_id  # type: ignore[union-attr]
    ]


def test_two_stores_pruning_at_once_remove_each_row_once_and_never_fail(store: Store) -> None:
    ids = [f"r{n:03}" for n in range(240)]
    ended_runs(store, ids, at=T0, steps=2)
    fire_every(store, "h", MINUTE, KEEP_HISTORY + 120)
    end_all_runs(store, T0 + DAY)
    expected = 240 * 3 + 120 + KEEP_HISTORY + 120 - 1
    cutoff = T0 + 30 * DAY
    other = open_store(store.url)  # type: ignore[attr-defined]
    totals: list[int] = []
    errors: list[BaseException] = []
    start = threading.Barrier(4)

    def prune(target: Store) -> None:
        try:
            start.wait()
            cutoffs = Cutoffs(runs_ms=cutoff, history_ms=cutoff)
            totals.append(prune_all(target, cutoffs, budget=25)[0])
        except BaseException as exc:
            errors.append(exc)

    try:
        threads = [threading.Thread(target=prune, args=(s,)) for s in (store, other) * 2]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(60)
    finally:
        other.close()
    assert errors == []
    assert len(totals) == 4
    assert sum(totals) == expected
    assert len(store.runs.list_runs(limit=1_000)) == 1
    assert len(store.schedules.schedule_history("h", limit=1_000)) == KEEP_HISTORY


def test_storage_stats_count_rows_and_what_waits_to_be_pruned(store: Store) -> None:
    ended_runs(store, ["a", "b"], at=T0, steps=2)
    ended_runs(store, ["c"], at=T0 + 2 * DAY, steps=1)
    fire_every(store, "h", MINUTE, KEEP_HISTORY + 30, workflow="other")  # pending runs
    cutoffs = Cutoffs(runs_ms=T0 + DAY, history_ms=T0 + DAY)

    stats = store.storage.storage_stats(cutoffs=cutoffs)

    rows = {table.name: table.rows for table in stats.tables}
    assert rows["tickwork_runs"] == 3 + KEEP_HISTORY + 30
    assert rows["tickwork_steps"] == 5
    assert rows["tickwork_schedule_history"] == KEEP_HISTORY + 30
    assert all(table.bytes is None or table.bytes > 0 for table in stats.tables)
    assert stats.total_bytes > 0
    assert stats.oldest_ended_at == from_ms(T0)
    assert (stats.prunable_runs, stats.prunable_history) == (2, 30)
    assert prune_all(store, cutoffs)[0] == 2 * 3 + 30
    after = store.storage.storage_stats(cutoffs=cutoffs)
    assert (after.prunable_runs, after.prunable_history) == (0, 0)
    assert after.oldest_ended_at == from_ms(T0 + 2 * DAY)


def test_only_a_store_whose_writes_take_turns_says_so(store: Store) -> None:
    """SQLite's single write lock makes pruning size its batches to a few milliseconds."""
    assert isinstance(store, ExclusiveWrites) == (store.dialect == "sqlite")  # type: ignore[attr-defined]
