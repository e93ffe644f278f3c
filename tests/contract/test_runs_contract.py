"""The store contract for runs, leases and checkpoints, on every backend."""

from __future__ import annotations

import pytest

from tickwork import RunStatus
from tickwork._store import ClaimRequest, LeaseLost, NewRun, StepRecord, Store

T0 = 1_772_366_400_000  # 2026-03-01T12:00:00Z
LEASE = 30_000


def new_run(run_id: str, *, workflow: str = "wf", at: int = T0, **extra: object) -> NewRun:
    fields: dict[str, object] = dict(
        id=run_id,
        workflow=workflow,
        version="1",
        input_json='{"n":1}',
        priority=0,
        pool="default",
        created_ms=at,
        available_ms=at,
    )
    fields.update(extra)
    return NewRun(**fields)  # type: ignore[arg-type]


def claim(
    store: Store,
    *,
    at: int = T0,
    limit: int = 10,
    worker: str = "w1",
    limits: dict[str, int | None] | None = None,
    pools: tuple[str, ...] = ("default",),
):
    return store.runs.claim_runs(
        ClaimRequest(
            now_ms=at,
            lease_ms=LEASE,
            worker=worker,
            pools=pools,
            limits=limits if limits is not None else {"wf": None},
            limit=limit,
            idle=True,
        )
    )


def step(
    name: str,
    *,
    status: str = "completed",
    result: str | None = "1",
    attempts: int = 1,
    seq: int = 1,
) -> StepRecord:
    return StepRecord("step", name, seq, status, result, None, attempts, T0, T0)


def test_insert_run_is_idempotent_by_id(store: Store) -> None:
    first, inserted, _ = store.runs.insert_run(new_run("r1"))
    again, inserted_again, _ = store.runs.insert_run(new_run("r1", input_json='{"n":2}'))
    assert inserted and not inserted_again
    assert again == first
    assert again.input == {"n": 1}
    assert again.status is RunStatus.PENDING


def test_list_runs_is_newest_first_and_filters(store: Store) -> None:
    store.runs.insert_run(new_run("a", at=T0))
    store.runs.insert_run(new_run("b", at=T0 + 1, workflow="other"))
    store.runs.insert_run(new_run("c", at=T0 + 2, schedule_key="k"))
    assert [r.id for r in store.runs.list_runs()] == ["c", "b", "a"]
    assert [r.id for r in store.runs.list_runs(workflow="wf")] == ["c", "a"]
    assert [r.id for r in store.runs.list_runs(schedule_key="k")] == ["c"]
    assert [r.id for r in store.runs.list_runs(limit=1)] == ["c"]
    assert store.runs.list_runs(status=RunStatus.RUNNING) == []


def test_list_runs_before_a_run_continues_after_it(store: Store) -> None:
    for n, at in enumerate((T0, T0 + 1, T0 + 1, T0 + 2)):  # two created at the same instant
        store.runs.insert_run(new_run(f"r{n}", at=at))
    assert [r.id for r in store.runs.list_runs()] == ["r3", "r2", "r1", "r0"]
    assert [r.id for r in store.runs.list_runs(before="r3", limit=2)] == ["r2", "r1"]
    assert [r.id for r in store.runs.list_runs(before="r1")] == ["r0"]
    assert [r.id for r in store.runs.list_runs(before="r2", workflow="wf")] == ["r1", "r0"]
    assert store.runs.list_runs(before="r0") == [] and store.runs.list_runs(before="nope") == []


def test_claim_takes_due_runs_and_second_claimer_gets_nothing(store: Store) -> None:
    store.runs.insert_run(new_run("r1"))
    store.runs.insert_run(new_run("later", available_ms=T0 + 5_000))
    claimed = claim(store)
    assert [c.info.id for c in claimed] == ["r1"]
    assert claimed[0].info.status is RunStatus.RUNNING
    assert claimed[0].info.started_at is not None
    assert not claimed[0].resumed
    assert claim(store, worker="w2") == []


def test_claim_orders_by_priority_then_availability(store: Store) -> None:
    store.runs.insert_run(new_run("low-early", priority=0, available_ms=T0 - 10))
    store.runs.insert_run(new_run("high", priority=5))
    store.runs.insert_run(new_run("low-late", priority=0))
    assert [c.info.id for c in claim(store)] == ["high", "low-early", "low-late"]


