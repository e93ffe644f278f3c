"""``upsert_schedules``: a worker's declared schedules registered in bulk (one transaction,
new keys in one ``executemany``) with exactly the outcomes, rows and revisions that
registering them one at a time gives, on both backends; two workers syncing the same
schedules at once leave one row per key and no error."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest
from tests.contract.test_schedules_contract import HOUR, T0, record
from tests.pg import fresh_schema

from tickwork._store import Store, open_store
from tickwork._store.contract import Registration

# (record, on_conflict, paused): new keys, one paused, one given twice
BATCH = [
    (record("a"), "update", None),
    (record("b", every_ms=2 * HOUR), "update", True),
    (record("c", cron="0 9 * * *", every_ms=None, timezone="Europe/Paris"), "update", None),
    (record("d"), "update", None),
]


def rows(store: Store) -> list[tuple[object, ...]]:
    """What a registration leaves: each schedule's definition, revision, state and next."""
    return [
        (s.key, s.every, s.cron, s.revision, s.state, s.next_fire_at, s.created_at)
        for s in store.list_schedules()
    ]


def one_by_one(store: Store, batch: list, at: int) -> list[Registration]:
    return [store.upsert_schedule(r, now_ms=at, on_conflict=c, paused=p) for r, c, p in batch]


@pytest.fixture
def twin(request: pytest.FixtureRequest, store: Store, tmp_path: Path):
    """A second store of the same backend, empty, to register the other way."""
    if store.dialect == "postgres":  # type: ignore[attr-defined]
        with fresh_schema() as url:
            other = open_store(url)
            other.migrate()
            yield other
            other.close()
        return
    other = open_store(f"sqlite:///{tmp_path / 'twin.db'}")
    other.migrate()
    yield other
    other.close()


def test_a_batch_registers_as_one_at_a_time_would(store: Store, twin: Store) -> None:
    bulk = store.upsert_schedules(BATCH, now_ms=T0)
    single = one_by_one(twin, BATCH, T0)
    assert bulk == single == [Registration("created", 1)] * 4
    assert rows(store) == rows(twin)
    # Again an hour later, with one definition changed, one paused, one unchanged twice
    # (a key given twice in one batch is registered in order).
    later = [
        (record("a"), "update", None),
        (record("b", every_ms=3 * HOUR), "update", None),
        (record("c", cron="0 9 * * *", every_ms=None, timezone="Europe/Paris"), "update", True),
        (record("d"), "update", None),
        (record("d", every_ms=4 * HOUR), "keep", None),
        (record("e"), "update", None),
    ]
    bulk = store.upsert_schedules(later, now_ms=T0 + HOUR)
    single = one_by_one(twin, later, T0 + HOUR)
    assert bulk == single
    assert [r.outcome for r in bulk] == ["unchanged", "updated", "unchanged", "unchanged",
                                         "kept", "created"]  # fmt: skip
    assert rows(store) == rows(twin)


def test_unchanged_keys_write_nothing(store: Store) -> None:
    store.upsert_schedules(BATCH, now_ms=T0)
    before = rows(store)
    again = store.upsert_schedules(BATCH, now_ms=T0 + HOUR)
    assert [r.outcome for r in again] == ["unchanged"] * 4
    assert [r.revision for r in again] == [1] * 4
    assert rows(store) == before


def test_a_conflict_is_reported_and_changes_nothing_of_its_key(store: Store) -> None:
    store.upsert_schedules(BATCH, now_ms=T0)
    done = store.upsert_schedules(
        [(record("a", every_ms=5 * HOUR), "error", None), (record("z"), "update", None)],
        now_ms=T0 + HOUR,
    )
    assert [r.outcome for r in done] == ["conflict", "created"]
    info = store.get_schedule("a")
    assert info is not None and info.revision == 1


def test_two_workers_syncing_the_same_schedules_at_once_leave_one_row_each(
    store: Store, twin: Store
) -> None:
    batch = [(record(f"k{i:04d}"), "update", None) for i in range(1_000)]
    url = getattr(store, "url", None)
    other = open_store(url) if url is not None and url.startswith("postgresql") else store
    errors: list[BaseException] = []
    outcomes: list[list[Registration]] = []

    def sync(target: Store) -> None:
        try:
            for start in range(0, len(batch), 250):
                outcomes.append(target.upsert_schedules(batch[start : start + 250], now_ms=T0))
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=sync, args=(s,)) for s in (store, other)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(120)
    if other is not store:
        other.close()
    assert errors == []
    assert len(store.list_schedules()) == 1_000
    assert all(len(done) == 250 for done in outcomes) and len(outcomes) == 8
    created = sum(r.outcome == "created" for done in outcomes for r in done)
    assert created <= 1_000  # never twice (a batch that lost a race says "unchanged")
    assert {s.revision for s in store.list_schedules()} == {1}
