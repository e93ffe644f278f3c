"""The children part of the store (``store.children``, DESIGN §10), on every backend: a
child started once per (parent, key), a join counted and woken exactly once by its last
child however many end at once, a map's window never exceeded, a cancel's cascade."""

from __future__ import annotations

import threading
from dataclasses import replace

import pytest
from tests.contract.test_runs_contract import LEASE, T0, claim, new_run

from tickwork import RunStatus
from tickwork._store import ClaimedRun, LeaseLost, Store
from tickwork._values.records import NewJoin, NewRun, StepRecord

HELD_MS = 253_402_300_799_999


def held_parent(store: Store, run_id: str = "p") -> ClaimedRun:
    store.runs.insert_run(new_run(run_id, workflow="parent"))
    (taken,) = claim(store, limits={"parent": None})
    return taken


def child(parent: str, key: str, **extra: object) -> NewRun:
    return replace(new_run(f"{parent}/{key}"), parent_id=parent, **extra)  # type: ignore[arg-type]


def start_step(key: str, child_id: str, seq: int = 1) -> StepRecord:
    return StepRecord("start", key, seq, "completed", f'"{child_id}"', None, 1, T0, T0)


def join_of(parent: ClaimedRun, ids: list[str], **extra: object) -> NewJoin:
    fields: dict[str, object] = dict(
        run_id=parent.info.id, token=parent.lease_token, kind="join", step="wait", seq=9,
        child_ids=tuple(ids), until_ms=None, now_ms=T0, attempt=1, waiting_json="{}",
    )  # fmt: skip
    fields.update(extra)
    return NewJoin(**fields)  # type: ignore[arg-type]


def status(store: Store, run_id: str) -> RunStatus:
    run = store.runs.get_run(run_id)
    assert run is not None
    return run.status


def end(store: Store, taken: ClaimedRun, status: RunStatus = RunStatus.COMPLETED) -> None:
    store.runs.finish_run(
        run_id=taken.info.id, token=taken.lease_token, status=status, result_json='"ok"',
        error=None, now_ms=T0 + 1, running=taken.info,
    )  # fmt: skip


def test_a_child_is_started_once_with_its_checkpoint_and_names_its_parent(store: Store) -> None:
    parent = held_parent(store)
    kid = child("p", "resize")
    args = dict(run_id="p", token=parent.lease_token, child=kid, lease_ms=LEASE)
    assert store.children.start_child(step=start_step("resize", kid.id), **args)  # type: ignore[arg-type]
    assert not store.children.start_child(step=start_step("resize", kid.id), **args)  # type: ignore[arg-type]
    stored = store.runs.get_run(kid.id)
    assert stored is not None and stored.parent_id == "p"
    assert [s.name for s in store.runs.list_steps("p")] == ["resize"]
    assert [r.id for r in store.runs.list_runs(parent_id="p")] == [kid.id]


def test_a_parent_no_longer_held_starts_nothing(store: Store) -> None:
    held_parent(store)
    kid = child("p", "resize")
    with pytest.raises(LeaseLost):
        store.children.start_child(
            run_id="p", token="stale", step=start_step("resize", kid.id), child=kid, lease_ms=LEASE
        )
    assert store.runs.get_run(kid.id) is None and store.runs.list_steps("p") == []


def test_children_ended_before_the_wait_leave_the_parent_pending(store: Store) -> None:
    parent = held_parent(store)
    kid = child("p", "a")
    store.runs.insert_run(kid)
    (taken,) = claim(store)
    end(store, taken)
    store.children.join(join_of(parent, [kid.id]))
    assert status(store, "p") is RunStatus.PENDING
    (outcome,) = store.children.outcomes([kid.id])
    assert outcome is not None and (outcome.status, outcome.result) == (RunStatus.COMPLETED, "ok")


def test_the_last_child_wakes_the_parent_and_none_before(store: Store) -> None:
    parent = held_parent(store)
    kids = [child("p", f"k{n}") for n in range(3)]
    for kid in kids:
        store.runs.insert_run(kid)
    store.children.join(join_of(parent, [k.id for k in kids]))
    assert status(store, "p") is RunStatus.WAITING
    taken = claim(store, limit=10)
    assert {t.info.id for t in taken} == {k.id for k in kids}  # the parent is not claimable
    for each in taken[:-1]:
        end(store, each, RunStatus.FAILED)
        assert status(store, "p") is RunStatus.WAITING
    end(store, taken[-1], RunStatus.CANCELLED)
    assert status(store, "p") is RunStatus.PENDING
    assert [t.info.id for t in claim(store, at=T0 + 1, limits={"parent": None})] == ["p"]