def test_claim_respects_pools_and_registered_workflows(store: Store) -> None:
    store.runs.insert_run(new_run("other-pool", pool="gpu"))
    store.runs.insert_run(new_run("unknown-workflow", workflow="nope"))
    assert claim(store) == []
    assert [c.info.id for c in claim(store, pools=("gpu",))] == ["other-pool"]


def test_concurrency_limit_holds_across_claims(store: Store) -> None:
    for n in range(3):
        store.runs.insert_run(new_run(f"r{n}"))
    first = claim(store, limits={"wf": 2})
    assert len(first) == 2
    assert claim(store, worker="w2", limits={"wf": 2}) == []
    store.runs.finish_run(
        run_id=first[0].info.id,
        token=first[0].lease_token,
        status=RunStatus.COMPLETED,
        result_json="1",
        error=None,
        now_ms=T0,
    )
    assert len(claim(store, worker="w2", limits={"wf": 2})) == 1


def test_a_full_workflow_is_passed_over_for_the_next_runs_in_order(store: Store) -> None:
    """Under a limit, the first runs of the limited workflow it has room for are taken,
    and the runs of other workflows after them, in priority then availability order."""
    order = [("wf", "a"), ("wf", "b"), ("free", "c"), ("wf", "d"), ("free", "e"), ("free", "f")]
    for n, (workflow, run_id) in enumerate(order):
        store.runs.insert_run(new_run(run_id, workflow=workflow, available_ms=T0 - 10 + n))
    store.runs.insert_run(new_run("urgent", workflow="wf", priority=9, available_ms=T0))
    taken = claim(store, limit=4, limits={"wf": 2, "free": None})
    assert [c.info.id for c in taken] == ["urgent", "a", "c", "e"]
    assert len({c.lease_token for c in taken}) == 4
    assert all(c.info.status is RunStatus.RUNNING and c.info.started_at for c in taken)
    assert [c.info.id for c in claim(store, worker="w2", limits={"wf": 2, "free": None})] == ["f"]


def test_expired_lease_is_taken_over_and_old_owner_is_fenced(store: Store) -> None:
    store.runs.insert_run(new_run("r1"))
    (old,) = claim(store)
    store.runs.record_step(
        run_id="r1", token=old.lease_token, step=step("a"), now_ms=T0, lease_ms=LEASE
    )
    assert claim(store, at=T0 + LEASE - 1, worker="w2") == []
    (new,) = claim(store, at=T0 + LEASE, worker="w2")
    assert new.resumed and [s.name for s in new.steps] == ["a"]
    with pytest.raises(LeaseLost):
        store.runs.record_step(
            run_id="r1",
            token=old.lease_token,
            step=step("b", seq=2),
            now_ms=T0 + LEASE,
            lease_ms=LEASE,
        )
    with pytest.raises(LeaseLost):
        store.runs.finish_run(
            run_id="r1",
            token=old.lease_token,
            status=RunStatus.COMPLETED,
            result_json="1",
            error=None,
            now_ms=T0 + LEASE,
        )
    assert [s.name for s in store.runs.list_steps("r1")] == ["a"]
    assert store.runs.renew_leases(tokens={"r1": old.lease_token}, now_ms=T0, lease_ms=LEASE) == {}
    assert store.runs.renew_leases(tokens={"r1": new.lease_token}, now_ms=T0, lease_ms=LEASE) == {
        "r1": False
    }


def test_renewed_lease_keeps_the_run_from_other_workers(store: Store) -> None:
    store.runs.insert_run(new_run("r1"))
    (held,) = claim(store)
    later = T0 + LEASE - 1
    assert store.runs.renew_leases(tokens={"r1": held.lease_token}, now_ms=later, lease_ms=LEASE)
    assert claim(store, at=T0 + LEASE, worker="w2") == []
    assert not store.runs.record_step(
        run_id="r1", token=held.lease_token, step=step("a"), now_ms=T0 + LEASE, lease_ms=LEASE
    )


