"""``recent_runs``: the newest runs of many schedules at once (the dashboard's run strips),
the same runs as a ``list_runs(schedule_key=...)`` of each, on every backend. Its plan (a
seek per schedule, no sort) is checked in ``test_query_plans_contract.py``."""

from __future__ import annotations

from tickwork._store import NewRun, Store
from tickwork._store.recent_runs import SQLITE_CHUNK

T0 = 1_772_366_400_000  # 2026-03-01T12:00:00Z


def add_runs(store: Store, key: str | None, count: int) -> None:
    """``count`` runs of schedule ``key``, two created at each instant (ties by id)."""
    for n in range(count):
        at = T0 + (n // 2) * 1000
        run = NewRun(
            id=f"{key}-{n:03d}", workflow="wf", version="1", input_json="null",
            priority=0, pool="default", created_ms=at, available_ms=at, schedule_key=key,
        )  # fmt: skip
        store.runs.insert_run(run)


def test_each_schedules_newest_runs_come_newest_first_as_list_runs_gives_them(
    store: Store,
) -> None:
    add_runs(store, "often", 45)
    add_runs(store, "rare", 3)
    add_runs(store, None, 10)  # started by hand: no schedule's
    found = store.runs.recent_runs(["often", "rare", "never"], limit=30)
    assert list(found) == ["often", "rare", "never"]
    for key in ("often", "rare"):
        expected = store.runs.list_runs(schedule_key=key, limit=30)
        assert [r.id for r in found[key]] == [r.id for r in expected], key
        assert found[key] == expected
    assert len(found["often"]) == 30 and found["often"][0].id == "often-044"
    assert found["never"] == []


def test_a_key_asked_twice_is_answered_once(store: Store) -> None:
    add_runs(store, "k", 4)
    found = store.runs.recent_runs(["k", "k"], limit=3)
    assert list(found) == ["k"] and [r.id for r in found["k"]] == ["k-003", "k-002", "k-001"]


def test_more_schedules_than_one_statement_holds_are_all_answered(store: Store) -> None:
    keys = [f"s{n:03d}" for n in range(2 * SQLITE_CHUNK + 7)]
    for key in keys:
        add_runs(store, key, 2)
    found = store.runs.recent_runs(keys, limit=1)
    assert list(found) == keys
    assert all([r.id for r in found[key]] == [f"{key}-001"] for key in keys)


def test_no_keys_reads_nothing(store: Store) -> None:
    assert store.runs.recent_runs([], limit=30) == {}
