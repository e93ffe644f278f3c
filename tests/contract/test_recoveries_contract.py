"""Counting lost workers for ``max_recoveries`` (DESIGN §1, Durability), on every backend.

A claim that takes over a run whose lease expired while it was running counts a lost
worker: one more when the run made no progress since the previous take-over (as many
completed checkpoints), else the first. A released lease or a run handed back is no loss.
``ClaimedRun.lost_workers`` is what the executor holds against ``max_recoveries``.
"""

from __future__ import annotations

from tickwork import RunStatus
from tickwork._store import ClaimedRun, ClaimRequest, NewRun, StepRecord, Store

T0 = 1_772_366_400_000  # 2026-03-01T12:00:00Z
LEASE = 30_000


def new_run(run_id: str) -> NewRun:
    return NewRun(
        id=run_id, workflow="wf", version="1", input_json="null", priority=0, pool="default",
        created_ms=T0, available_ms=T0,
    )  # fmt: skip


def claim(store: Store, *, at: int = T0, worker: str = "w1") -> list[ClaimedRun]:
    return store.runs.claim_runs(
        ClaimRequest(
            now_ms=at,
            lease_ms=LEASE,
            worker=worker,
            pools=("default",),
            limits={"wf": None},
            limit=10,
            idle=True,
        )
    )


def step(name: str, *, status: str = "completed", result: str | None = "1") -> StepRecord:
    return StepRecord("step", name, 1, status, result, None, 1, T0, T0)


def take_over(store: Store, after: ClaimedRun, *, at: int) -> ClaimedRun:
    """The run of ``after``, claimed by another worker once its lease has expired at
    ``at`` (the lease was taken at ``at - LEASE``)."""
    (claimed,) = claim(store, at=at, worker=f"w-{at}")
    assert claimed.info.id == after.info.id and claimed.lease_token != after.lease_token
    return claimed


def test_first_claim_of_a_run_has_lost_no_worker(store: Store) -> None:
    store.runs.insert_run(new_run("r1"))
    (first,) = claim(store)
    assert first.lost_workers == 0


def test_take_overs_at_the_same_checkpoint_count_up(store: Store) -> None:
    store.runs.insert_run(new_run("r1"))
    (held,) = claim(store)
    store.runs.record_step(
        run_id="r1", token=held.lease_token, step=step("a"), now_ms=T0, lease_ms=LEASE
    )
    losses = []
    at = T0
    for _ in range(3):  # each owner dies inside step "b": no new checkpoint
        at += LEASE
        held = take_over(store, held, at=at)
        losses.append(held.lost_workers)
    assert losses == [1, 2, 3]


def test_a_new_checkpoint_starts_the_count_again(store: Store) -> None:
    store.runs.insert_run(new_run("r1"))
    (held,) = claim(store)
    held = take_over(store, held, at=T0 + LEASE)
    held = take_over(store, held, at=T0 + 2 * LEASE)
    assert held.lost_workers == 2
    # This owner gets past the step that lost them, then dies inside the next one.
    store.runs.record_step(
        run_id="r1", token=held.lease_token, step=step("a"), now_ms=T0 + 2 * LEASE, lease_ms=LEASE
    )
    held = take_over(store, held, at=T0 + 3 * LEASE)
    assert held.lost_workers == 1
    held = take_over(store, held, at=T0 + 4 * LEASE)
    assert held.lost_workers == 2


def test_a_failed_try_of_a_step_is_no_progress(store: Store) -> None:
    """Only completed checkpoints are progress: a step that failed a try and then killed
    its worker has made none."""
    store.runs.insert_run(new_run("r1"))
    (held,) = claim(store)
    held = take_over(store, held, at=T0 + LEASE)
    failed = step("a", status="failed", result=None)
    store.runs.record_step(
        run_id="r1", token=held.lease_token, step=failed, now_ms=T0, lease_ms=LEASE
    )
    held = take_over(store, held, at=T0 + 2 * LEASE)
    assert held.lost_workers == 2


