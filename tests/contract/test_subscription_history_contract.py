"""A debounced or batched subscription's decisions in the store (migration 0019), on both
backends: each event debounced or batched, each run started and why, each buffer dropped,
recorded once in the transaction of the change (DESIGN §9, "visible in the history like a
schedule's decisions")."""

from __future__ import annotations

import threading
from dataclasses import replace
from datetime import timedelta

from tests.contract.test_events_contract import T0, event, subscription

from tickwork._store import Store
from tickwork._values.clock import from_ms
from tickwork._values.event_flow import Flow, FlowDecision


def flowing(store: Store, sub: str, **flow: object) -> None:
    """Subscribe ``sub`` to order.paid with the flow control ``flow`` (On's arguments)."""
    args: dict[str, object] = dict(
        debounce=None, debounce_max=None, batch=None, batch_window=None, key=None
    )
    args.update(flow)
    checked = Flow.of(**args)  # type: ignore[arg-type]
    assert checked is not None
    store.events.upsert_subscriptions(
        [replace(subscription(sub, "order.paid"), flow_json=checked.to_json())]
    )


def decisions(store: Store, key: str) -> list[tuple[str, str | None, int]]:
    """The history oldest first: (decision, event id, count)."""
    return [
        (str(d.decision), d.event_id, d.count)
        for d in reversed(store.events.subscription_history(key, limit=100))
    ]


def test_a_debounce_records_each_event_and_the_quiet_period_that_started_its_run(
    store: Store,
) -> None:
    flowing(store, "deb", debounce="1s", key="user")
    store.events.emit(event("e0", payload={"user": 7}, at=T0))
    store.events.emit(event("e1", payload={"user": 7}, at=T0 + 400))
    store.events.emit(event("e2", payload={"user": 8}, at=T0 + 500))
    newest = store.events.subscription_history("deb", limit=100)[0]
    assert newest.group == 8 and newest.due_at == from_ms(T0 + 1500)
    assert newest.run_id == "deb@debounce:e2" and newest.decided_at == from_ms(T0 + 500)
    assert store.events.flush_due(now_ms=T0 + 1400, limit=10) == ["deb@debounce:e0"]
    assert decisions(store, "deb") == [
        ("debounced", "e0", 1), ("debounced", "e1", 2), ("debounced", "e2", 1),
        ("started", "e0", 2),
    ]  # fmt: skip
    entries = store.events.subscription_history("deb", limit=100)
    started = entries[0]
    assert (started.run_id, started.group, started.due_at) == ("deb@debounce:e0", 7, None)
    assert started.reason == "no event for 1 s: started with the last of 2 events"
    assert "opened the debounce window" in entries[-1].reason
    assert "extended the debounce window" in entries[-2].reason


def test_a_debounce_cut_short_by_debounce_max_says_so(store: Store) -> None:
    flowing(store, "deb", debounce="1s", debounce_max="2s")
    for n in range(3):  # at 0, 0.9 s and 1.8 s: the window ends 2 s after the first
        store.events.emit(event(f"e{n}", payload={"n": n}, at=T0 + n * 900))
    assert store.events.subscription_history("deb", limit=1)[0].reason.startswith(
        "extended the debounce window: up to debounce_max (2 s after the first event)"
    )
    assert store.events.flush_due(now_ms=T0 + 2000, limit=10) == ["deb@debounce:e0"]
    (started,) = store.events.subscription_history("deb", limit=1)
    assert started.reason == (
        "debounce_max reached (2 s after the first event): started with the last of 3 events"
    )


def test_a_batch_records_each_event_and_why_its_run_started(store: Store) -> None:
    flowing(store, "bat", batch=2, batch_window="10s")
    store.events.emit(event("e0", at=T0))
    assert store.events.emit(event("e1", at=T0 + 1)).started == ("bat@batch:e0",)
    store.events.emit(event("e2", at=T0 + 2))
    assert store.events.flush_due(now_ms=T0 + 10_002, limit=10) == ["bat@batch:e2"]
    assert decisions(store, "bat") == [
        ("batched", "e0", 1), ("started", "e1", 2), ("batched", "e2", 1), ("started", "e2", 1),
    ]  # fmt: skip
    window_ended, _, full, first = store.events.subscription_history("bat", limit=100)
    assert first.reason.startswith("joined the batch: 1 of 2")
    assert first.due_at == from_ms(T0 + 10_000)
    assert full.reason == "batch full: 2 events (batch=2)"
    assert window_ended.reason == (
        "batch_window ended (10 s after the first event): started with 1 event"
    )


def test_a_buffer_whose_subscription_was_removed_is_recorded_as_dropped(store: Store) -> None:
    flowing(store, "deb", debounce="1s")
    store.events.emit(event("e0", at=T0))
    store.events.delete_subscription("deb")
    assert store.events.flush_due(now_ms=T0 + 1000, limit=10) == []
    dropped = store.events.subscription_history("deb", limit=1)[0]
    assert (dropped.decision, dropped.run_id, dropped.count) == (FlowDecision.DROPPED, None, 1)
    assert store.runs.list_runs() == []


def test_racing_flushes_record_one_start_per_buffer(store: Store) -> None:
    flowing(store, "deb", debounce="1s", key="k")
    for n in range(6):
        store.events.emit(event(f"e{n}", payload={"k": n % 3}, at=T0))
    threads = 6
    barrier = threading.Barrier(threads)

    def flush() -> None:
        barrier.wait()
        store.events.flush_due(now_ms=T0 + 1000, limit=10)

    workers = [threading.Thread(target=flush) for _ in range(threads)]
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    started = [
        d for d in store.events.subscription_history("deb", limit=100) if d.decision == "started"
    ]
    assert sorted(d.run_id or "" for d in started) == [
        "deb@debounce:e0", "deb@debounce:e1", "deb@debounce:e2"
    ]  # fmt: skip
    assert len(store.runs.list_runs()) == 3


def test_a_history_is_read_newest_first_a_page_at_a_time(store: Store) -> None:
    flowing(store, "bat", batch=1000, batch_window="1h")
    for n in range(5):
        store.events.emit(event(f"e{n}", at=T0 + n))
    assert [d.event_id for d in store.events.subscription_history("bat", limit=2)] == ["e4", "e3"]
    assert store.events.subscription_history("other", limit=10) == []


def test_pruning_removes_decisions_older_than_the_cutoff(store: Store) -> None:
    flowing(store, "bat", batch=1000, batch_window="1h")
    for n in range(3):
        store.events.emit(event(f"e{n}", at=T0 + n * 1000))
    cutoff = T0 + 1500  # e0 and e1 are older, with their two decisions
    assert store.events.prune_events(before_ms=cutoff, limit=1000) == 4
    assert [d.event_id for d in store.events.subscription_history("bat", limit=10)] == ["e2"]
    assert store.events.subscription_history("bat", limit=10)[0].decided_at - from_ms(
        T0
    ) == timedelta(seconds=2)
