"""Writes from many threads at once: each gets its own outcome, none is lost."""

from __future__ import annotations

import threading

import pytest

from tickwork import RunStatus
from tickwork._store import ClaimRequest, LeaseLost, NewRun, StepRecord, Store
from tickwork._store.transaction import UNSORTED, Transaction
from tickwork._store.write_combiner import _run_in_savepoint, _Write
from tickwork.errors import StoreError

T0 = 1_772_366_400_000
LEASE = 60_000


def test_concurrent_checkpoints_each_get_their_own_outcome(store: Store) -> None:
    """Threads record steps at once; a stale token fails alone and changes nothing."""
    threads, steps = 8, 25
    for n in range(threads):
        store.runs.insert_run(NewRun(f"r{n}", "wf", "1", None, 0, "default", T0, T0))
    claims = store.runs.claim_runs(
        ClaimRequest(
            now_ms=T0,
            lease_ms=LEASE,
            worker="w",
            pools=["default"],
            limits={"wf": None},
            limit=threads,
            idle=True,
        )
    )
    assert len(claims) == threads
    outcomes: dict[str, list[str]] = {c.info.id: [] for c in claims}
    start = threading.Barrier(threads)

    def record(run_id: str, token: str) -> None:
        start.wait()
        for i in range(steps):
            stale = i % 5 == 4  # every fifth write uses a token that does not hold the run
            step = StepRecord("step", f"s{i}", i, "completed", str(i), None, 1, T0, T0)
            try:
                store.runs.record_step(run_id=run_id, token="stale" if stale else token, step=step,
                                  now_ms=T0, lease_ms=LEASE)  # fmt: skip
                outcomes[run_id].append("ok")
            except LeaseLost:
                outcomes[run_id].append("lost")

    workers = [threading.Thread(target=record, args=(c.info.id, c.lease_token)) for c in claims]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
    for claim in claims:
        expected = ["lost" if i % 5 == 4 else "ok" for i in range(steps)]
        assert outcomes[claim.info.id] == expected
        names = [s.name for s in store.runs.list_steps(claim.info.id)]
        assert names == [f"s{i}" for i in range(steps) if i % 5 != 4]


def test_concurrent_finishes_and_stale_finish_is_refused(store: Store) -> None:
    store.runs.insert_run(NewRun("r", "wf", "1", None, 0, "default", T0, T0))
    (claim,) = store.runs.claim_runs(
        ClaimRequest(
            now_ms=T0,
            lease_ms=LEASE,
            worker="w",
            pools=["default"],
            limits={"wf": None},
            limit=1,
            idle=True,
        )
    )
    results: list[str] = []

    def finish(token: str) -> None:
        try:
            store.runs.finish_run(run_id="r", token=token, status=RunStatus.COMPLETED,
                             result_json="1", error=None, now_ms=T0)  # fmt: skip
            results.append("finished")
        except LeaseLost:
            results.append("lost")

    racers = [threading.Thread(target=finish, args=(claim.lease_token,)) for _ in range(6)]
    for racer in racers:
        racer.start()
    for racer in racers:
        racer.join()
    assert sorted(results) == ["finished"] + ["lost"] * 5
    run = store.runs.get_run("r")
    assert run is not None and run.status is RunStatus.COMPLETED


@pytest.mark.parametrize("writers", [2, 16])
def test_many_threads_starting_runs_lose_none(store: Store, writers: int) -> None:
    per_thread = 40

    def start(n: int) -> None:
        for i in range(per_thread):
            store.runs.insert_run(NewRun(f"t{n}-{i}", "wf", "1", None, 0, "default", T0, T0))

    threads = [threading.Thread(target=start, args=(n,)) for n in range(writers)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(store.runs.list_runs(limit=10_000)) == writers * per_thread


def test_a_write_failing_under_planner_settings_undoes_only_itself(store: Store) -> None:
    """A combined batch redone write by write in savepoints (write_combiner.py): a write
    whose statement fails while planned under settings (``execute_under``, the claim's and
    firing's) rolls back to its savepoint in the failed transaction, and the next write of
    the batch runs with the settings back to normal. The failed write's error is the
    dialect's ``StoreError``, as its transaction would have raised it."""
    db = store._db  # type: ignore[attr-defined]

    def fails(tx: Transaction) -> None:
        tx.execute_under(UNSORTED, "SELECT * FROM tickwork_no_such_table")

    def setting(tx: Transaction) -> str:
        if store.dialect == "sqlite":  # type: ignore[attr-defined]
            return "on"  # SQLite's planner takes no settings
        return str(tx.execute("SHOW enable_sort").fetchone()[0])

    failed, after = _Write(fails), _Write(setting)

    def batch(tx: Transaction) -> None:
        _run_in_savepoint(tx, failed, db.as_store_error)
        _run_in_savepoint(tx, after, db.as_store_error)

    db.write(batch)
    assert isinstance(failed.error, StoreError)  # the batch reports it to its writer
    assert after.error is None and after.result == "on"