def test_a_released_lease_is_not_a_lost_worker(store: Store) -> None:
    """A draining worker hands its runs back (graceful shutdown): whoever claims them next
    takes over no lost worker, and the count so far is neither raised nor cleared."""
    store.runs.insert_run(new_run("r1"))
    (held,) = claim(store)
    assert store.runs.release_leases(tokens=[held.lease_token], now_ms=T0) == 1
    (again,) = claim(store, worker="w2")
    assert again.lost_workers == 0

    lost = take_over(store, again, at=T0 + LEASE)
    assert lost.lost_workers == 1
    assert store.runs.release_leases(tokens=[lost.lease_token], now_ms=T0 + LEASE) == 1
    (after_release,) = claim(store, at=T0 + LEASE, worker="w3")
    assert after_release.lost_workers == 1
    lost_again = take_over(store, after_release, at=T0 + 2 * LEASE)
    assert lost_again.lost_workers == 2


def test_a_run_handed_back_is_not_a_lost_worker(store: Store) -> None:
    """A sleep or a retry's back-off hands the run back: its next claim is no take-over."""
    store.runs.insert_run(new_run("r1"))
    (held,) = claim(store)
    held = take_over(store, held, at=T0 + LEASE)
    store.runs.reschedule_run(
        run_id="r1",
        token=held.lease_token,
        status=RunStatus.PENDING,
        available_ms=T0 + LEASE,
        attempt=2,
        error="ValueError: boom",
        new_attempt=True,
    )
    (retried,) = claim(store, at=T0 + LEASE, worker="w3")
    assert retried.lost_workers == 1  # still no progress at this point: the count stands
    held = take_over(store, retried, at=T0 + 2 * LEASE)
    assert held.lost_workers == 2


def test_progress_without_a_take_over_clears_what_the_executor_sees(store: Store) -> None:
    """Lost workers at an earlier checkpoint are not held against a later one, even when
    no take-over happened there yet (the run slept past it)."""
    store.runs.insert_run(new_run("r1"))
    (held,) = claim(store)
    held = take_over(store, held, at=T0 + LEASE)
    assert held.lost_workers == 1
    at = T0 + LEASE
    store.runs.record_step(
        run_id="r1", token=held.lease_token, step=step("a"), now_ms=at, lease_ms=LEASE
    )
    store.runs.reschedule_run(
        run_id="r1",
        token=held.lease_token,
        status=RunStatus.SLEEPING,
        available_ms=at,
        attempt=1,
        error=None,
        new_attempt=False,
    )
    (woken,) = claim(store, at=at, worker="w3")
    assert woken.lost_workers == 0


# -- whose loss: a worker lost with several runs in flight (lost_workers.py) ---------------


def claim_some(
    store: Store, *, at: int, worker: str, limit: int = 10, idle: bool = True
) -> list[ClaimedRun]:
    return store.runs.claim_runs(
        ClaimRequest(
            now_ms=at,
            lease_ms=LEASE,
            worker=worker,
            pools=("default",),
            limits={"wf": None},
            limit=limit,
            idle=idle,
        )
    )


def test_a_worker_lost_with_two_runs_counts_against_neither(store: Store) -> None:
    """Both runs of one lost worker taken over in one claim: no step can be blamed, so
    neither count rises; both are suspects, to run alone."""
    store.runs.insert_run(new_run("r1"))
    store.runs.insert_run(new_run("r2"))
    assert len(claim_some(store, at=T0, worker="w1")) == 2
    taken = claim_some(store, at=T0 + LEASE, worker="w2")
    assert sorted(c.info.id for c in taken) == ["r1", "r2"]
    assert [c.lost_workers for c in taken] == [0, 0]
    assert all(c.alone for c in taken)


def test_runs_of_one_lost_worker_taken_over_one_by_one_count_against_neither(
    store: Store,
) -> None:
    """The second take-over, in a later claim, no longer sees the first run under the lost
    worker's lease, yet knows the worker was shared: it counts nothing either."""
    store.runs.insert_run(new_run("r1"))
    store.runs.insert_run(new_run("r2"))
    claim_some(store, at=T0, worker="w1")
    (first,) = claim_some(store, at=T0 + LEASE, worker="w2", limit=1)
    (second,) = claim_some(store, at=T0 + LEASE, worker="w3", limit=1)
    assert {first.info.id, second.info.id} == {"r1", "r2"}
    assert (first.lost_workers, second.lost_workers) == (0, 0)


