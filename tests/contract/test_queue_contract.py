"""The queue (migration 0011), on every backend: every unfinished run has its row there,
with the run's status, and no other run has one, whatever happened to the run. The
worker's reads trust it (they never read the history): a run missing from it would never
execute, a run left in it after its end would execute again."""

from __future__ import annotations

from tests.contract.test_counters_contract import HOUR, fire, register, starting
from tests.contract.test_runs_contract import LEASE, T0, claim, new_run, step

from tickwork import RunStatus
from tickwork._store import Store
from tickwork._values.ids import occurrence_run_id

UNFINISHED = ("pending", "sleeping", "running")


def queued(store: Store) -> dict[str, str]:
    """The queue's rows: run id -> status."""
    with store._db.read() as tx:  # type: ignore[attr-defined]
        return dict(tx.execute("SELECT id, status FROM tickwork_queue").fetchall())


def in_flight(store: Store) -> dict[str, str]:
    """The runs whose rows say they are unfinished: run id -> status."""
    with store._db.read() as tx:  # type: ignore[attr-defined]
        rows = tx.execute("SELECT id, status FROM tickwork_runs").fetchall()
    return {run_id: status for run_id, status in rows if status in UNFINISHED}


def assert_queue_holds_the_runs_in_flight(store: Store, expected: dict[str, str]) -> None:
    assert in_flight(store) == expected
    assert queued(store) == expected


def test_each_change_of_a_run_keeps_its_queue_row_in_step(store: Store) -> None:
    for run_id in ("a", "b", "c", "d"):
        store.runs.insert_run(new_run(run_id))
    store.runs.insert_run(new_run("a"))  # again: idempotent, one row
    assert_queue_holds_the_runs_in_flight(store, dict.fromkeys("abcd", "pending"))

    taken = {c.info.id: c for c in claim(store, limit=3)}
    assert set(taken) == {"a", "b", "c"}
    assert_queue_holds_the_runs_in_flight(
        store, {"a": "running", "b": "running", "c": "running", "d": "pending"}
    )

    a, b, c = taken["a"], taken["b"], taken["c"]
    store.runs.record_step(
        run_id="a", token=a.lease_token, step=step("s"), now_ms=T0, lease_ms=LEASE
    )
    store.runs.renew_leases(tokens={"b": b.lease_token}, now_ms=T0, lease_ms=LEASE)
    store.runs.finish_run(
        run_id="a", token=a.lease_token, status=RunStatus.COMPLETED, result_json="1",
        error=None, now_ms=T0 + 1,
    )  # fmt: skip
    store.runs.reschedule_run(
        run_id="b", token=b.lease_token, status=RunStatus.SLEEPING, available_ms=T0 + HOUR,
        attempt=1, error=None, new_attempt=False,
    )  # fmt: skip
    store.runs.release_leases(tokens=[c.lease_token], now_ms=T0 + 2)
    assert store.runs.cancel_run("d", now_ms=T0 + 3)  # pending: cancelled at once
    assert_queue_holds_the_runs_in_flight(store, {"b": "sleeping", "c": "running"})

    (again,) = claim(store, at=T0 + 4, limit=5)  # the released one; b sleeps an hour
    assert again.info.id == "c"
    assert store.runs.cancel_run("c", now_ms=T0 + 5)  # running: asked to stop, still in flight
    assert_queue_holds_the_runs_in_flight(store, {"b": "sleeping", "c": "running"})
    store.runs.finish_run(
        run_id="c", token=again.lease_token, status=RunStatus.CANCELLED, result_json=None,
        error=None, now_ms=T0 + 6,
    )  # fmt: skip
    assert_queue_holds_the_runs_in_flight(store, {"b": "sleeping"})


def test_firing_queues_the_runs_it_inserts_and_never_an_ended_run_it_finds(store: Store) -> None:
    """Firing inserts its runs in bulk; an occurrence whose run already exists (started by
    a trigger, say) and has ended is recorded as already started and stays ended."""
    register(store)
    early = occurrence_run_id("k", T0 + HOUR)
    store.runs.insert_run(new_run(early, schedule_key="k"))
    (held,) = claim(store)
    store.runs.finish_run(
        run_id=early, token=held.lease_token, status=RunStatus.COMPLETED, result_json=None,
        error=None, now_ms=T0 + 1,
    )  # fmt: skip
    fired = fire(store, T0 + HOUR + 5, starting(T0 + HOUR))
    assert fired.run_ids == []
    assert_queue_holds_the_runs_in_flight(store, {})
    assert claim(store, at=T0 + 2 * HOUR) == []  # the ended run never executes again

    fired = fire(store, T0 + 2 * HOUR + 5, starting(T0 + 2 * HOUR))
    assert fired.run_ids == [occurrence_run_id("k", T0 + 2 * HOUR)]
    assert_queue_holds_the_runs_in_flight(store, {fired.run_ids[0]: "pending"})
