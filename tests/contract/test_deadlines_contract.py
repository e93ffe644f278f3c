"""The deadlines part of the store (``store.deadlines``), on every backend: a run not
completed by its deadline is recorded once in its schedule's history; a run completed in
time is never seen; the next deadline to check is the earliest unchecked."""

from __future__ import annotations

from tests.contract.test_runs_contract import claim, new_run
from tests.contract.test_schedules_contract import HOUR, MINUTE, T0, register

from tickwork import RunStatus
from tickwork._store import Store
from tickwork._values.clock import from_ms

DEADLINE = 15 * MINUTE


def scheduled_run(store: Store, run_id: str, *, at: int = T0 + HOUR) -> None:
    store.runs.insert_run(
        new_run(run_id, at=at, schedule_key="k", schedule_revision=1, scheduled_for_ms=at,
                deadline_ms=at + DEADLINE)
    )  # fmt: skip


def test_a_run_unfinished_at_its_deadline_is_recorded_once(store: Store) -> None:
    register(store)
    scheduled_run(store, "r1")
    assert store.deadlines.next_deadline_ms() == T0 + HOUR + DEADLINE
    assert store.deadlines.record_missed_deadlines(now_ms=T0 + HOUR + DEADLINE - 1, limit=10) == []
    (miss,) = store.deadlines.record_missed_deadlines(now_ms=T0 + HOUR + DEADLINE, limit=10)
    assert (miss.key, miss.run_id, miss.status) == ("k", "r1", RunStatus.PENDING)
    assert miss.occurrence == from_ms(T0 + HOUR)
    assert miss.deadline_at == from_ms(T0 + HOUR + DEADLINE)
    assert store.deadlines.record_missed_deadlines(now_ms=T0 + 2 * HOUR, limit=10) == []
    assert store.deadlines.next_deadline_ms() is None
    (entry,) = store.deadlines.recent_deadline_misses(since_ms=T0, limit=10)
    assert entry.reason == miss.reason and entry.run_id == "r1"


def test_a_run_completed_by_its_deadline_is_never_seen(store: Store) -> None:
    register(store)
    scheduled_run(store, "r1")
    (claimed,) = claim(store, at=T0 + HOUR)
    store.runs.finish_run(
        run_id="r1", token=claimed.lease_token, status=RunStatus.COMPLETED, result_json="1",
        error=None, now_ms=T0 + HOUR + MINUTE,
    )  # fmt: skip
    assert store.deadlines.next_deadline_ms() is None
    assert store.deadlines.record_missed_deadlines(now_ms=T0 + 2 * HOUR, limit=10) == []
    assert store.deadlines.recent_deadline_misses(since_ms=T0, limit=10) == []


def test_misses_are_checked_earliest_first_up_to_the_limit(store: Store) -> None:
    register(store)
    scheduled_run(store, "late", at=T0 + 2 * HOUR)
    scheduled_run(store, "early", at=T0 + HOUR)
    (first,) = store.deadlines.record_missed_deadlines(now_ms=T0 + 3 * HOUR, limit=1)
    assert first.run_id == "early"
    assert store.deadlines.next_deadline_ms() == T0 + 2 * HOUR + DEADLINE
    (second,) = store.deadlines.record_missed_deadlines(now_ms=T0 + 3 * HOUR, limit=1)
    assert second.run_id == "late"