def test_a_suspect_is_claimed_only_by_an_idle_worker_and_alone(store: Store) -> None:
    """A run taken over runs alone: a busy worker's claim passes it over; an idle
    worker's claim gives it and nothing else, though other runs are due."""
    store.runs.insert_run(new_run("r1"))
    (held,) = claim(store)
    lost = take_over(store, held, at=T0 + LEASE)  # alone in its worker: counted
    assert lost.lost_workers == 1 and lost.alone
    store.runs.insert_run(new_run("r2"))
    store.runs.insert_run(new_run("r3"))
    at = T0 + 2 * LEASE  # r1's lease expired again
    busy = claim_some(store, at=at, worker="busy", idle=False)
    assert sorted(c.info.id for c in busy) == ["r2", "r3"]
    assert not any(c.alone for c in busy)
    (alone,) = claim_some(store, at=at, worker="idle")
    assert alone.info.id == "r1" and alone.alone
    assert alone.lost_workers == 2  # alone again when lost: counted


def test_a_suspect_lost_alone_after_a_shared_loss_counts(store: Store) -> None:
    """The poison run first lost a worker it shared (no count); run alone, each worker it
    loses is its own."""
    store.runs.insert_run(new_run("poison"))
    store.runs.insert_run(new_run("innocent"))
    claim_some(store, at=T0, worker="w1")
    taken = claim_some(store, at=T0 + LEASE, worker="w2")  # w1 lost with both
    innocent = next(c for c in taken if c.info.id == "innocent")
    store.runs.finish_run(
        run_id="innocent", token=innocent.lease_token, status=RunStatus.COMPLETED,
        result_json="1", error=None, now_ms=T0 + LEASE,
    )  # fmt: skip
    counts = []
    for n in range(2, 5):  # the poison run alone, losing its worker each time
        (held,) = claim_some(store, at=T0 + n * LEASE, worker=f"w{n + 1}")
        assert held.info.id == "poison"
        counts.append(held.lost_workers)
    assert counts == [1, 2, 3]


def test_a_suspect_handed_back_is_claimed_as_any_run(store: Store) -> None:
    """Its execution ended (a sleep): a busy worker may claim it again with others."""
    store.runs.insert_run(new_run("r1"))
    (held,) = claim(store)
    lost = take_over(store, held, at=T0 + LEASE)
    store.runs.reschedule_run(
        run_id="r1", token=lost.lease_token, status=RunStatus.SLEEPING,
        available_ms=T0 + LEASE, attempt=1, error=None, new_attempt=False,
    )  # fmt: skip
    (again,) = claim_some(store, at=T0 + LEASE, worker="busy", idle=False)
    assert again.info.id == "r1" and not again.alone


def test_each_loss_of_one_worker_is_judged_on_its_own(store: Store) -> None:
    """A worker that froze past its leases and took its runs back (the same worker id):
    its first loss, shared by two runs, counts against neither; its next, with one run
    left in flight, counts against that run."""
    store.runs.insert_run(new_run("r1"))
    store.runs.insert_run(new_run("r2"))
    claim_some(store, at=T0, worker="w1")
    taken = claim_some(store, at=T0 + LEASE, worker="w1")  # its own runs, leases expired
    assert sorted(c.info.id for c in taken) == ["r1", "r2"]
    assert [c.lost_workers for c in taken] == [0, 0]
    r2 = next(c for c in taken if c.info.id == "r2")
    store.runs.finish_run(
        run_id="r2", token=r2.lease_token, status=RunStatus.COMPLETED, result_json="1",
        error=None, now_ms=T0 + LEASE,
    )  # fmt: skip
    (r1,) = claim_some(store, at=T0 + 2 * LEASE, worker="w1")
    assert r1.info.id == "r1" and r1.lost_workers == 1


def test_a_busy_worker_is_not_woken_for_a_suspect(store: Store) -> None:
    """A suspect due now is due for an idle worker's claim only: asked without suspects,
    the next due instant is the next run a busy worker could take."""
    store.runs.insert_run(new_run("r1"))
    (held,) = claim(store)
    take_over(store, held, at=T0 + LEASE)  # now a suspect, its lease expiring next
    later = NewRun(
        id="r2", workflow="wf", version="1", input_json="null", priority=0, pool="default",
        created_ms=T0, available_ms=T0 + 5 * LEASE,
    )  # fmt: skip
    store.runs.insert_run(later)
    pools, workflows = ("default",), ("wf",)
    assert store.runs.next_due_ms(pools=pools, workflows=workflows) == T0 + 2 * LEASE
    assert (
        store.runs.next_due_ms(pools=pools, workflows=workflows, suspects=False) == T0 + 5 * LEASE
    )