@pytest.mark.parametrize("children", [2, 8])
def test_children_ending_at_the_same_instant_wake_the_parent_exactly_once(
    store: Store, children: int
) -> None:
    parent = held_parent(store)
    kids = [child("p", f"k{n}") for n in range(children)]
    for kid in kids:
        store.runs.insert_run(kid)
    store.children.join(join_of(parent, [k.id for k in kids]))
    taken = claim(store, limit=children)
    barrier = threading.Barrier(children)
    errors: list[BaseException] = []

    def finish(each: ClaimedRun) -> None:
        try:
            barrier.wait()
            end(store, each)
        except BaseException as exc:  # pragma: no cover - reported below
            errors.append(exc)

    threads = [threading.Thread(target=finish, args=(t,)) for t in taken]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    assert status(store, "p") is RunStatus.PENDING
    woken = claim(store, at=T0 + 1, limits={"parent": None})
    assert [t.info.id for t in woken] == ["p"]
    assert all(o is not None for o in store.children.outcomes([k.id for k in kids]))


def test_a_maps_window_releases_one_child_per_end_and_never_more(store: Store) -> None:
    parent = held_parent(store)
    prefix = "p/work/"
    kids = [
        replace(
            new_run(f"{prefix}{n}"),
            parent_id="p",
            joined="map:work",
            available_ms=T0 if n < 3 else HELD_MS,
        )
        for n in range(10)
    ]
    store.children.join(
        join_of(parent, [k.id for k in kids], kind="map", step="work", prefix=prefix, released=3),
        children=kids,
    )
    running = claim(store, limit=100)
    assert sorted(t.info.id for t in running) == [f"{prefix}{n}" for n in range(3)]
    ended = 0
    while running:
        assert len(running) <= 3
        end(store, running.pop(0))
        ended += 1
        running += claim(store, at=T0 + 1, limit=100)
    assert ended == 10
    assert status(store, "p") is RunStatus.PENDING


def test_a_cancel_cascades_to_children_and_grandchildren(store: Store) -> None:
    store.runs.insert_run(new_run("top", workflow="parent"))
    store.runs.insert_run(child("top", "mid"))
    store.runs.insert_run(child("top/mid", "leaf"))
    store.runs.insert_run(replace(new_run("other"), parent_id=None))
    assert store.runs.cancel_run("top", now_ms=T0)
    for run_id in ("top", "top/mid", "top/mid/leaf"):
        assert status(store, run_id) is RunStatus.CANCELLED
    assert status(store, "other") is RunStatus.PENDING


def test_a_closed_join_is_forgotten_and_its_late_children_wake_nothing(store: Store) -> None:
    parent = held_parent(store)
    kid = child("p", "slow")
    store.runs.insert_run(kid)
    store.children.join(join_of(parent, [kid.id], until_ms=T0 + 1000))
    (again,) = claim(store, at=T0 + 1000, limits={"parent": None})  # its timeout came
    done = StepRecord("join", "wait", 9, "completed", '{"timed_out": true}', None, 1, T0, T0)
    store.children.close_join(run_id="p", token=again.lease_token, step=done, lease_ms=LEASE)
    (taken,) = claim(store, at=T0 + 1000)
    end(store, taken)
    assert status(store, "p") is RunStatus.RUNNING  # still the parent's execution's


def test_retention_keeps_the_children_of_an_unfinished_parent(store: Store) -> None:
    from tests.contract.test_prune_contract import prune_all

    from tickwork._rules.retention import Cutoffs

    held_parent(store)  # unfinished: running
    store.runs.insert_run(child("p", "done"))
    store.runs.insert_run(replace(new_run("orphan"), parent_id="gone"))  # its parent pruned
    for taken in claim(store, limit=10):
        end(store, taken)
    removed, _ = prune_all(store, Cutoffs(runs_ms=T0 + 10, history_ms=None))
    assert store.runs.get_run("p/done") is not None  # its parent has not read it yet
    assert store.runs.get_run("orphan") is None and removed == 1


def test_a_maps_join_registered_again_keeps_its_window(store: Store) -> None:
    parent = held_parent(store)
    prefix = "p/work/"
    kids = [
        replace(
            new_run(f"{prefix}{n}", workflow="wf"),
            parent_id="p",
            joined="map:work",
            available_ms=T0 if n < 2 else HELD_MS,
        )
        for n in range(5)
    ]
    ids = [k.id for k in kids]
    store.children.join(
        join_of(parent, ids, kind="map", step="work", prefix=prefix, released=2, until_ms=T0 + 1),
        children=kids,
    )
    # Its timeout comes before its children end: the parent runs again and its wait is
    # registered again, with no window of its own (a replay's): the map's is kept.
    (again,) = claim(store, at=T0 + 1, limits={"parent": None})
    store.children.join(join_of(again, ids, kind="map", step="work"))
    running = claim(store, at=T0 + 1, limit=100)
    assert len(running) == 2
    ended = 0
    while running:
        assert len(running) <= 2
        end(store, running.pop(0))
        ended += 1
        running += claim(store, at=T0 + 1, limit=100)
    assert ended == 5
    assert status(store, "p") is RunStatus.PENDING