def test_a_checkpoint_renews_the_lease_where_the_backend_says_so(store: Store) -> None:
    """PostgreSQL renews the lease with each checkpoint, from the checkpoint's ``now_ms``
    for ``lease_ms`` (one statement: ``postgres.RECORD_STEP``); SQLite leaves the lease to
    ``renew_leases`` (the contract allows both), so the run is taken over when the lease
    taken at the claim runs out."""
    store.runs.insert_run(new_run("r1"))
    (held,) = claim(store)
    late = T0 + LEASE - 1
    store.runs.record_step(
        run_id="r1", token=held.lease_token, step=step("a"), now_ms=late, lease_ms=LEASE
    )
    taken = [run.info.id for run in claim(store, at=T0 + LEASE, worker="w2")]
    renews = store.dialect == "postgres"  # type: ignore[attr-defined]
    assert taken == ([] if renews else ["r1"])
    if renews:  # held until the checkpoint's own lease runs out
        assert [run.info.id for run in claim(store, at=late + LEASE, worker="w2")] == ["r1"]


def request(*, at: int = T0, limits: dict[str, int | None] | None = None) -> ClaimRequest:
    return ClaimRequest(at, LEASE, "w1", ("default",), limits or {"wf": None})


def test_insert_can_claim_the_most_urgent_run_in_the_same_transaction(store: Store) -> None:
    store.runs.insert_run(new_run("urgent", priority=5))
    run, inserted, claimed = store.runs.insert_run(new_run("new"), then_claim=request())
    assert inserted and run.status is RunStatus.PENDING
    assert [c.info.id for c in claimed] == ["urgent"]  # not the new one: it is less urgent
    _, _, claimed = store.runs.insert_run(new_run("newer"), then_claim=request())
    assert [c.info.id for c in claimed] == ["new"]
    _, inserted, claimed = store.runs.insert_run(new_run("new"), then_claim=request())
    assert not inserted and not claimed  # an existing id claims nothing either


def test_a_run_claimed_at_its_insert_is_held_like_any_claimed_run(store: Store) -> None:
    """The new run taken in its own insert's transaction (SQLite inserts it running under
    the lease at once: run_inserts.StraightClaim) is what a claim would have left: running,
    started now, its lease held by the token given and fencing off other workers."""
    run, inserted, (held,) = store.runs.insert_run(
        new_run("new", schedule_key="s1", scheduled_for_ms=T0 - 5, retry_json='{"max":2}'),
        then_claim=request(),
    )
    assert inserted and run.status is RunStatus.PENDING  # as inserted, before the claim
    info = held.info
    assert (info.id, info.status, info.attempt, info.input) == (
        "new",
        RunStatus.RUNNING,
        1,
        {"n": 1},
    )
    assert (info.schedule_key, info.started_at) == ("s1", held.info.created_at)
    assert (held.steps, held.resumed, held.cancel_requested) == ([], False, False)
    assert (held.retry_json, held.attempt_started_ms, held.lost_workers) == ('{"max":2}', T0, 0)
    stored = store.runs.get_run("new")
    assert stored is not None and (stored.status, stored.started_at) == (
        RunStatus.RUNNING, info.started_at,
    )  # fmt: skip
    assert claim(store, worker="w2") == []  # leased
    assert claim(store, limits={"wf": 1}, worker="w2") == []  # and counted as running
    assert not store.runs.record_step(
        run_id="new", token=held.lease_token, step=step("a"), now_ms=T0, lease_ms=LEASE
    )
    ended = store.runs.finish_run(
        run_id="new", token=held.lease_token, status=RunStatus.COMPLETED, result_json="2",
        error=None, now_ms=T0 + 1,
    )  # fmt: skip
    assert ended.run.status is RunStatus.COMPLETED and ended.run.result == 2


def test_a_run_inserted_with_a_claim_is_taken_only_when_it_is_the_claims_pick(
    store: Store,
) -> None:
    """The claim made with an insert takes what any claim would take at that moment:
    the new run only when it is due, of a pool and workflow served with room, and no
    due run comes before it; otherwise the most urgent due run, or nothing."""
    store.runs.insert_run(new_run("older"))

    def claimed_by_insert(run: NewRun, **options: object) -> list[str]:
        _, inserted, claimed = store.runs.insert_run(run, then_claim=request(**options))  # type: ignore[arg-type]
        assert inserted
        return [c.info.id for c in claimed]

    assert claimed_by_insert(new_run("urgent", priority=3)) == ["urgent"]  # before "older"
    assert claimed_by_insert(new_run("later", available_ms=T0 + 1)) == ["older"]  # not due
    assert claimed_by_insert(new_run("elsewhere", pool="gpu")) == []  # a pool not served
    assert claimed_by_insert(new_run("other", workflow="wf2")) == []  # nor a workflow
    assert claimed_by_insert(new_run("full"), limits={"wf": 2}) == []  # no room: 2 running
    assert claimed_by_insert(new_run("next")) == ["full"]  # first due of the pending
    by_status = {run.id: run.status for run in store.runs.list_runs()}
    assert by_status == {
        "older": RunStatus.RUNNING, "urgent": RunStatus.RUNNING, "full": RunStatus.RUNNING,
        "later": RunStatus.PENDING, "elsewhere": RunStatus.PENDING, "other": RunStatus.PENDING,
        "next": RunStatus.PENDING,
    }  # fmt: skip


