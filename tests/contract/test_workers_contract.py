"""Workers' records in the store (migration 0007), on every backend: a renewal keeps a
worker alive, three missed renewals or a graceful stop end it, a day forgets it."""

from __future__ import annotations

from dataclasses import replace

from tickwork._rules.liveness import FORGET_AFTER_MS, FORGET_BATCH
from tickwork._store import Store, WorkerRecord
from tickwork._values.clock import from_ms

T0 = 1_772_366_400_000  # 2026-03-01T12:00:00Z
RENEW = 5_000


def worker(worker_id: str = "host:1:aaa", **changes: object) -> WorkerRecord:
    record = WorkerRecord(
        id=worker_id,
        host="host",
        pid=1234,
        pools=("default", "gpu"),
        workflows=("report", "cleanup"),
        version="0.1.0",
        started_ms=T0,
        renew_ms=RENEW,
    )
    return replace(record, **changes)  # type: ignore[arg-type]


def test_a_recorded_worker_is_listed_alive_with_what_it_serves(store: Store) -> None:
    store.workers.renew_worker(worker(), now_ms=T0)
    (info,) = store.workers.list_workers(now_ms=T0 + 1000)
    assert (info.id, info.host, info.pid, info.version) == ("host:1:aaa", "host", 1234, "0.1.0")
    assert info.pools == ("default", "gpu") and info.workflows == ("report", "cleanup")
    assert info.started_at == info.last_seen == from_ms(T0)
    assert info.alive and info.stopped_at is None


def test_a_worker_is_alive_until_it_missed_three_renewals(store: Store) -> None:
    store.workers.renew_worker(worker(), now_ms=T0)
    assert store.workers.list_workers(now_ms=T0 + 3 * RENEW)[0].alive
    assert not store.workers.list_workers(now_ms=T0 + 3 * RENEW + 1)[0].alive
    store.workers.renew_worker(worker(), now_ms=T0 + 4 * RENEW)  # back (a long pause, say)
    (info,) = store.workers.list_workers(now_ms=T0 + 5 * RENEW)
    assert info.alive and info.last_seen == from_ms(T0 + 4 * RENEW)


def test_each_worker_is_judged_by_its_own_renewal_interval(store: Store) -> None:
    store.workers.renew_worker(worker("fast", renew_ms=200), now_ms=T0)
    store.workers.renew_worker(worker("slow"), now_ms=T0)
    alive = {w.id: w.alive for w in store.workers.list_workers(now_ms=T0 + 1000)}
    assert alive == {"fast": False, "slow": True}


def test_a_renewal_rewrites_what_the_worker_serves(store: Store) -> None:
    store.workers.renew_worker(worker(), now_ms=T0)
    store.workers.renew_worker(worker(workflows=("report", "cleanup", "late")), now_ms=T0 + RENEW)
    (info,) = store.workers.list_workers(now_ms=T0 + RENEW)
    assert info.workflows == ("report", "cleanup", "late")


def test_a_graceful_stop_is_recorded_and_the_worker_is_not_alive(store: Store) -> None:
    store.workers.renew_worker(worker(), now_ms=T0)
    assert store.workers.stop_worker("host:1:aaa", now_ms=T0 + 100)
    (info,) = store.workers.list_workers(now_ms=T0 + 200)
    assert not info.alive and info.stopped_at == from_ms(T0 + 100)
    assert not store.workers.stop_worker("nobody", now_ms=T0)
    store.workers.renew_worker(worker(), now_ms=T0 + 300)  # started again under the same id
    (again,) = store.workers.list_workers(now_ms=T0 + 300)
    assert again.alive and again.stopped_at is None


def test_workers_are_listed_oldest_start_first(store: Store) -> None:
    store.workers.renew_worker(worker("b", started_ms=T0 + 10), now_ms=T0 + 10)
    store.workers.renew_worker(worker("a", started_ms=T0 + 20), now_ms=T0 + 20)
    store.workers.renew_worker(worker("c", started_ms=T0), now_ms=T0 + 30)
    assert [w.id for w in store.workers.list_workers(now_ms=T0 + 30)] == ["c", "b", "a"]


def test_a_worker_gone_for_a_day_is_forgotten_by_the_next_renewal(store: Store) -> None:
    store.workers.renew_worker(worker("gone"), now_ms=T0)
    store.workers.renew_worker(worker("stopped"), now_ms=T0)
    store.workers.stop_worker("stopped", now_ms=T0)
    day_later = T0 + FORGET_AFTER_MS + 1
    # Not listed once a day has passed, even before any renewal removed it...
    assert store.workers.list_workers(now_ms=day_later) == []
    store.workers.renew_worker(worker("new"), now_ms=day_later)
    # ...and removed by a renewal: the rows are gone, not only hidden.
    assert [w.id for w in store.workers.list_workers(now_ms=T0)] == ["new"]


def test_a_renewal_forgets_a_bounded_batch_oldest_first(store: Store) -> None:
    gone = FORGET_BATCH + 5
    for i in range(gone):
        store.workers.renew_worker(worker(f"gone-{i:04d}"), now_ms=T0 + i)
    now = T0 + gone + FORGET_AFTER_MS
    store.workers.renew_worker(worker("new"), now_ms=now)
    left = [w.id for w in store.workers.list_workers(now_ms=T0)]
    assert left == [f"gone-{i:04d}" for i in range(FORGET_BATCH, gone)] + ["new"]
    store.workers.renew_worker(worker("new"), now_ms=now)
    assert [w.id for w in store.workers.list_workers(now_ms=T0)] == ["new"]


def test_what_a_worker_holds_back_round_trips_and_a_renewal_rewrites_it(store: Store) -> None:
    """The declared schedules a worker holds back for a calendar not stored (migration
    0023): listed as recorded, by key; a renewal that holds nothing back clears it."""
    held = (("holiday-report", "uk"), ("month-end", "acme"))
    store.workers.renew_worker(worker(waiting=held), now_ms=T0)
    assert store.workers.list_workers(now_ms=T0)[0].waiting_for_calendars == held
    store.workers.renew_worker(worker(waiting=(("month-end", "acme"),)), now_ms=T0 + RENEW)
    assert store.workers.list_workers(now_ms=T0)[0].waiting_for_calendars == (
        ("month-end", "acme"),
    )
    store.workers.renew_worker(worker(), now_ms=T0 + 2 * RENEW)
    assert store.workers.list_workers(now_ms=T0)[0].waiting_for_calendars == ()
