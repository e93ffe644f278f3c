"""``upsert_schedules``: a worker's declared schedules registered in bulk (one transaction,
a few statements) with exactly the outcomes, rows, revisions and state changes that
registering them one at a time gives, on both backends; workers syncing the same
schedules at once leave one row per key, each registration said once, and no error."""

from __future__ import annotations

import threading
from collections.abc import Iterator, Sequence
from pathlib import Path

import pytest
from tests.contract.test_schedules_contract import HOUR, MINUTE, T0, record
from tests.pg import fresh_schema

from tickwork._store import ScheduleRecord, Store, open_store
from tickwork._store.contract import Registration
from tickwork._values.models import ScheduleState

Request = tuple[ScheduleRecord, str, bool | None]

# (record, on_conflict, paused): new keys, one paused, one whose input has quotes, a
# backslash and letters beyond ASCII
BATCH: list[Request] = [
    (record("a"), "update", None),
    (record("b", every_ms=2 * HOUR), "update", True),
    (record("c", cron="0 9 * * *", every_ms=None, timezone="Europe/Paris"), "update", None),
    (record("d", input_json='{"s":"q\\"b\\\\ é ✓"}'), "update", None),
]


def snapshot(store: Store) -> list[object]:
    """Everything a registration leaves: each schedule as listed (definition, revision,
    state, next occurrence, note, when its state changed, created and updated) and as
    firing reads it (anchor, due time, pause)."""
    listed = store.schedules.list_schedules()
    return [*listed, *(store.schedules.get_schedule_record(info.key) for info in listed)]


def one_by_one(store: Store, batch: Sequence[Request], at: int) -> list[Registration]:
    return [
        store.schedules.upsert_schedule(r, now_ms=at, on_conflict=c, paused=p) for r, c, p in batch
    ]


@pytest.fixture
def twin(store: Store, tmp_path: Path) -> Iterator[Store]:
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


def test_new_keys_are_registered_as_one_at_a_time_would(store: Store, twin: Store) -> None:
    bulk = store.schedules.upsert_schedules(BATCH, now_ms=T0)
    single = one_by_one(twin, BATCH, T0)
    assert bulk == single == [Registration("created", 1)] * 4
    assert snapshot(store) == snapshot(twin)
    paused = store.schedules.get_schedule("b")
    assert paused is not None and paused.state is ScheduleState.PAUSED
    quoted = store.schedules.get_schedule("d")
    assert quoted is not None and quoted.input == {"s": 'q"b\\ é ✓'}


def test_a_changed_batch_is_registered_as_one_at_a_time_would(store: Store, twin: Store) -> None:
    """Unchanged, updated (same timing: next kept; other timing: placed afresh), kept,
    a conflict, paused and resumed (a noted pause's note cleared), and a new key."""
    for target in (store, twin):
        one_by_one(target, BATCH, T0)
        target.schedules.set_schedule_state(
            "d", action="pause", now_ms=T0 + MINUTE, note="incident 7"
        )
    later: list[Request] = [
        (record("a"), "update", None),
        (record("b", every_ms=3 * HOUR), "update", None),
        (record("c", cron="0 9 * * *", every_ms=None, timezone="Europe/Paris",
                input_json='{"n":2}'), "update", True),
        (record("d", input_json='{"n":3}'), "keep", False),
        (record("e"), "update", None),
        (record("x", every_ms=5 * HOUR), "update", None),
    ]  # fmt: skip
    at = T0 + 30 * MINUTE
    bulk = store.schedules.upsert_schedules(later, now_ms=at)
    single = one_by_one(twin, later, at)
    assert bulk == single
    assert [r.outcome for r in bulk] == [
        "unchanged", "updated", "updated", "kept", "created", "created",
    ]  # fmt: skip
    assert [r.revision for r in bulk] == [1, 2, 2, 1, 1, 1]
    assert snapshot(store) == snapshot(twin)
    b = store.schedules.get_schedule("b")
    assert b is not None and b.next_fire_at is not None  # timing changed: from now
    assert int(b.next_fire_at.timestamp() * 1000) == at + 3 * HOUR
    d = store.schedules.get_schedule("d")
    assert d is not None and d.state is ScheduleState.ACTIVE and d.note is None


def test_unchanged_keys_write_nothing(store: Store) -> None:
    store.schedules.upsert_schedules(BATCH, now_ms=T0)
    before = snapshot(store)
    again = store.schedules.upsert_schedules(BATCH, now_ms=T0 + HOUR)
    assert again == [Registration("unchanged", 1)] * 4
    assert snapshot(store) == before  # updated_at included: not written


def test_a_conflict_is_reported_and_changes_nothing_of_its_key(store: Store) -> None:
    store.schedules.upsert_schedules(BATCH, now_ms=T0)
    done = store.schedules.upsert_schedules(
        [(record("a", every_ms=5 * HOUR), "error", True), (record("z"), "update", None)],
        now_ms=T0 + HOUR,
    )
    assert done == [Registration("conflict", 1), Registration("created", 1)]
    info = store.schedules.get_schedule("a")
    assert info is not None and info.revision == 1 and info.state is ScheduleState.ACTIVE


def test_a_key_given_twice_is_registered_in_order(store: Store, twin: Store) -> None:
    twice: list[Request] = [
        (record("d"), "update", None),
        (record("d", every_ms=4 * HOUR), "update", None),
        (record("d", every_ms=5 * HOUR), "keep", None),
    ]
    bulk = store.schedules.upsert_schedules(twice, now_ms=T0)
    assert bulk == one_by_one(twin, twice, T0)
    assert [r.outcome for r in bulk] == ["created", "updated", "kept"]
    assert snapshot(store) == snapshot(twin)


@pytest.mark.parametrize("same", [True, False], ids=["same-definitions", "other-definitions"])
def test_two_workers_syncing_the_same_schedules_at_once(store: Store, same: bool) -> None:
    """Each key gets one row and is created once; the other worker's registration of it
    is "unchanged" (same definition) or "updated" to revision 2 (another one). The two
    meet in the middle in batches of different sizes, so a batch finds some of its keys
    registered by the other meanwhile and registers the rest itself."""
    count = 2_000
    mine = [(record(f"k{i:05d}"), "update", None) for i in range(count)]
    theirs = [(record(f"k{i:05d}", jitter_ms=None if same else 1_000), "update", None)
              for i in range(count)]  # fmt: skip
    other = open_store(store.url)  # type: ignore[attr-defined]  # its own connections
    start = threading.Barrier(2)
    errors: list[BaseException] = []
    outcomes: list[Registration] = []

    def sync(target: Store, batches: list[list[Request]]) -> None:
        try:
            start.wait()
            for requests in batches:
                outcomes.extend(target.schedules.upsert_schedules(requests, now_ms=T0))
        except BaseException as exc:
            errors.append(exc)

    forward = [mine[first : first + 500] for first in range(0, count, 500)]
    backward = [theirs[first : first + 300] for first in range(0, count, 300)][::-1]
    threads = [
        threading.Thread(target=sync, args=(store, forward)),
        threading.Thread(target=sync, args=(other, backward)),
    ]
    try:
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(120)
    finally:
        other.close()
    assert errors == []
    listed = store.schedules.list_schedules()
    assert [info.key for info in listed] == [f"k{i:05d}" for i in range(count)]
    second = Registration("unchanged", 1) if same else Registration("updated", 2)
    assert sorted(outcomes, key=lambda r: r.outcome) == sorted(
        [Registration("created", 1)] * count + [second] * count, key=lambda r: r.outcome
    )
    assert {info.revision for info in listed} == {second.revision}