def test_ending_a_run_can_claim_the_next_within_limits(store: Store) -> None:
    for name in ("a", "b", "c"):
        store.runs.insert_run(new_run(name))
    first, second = claim(store, limit=2, limits={"wf": 2})
    ended = store.runs.finish_run(
        run_id=first.info.id,
        token=first.lease_token,
        status=RunStatus.COMPLETED,
        result_json="1",
        error=None,
        now_ms=T0,
        then_claim=request(limits={"wf": 2}),
    )
    assert ended.run.status is RunStatus.COMPLETED
    (third,) = ended.claimed
    assert third.info.id == "c" and third.info.status is RunStatus.RUNNING
    assert claim(store, worker="w2") == []
    slept = store.runs.reschedule_run(
        run_id=second.info.id,
        token=second.lease_token,
        status=RunStatus.SLEEPING,
        available_ms=T0 + 1_000,
        attempt=1,
        error=None,
        new_attempt=False,
        then_claim=request(limits={"wf": 2}),
    )
    assert slept.run.status is RunStatus.SLEEPING and not slept.claimed  # not due yet


def test_a_stale_ending_claims_nothing(store: Store) -> None:
    store.runs.insert_run(new_run("r1"))
    store.runs.insert_run(new_run("r2"))
    (held,) = claim(store, limit=1)
    store.runs.release_leases(tokens=[held.lease_token], now_ms=T0)
    with pytest.raises(LeaseLost):
        store.runs.finish_run(
            run_id="r1",
            token=held.lease_token,
            status=RunStatus.COMPLETED,
            result_json="1",
            error=None,
            now_ms=T0,
            then_claim=request(),
        )
    assert {c.info.id for c in claim(store, worker="w2")} == {"r1", "r2"}


def test_failed_try_is_replaced_by_the_next_outcome(store: Store) -> None:
    store.runs.insert_run(new_run("r1"))
    (held,) = claim(store)
    store.runs.record_step(
        run_id="r1",
        token=held.lease_token,
        step=step("a", status="failed", result=None),
        now_ms=T0,
        lease_ms=LEASE,
    )
    store.runs.record_step(
        run_id="r1",
        token=held.lease_token,
        step=step("a", attempts=2, result='"ok"'),
        now_ms=T0,
        lease_ms=LEASE,
    )
    (only,) = store.runs.list_steps("r1")
    assert (only.status, only.result, only.attempts) == ("completed", "ok", 2)


def test_reschedule_with_new_attempt_forgets_failed_tries_only(store: Store) -> None:
    store.runs.insert_run(new_run("r1"))
    (held,) = claim(store)
    store.runs.record_step(
        run_id="r1", token=held.lease_token, step=step("done"), now_ms=T0, lease_ms=LEASE
    )
    store.runs.record_step(
        run_id="r1",
        token=held.lease_token,
        step=step("broken", status="failed", result=None, seq=2),
        now_ms=T0,
        lease_ms=LEASE,
    )
    run = store.runs.reschedule_run(
        run_id="r1",
        token=held.lease_token,
        status=RunStatus.PENDING,
        available_ms=T0 + 1_000,
        attempt=2,
        error="ValueError: x",
        new_attempt=True,
    ).run
    assert (run.status, run.attempt, run.error) == (RunStatus.PENDING, 2, "ValueError: x")
    assert [s.name for s in store.runs.list_steps("r1")] == ["done"]
    assert claim(store, at=T0 + 999) == []
    (again,) = claim(store, at=T0 + 1_000)
    assert again.attempt_started_ms == T0 + 1_000


def test_sleeping_run_keeps_attempt_clock(store: Store) -> None:
    store.runs.insert_run(new_run("r1"))
    (held,) = claim(store)
    store.runs.reschedule_run(
        run_id="r1",
        token=held.lease_token,
        status=RunStatus.SLEEPING,
        available_ms=T0 + 60_000,
        attempt=1,
        error=None,
        new_attempt=False,
    )
    assert store.runs.get_run("r1").status is RunStatus.SLEEPING  # type: ignore[union-attr]
    (woken,) = claim(store, at=T0 + 60_000)
    assert woken.attempt_started_ms == T0
    assert woken.resumed


def test_cancel_pending_is_immediate_and_running_is_flagged(store: Store) -> None:
    store.runs.insert_run(new_run("idle"))
    store.runs.insert_run(new_run("busy", priority=1))
    (held,) = claim(store, limit=1)
    assert held.info.id == "busy"
    assert store.runs.cancel_run("idle", now_ms=T0)
    assert store.runs.get_run("idle").status is RunStatus.CANCELLED  # type: ignore[union-attr]
    assert store.runs.cancel_run("busy", now_ms=T0)
    assert store.runs.get_run("busy").status is RunStatus.RUNNING  # type: ignore[union-attr]
    assert store.runs.record_step(
        run_id="busy", token=held.lease_token, step=step("a"), now_ms=T0, lease_ms=LEASE
    )
    store.runs.finish_run(
        run_id="busy",
        token=held.lease_token,
        status=RunStatus.CANCELLED,
        result_json=None,
        error=None,
        now_ms=T0,
    )
    assert not store.runs.cancel_run("busy", now_ms=T0)
    assert not store.runs.cancel_run("missing", now_ms=T0)


def test_released_lease_is_claimable_at_once_and_fenced(store: Store) -> None:
    store.runs.insert_run(new_run("r1"))
    (held,) = claim(store)
    assert store.runs.release_leases(tokens=[held.lease_token], now_ms=T0) == 1
    (again,) = claim(store, worker="w2")
    assert again.info.id == "r1"
    with pytest.raises(LeaseLost):
        store.runs.record_step(
            run_id="r1", token=held.lease_token, step=step("a"), now_ms=T0, lease_ms=LEASE
        )


def test_next_due_is_the_earliest_claimable_instant(store: Store) -> None:
    assert store.runs.next_due_ms(pools=["default"], workflows=["wf"]) is None
    store.runs.insert_run(new_run("late", available_ms=T0 + 9_000))
    store.runs.insert_run(new_run("soon", available_ms=T0 + 3_000))
    store.runs.insert_run(new_run("elsewhere", pool="gpu", available_ms=T0 + 1))
    assert store.runs.next_due_ms(pools=["default"], workflows=["wf"]) == T0 + 3_000


def test_finish_records_result_and_drops_lease(store: Store) -> None:
    store.runs.insert_run(new_run("r1"))
    (held,) = claim(store)
    run = store.runs.finish_run(
        run_id="r1",
        token=held.lease_token,
        status=RunStatus.COMPLETED,
        result_json='{"ok":true}',
        error=None,
        now_ms=T0 + 5,
    ).run
    assert run.result == {"ok": True}
    assert run.finished_at is not None and run.status is RunStatus.COMPLETED
    assert claim(store, at=T0 + 10 * LEASE) == []


def test_migrate_twice_is_a_no_op(store: Store) -> None:
    version = store.migrate()
    assert store.migrate() == version >= 1


def test_finish_given_the_running_run_returns_it_as_stored(store: Store) -> None:
    store.runs.insert_run(new_run("r1", schedule_key=None))
    (held,) = claim(store, at=T0 + 2)
    ended = store.runs.finish_run(
        run_id="r1",
        token=held.lease_token,
        status=RunStatus.FAILED,
        result_json=None,
        error="ValueError: no",
        now_ms=T0 + 7,
        running=held.info,
    ).run
    assert ended == store.runs.get_run("r1")
    assert ended.status is RunStatus.FAILED and ended.error == "ValueError: no"
    assert ended.started_at == held.info.started_at and ended.input == {"n": 1}


def test_claimed_run_is_running_as_stored(store: Store) -> None:
    store.runs.insert_run(new_run("r1"))
    (held,) = claim(store, at=T0 + 3)
    assert held.info == store.runs.get_run("r1")
    assert held.info.status is RunStatus.RUNNING
