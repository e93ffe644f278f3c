"""The store contract for events, subscriptions and waits (DESIGN §9), on every backend."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import pytest
from tests.pg import fresh_schema

from tickwork import RunStatus
from tickwork._store import ClaimRequest, LeaseLost, NewRun, Store, open_store
from tickwork._store.event_records import NewEvent, NewWait, SubscriptionRecord
from tickwork._values.event_flow import Flow
from tickwork._values.events import event_run_id

T0 = 1_772_366_400_000  # 2026-03-01T12:00:00Z
LEASE = 30_000


def subscription(key: str, name: str, *, match: str | None = None, input_map: str | None = None):
    return SubscriptionRecord(
        key=key, event_name=name, workflow="wf", version="1", match_json=match,
        input_json=input_map, pool="default", priority=0, retry_json=None, declared=False,
        created_ms=T0,
    )  # fmt: skip


def event(event_id: str, name: str = "order.paid", payload: object = None, at: int = T0):
    return NewEvent(event_id, name, json.dumps(payload, sort_keys=True), at)


def claimed_run(store: Store, run_id: str = "r1") -> str:
    """A run inserted and claimed (as a worker holds it before it waits); its lease token."""
    store.runs.insert_run(NewRun(run_id, "waiter", "1", None, 0, "default", T0, T0))
    (claimed,) = store.runs.claim_runs(
        ClaimRequest(
            now_ms=T0,
            lease_ms=LEASE,
            worker="w",
            pools=["default"],
            limits={"waiter": None},
            limit=1,
            idle=True,
        )
    )
    return claimed.lease_token


def wait(store: Store, run_id: str, token: str, **wait: object) -> None:
    """The held run waits as ``wait`` says."""
    fields: dict[str, object] = dict(
        run_id=run_id, token=token, names=("order.paid",), match=None,
        since_ms=T0, until_ms=None, step="order.paid", seq=1, seen=frozenset(),
        now_ms=T0, attempt=1,
    )  # fmt: skip
    fields.update(wait)
    store.events.wait_run(NewWait(**fields), then_claim=None)  # type: ignore[arg-type]


def waiting_run(store: Store, run_id: str = "r1", **fields: object) -> tuple[str, str]:
    """A run claimed and then waiting as ``fields`` says; its id and its lease token."""
    token = claimed_run(store, run_id)
    wait(store, run_id, token, **fields)
    return run_id, token


def event_step(store: Store, run_id: str):
    return next(s for s in store.runs.list_steps(run_id) if s.kind == "event")


def test_an_emit_starts_one_run_per_matching_subscription_with_a_derived_id(
    store: Store,
) -> None:
    store.events.upsert_subscriptions([
        subscription("all", "order.paid"),
        subscription("gold", "order.paid", match='{"tier":"gold"}', input_map='{"o":"id"}'),
        subscription("other", "order.refunded"),
    ])  # fmt: skip
    emitted = store.events.emit(event("e1", payload={"id": 7, "tier": "basic"}))
    assert emitted.started == (event_run_id("all", "e1"),)
    emitted = store.events.emit(event("e2", payload={"id": 8, "tier": "gold"}))
    assert emitted.started == (event_run_id("all", "e2"), event_run_id("gold", "e2"))
    run = store.runs.get_run(event_run_id("gold", "e2"))
    assert run is not None and (run.status, run.input) == (RunStatus.PENDING, {"o": 8})


def test_an_emit_can_claim_the_run_it_started_in_the_same_transaction(store: Store) -> None:
    """An idle executor of the emitting process takes the run without a claim of its own
    (as ``insert_run``'s ``then_claim``); the same id again claims nothing."""
    store.events.upsert_subscriptions([subscription("all", "order.paid")])
    request = ClaimRequest(T0, LEASE, "w1", ("default",), {"wf": None})
    emitted = store.events.emit(event("e1", payload={"n": 1}), then_claim=request)
    assert [c.info.id for c in emitted.claimed] == [event_run_id("all", "e1")]
    run = store.runs.get_run(event_run_id("all", "e1"))
    assert run is not None and run.status is RunStatus.RUNNING
    again = store.events.emit(event("e1", payload={"n": 1}), then_claim=request)
    assert not again.new and again.claimed == ()
    nothing = store.events.emit(event("e2", "order.refunded"), then_claim=request)
    assert nothing.started == () and nothing.claimed == ()


def test_emitting_an_id_again_changes_nothing_and_answers_the_first_outcome(
    store: Store,
) -> None:
    store.events.upsert_subscriptions([subscription("all", "order.paid")])
    first = store.events.emit(event("e1", payload={"n": 1}))
    again = store.events.emit(event("e1", payload={"n": 2}, at=T0 + 5))
    assert first.new and not again.new
    assert again.started == first.started
    assert len(store.runs.list_runs()) == 1
    stored = store.events.get_event("e1")
    assert stored is not None and stored[0].payload == {"n": 1}
    assert store.events.emit_counts() == {"order.paid": 1}


def test_an_emit_keeps_every_run_it_started_and_woke_plain_batched_and_waiting(
    store: Store,
) -> None:
    """The event's outcome (what ``get_event`` and a second emit of its id answer) holds
    the plain subscriptions' runs, a batch's run it filled and the runs it woke."""
    flow = Flow.of(debounce=None, debounce_max=None, batch=2, batch_window="1m", key=None)
    store.events.upsert_subscriptions([
        subscription("a-plain", "order.paid"),
        replace(subscription("b-batch", "order.paid"), flow_json=flow.to_json()),
        subscription("c-plain", "order.paid"),
    ])  # fmt: skip
    first = store.events.emit(event("e0", payload={"n": 0}))
    plain = [event_run_id("a-plain", "e0"), event_run_id("c-plain", "e0")]
    assert first.started == tuple(plain) and first.woke == ()
    assert store.events.get_event("e0")[1:] == (plain, [])  # type: ignore[index]
    batched = store.events.emit(event("e1", payload={"n": 1}, at=T0 + 1))  # the batch is full
    assert len(batched.started) == 3 and batched.started[1].startswith("b-batch@batch:")
    assert store.events.get_event("e1")[1:] == (list(batched.started), [])  # type: ignore[index]
    waiter, _ = waiting_run(store, since_ms=T0 + 2)  # (the events before: it waits)
    woke = store.events.emit(event("e2", payload={"n": 2}, at=T0 + 3))
    assert woke.woke == (waiter,)
    assert store.events.get_event("e2")[1:] == (list(woke.started), [waiter])  # type: ignore[index]
    again = store.events.emit(event("e1", payload={"n": 1}, at=T0 + 4))
    assert (again.started, again.woke, again.new) == (batched.started, (), False)


def test_concurrent_emits_of_one_id_start_each_run_once(store: Store) -> None:
    store.events.upsert_subscriptions(
        [subscription("a", "order.paid"), subscription("b", "order.paid")]
    )
    threads = 8
    barrier = threading.Barrier(threads)
    outcomes: list[tuple[str, ...]] = []
    errors: list[BaseException] = []

    def emit() -> None:
        barrier.wait()
        try:
            outcomes.append(store.events.emit(event("same", payload={"n": 1})).started)
        except BaseException as exc:
            errors.append(exc)

    workers = [threading.Thread(target=emit) for _ in range(threads)]
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    assert errors == []
    assert set(outcomes) == {(event_run_id("a", "same"), event_run_id("b", "same"))}
    assert len(store.runs.list_runs()) == 2
    assert store.events.emit_counts() == {"order.paid": 1}


def test_a_matching_emit_wakes_a_waiting_run_in_its_transaction(store: Store) -> None:
    run_id, _ = waiting_run(store, match={"order_id": 7})
    assert store.runs.get_run(run_id).status is RunStatus.WAITING  # type: ignore[union-attr]
    assert event_step(store, run_id).status == "waiting"
    assert store.events.emit(event("other", payload={"order_id": 8})).woke == ()
    assert store.events.emit(event("no-key", payload={"id": 7})).woke == ()
    woke = store.events.emit(event("pay", payload={"order_id": 7}, at=T0 + 10)).woke
    assert woke == (run_id,)
    assert store.runs.get_run(run_id).status is RunStatus.PENDING  # type: ignore[union-attr]
    step = event_step(store, run_id)
    assert (step.status, step.result["id"], step.result["payload"]) == (
        "completed", "pay", {"order_id": 7}
    )  # fmt: skip
    assert store.events.emit(event("pay-again", payload={"order_id": 7})).woke == ()


def test_racing_emits_wake_a_waiting_run_once(store: Store) -> None:
    run_id, _ = waiting_run(store)
    threads = 8
    barrier = threading.Barrier(threads)
    woke: dict[str, tuple[str, ...]] = {}

    def emit(n: int) -> None:
        barrier.wait()
        woke[f"e{n}"] = store.events.emit(event(f"e{n}", payload={"n": n})).woke

    workers = [threading.Thread(target=emit, args=(n,)) for n in range(threads)]
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    assert sorted(woke.values()) == [()] * (threads - 1) + [(run_id,)]
    (winner,) = [event_id for event_id, runs in woke.items() if runs]
    assert event_step(store, run_id).result["id"] == winner  # the event that woke it


def test_a_wait_takes_an_event_emitted_after_its_run_was_created_not_before(
    store: Store,
) -> None:
    """ "Since the run" is the store's order of inserts, not milliseconds: all three
    events have the run's own instant, and only the one stored after the run matches."""
    store.events.emit(event("a-before", payload={"order_id": 7}))
    token = claimed_run(store)
    store.events.emit(event("b-early", payload={"order_id": 7}))
    store.events.emit(event("c-later", payload={"order_id": 7}))
    wait(store, "r1", token, match={"order_id": 7})
    assert store.runs.get_run("r1").status is RunStatus.PENDING  # type: ignore[union-attr]
    assert event_step(store, "r1").result["id"] == "b-early"


def test_an_event_stored_before_the_run_in_the_same_millisecond_is_not_its(
    store: Store,
) -> None:
    store.events.emit(event("before", payload={"order_id": 7}))
    run_id, _ = waiting_run(store, match={"order_id": 7})
    assert store.runs.get_run(run_id).status is RunStatus.WAITING  # type: ignore[union-attr]
    assert store.events.get_event("before")[2] == []  # type: ignore[index]


def test_since_wait_passes_over_an_event_stored_before_the_wait_in_its_millisecond(
    store: Store,
) -> None:
    token = claimed_run(store)
    store.events.emit(event("early"))
    wait(store, "r1", token, since_run=False)
    assert store.runs.get_run("r1").status is RunStatus.WAITING  # type: ignore[union-attr]
    assert store.events.emit(event("later")).woke == ("r1",)


def test_an_event_the_look_back_delivers_records_the_run_it_woke(store: Store) -> None:
    """``woke`` holds every delivery, by an emit or by a wait's look back."""
    token = claimed_run(store)
    store.events.emit(event("early", payload={"order_id": 7}))
    wait(store, "r1", token, match={"order_id": 7})
    assert store.events.get_event("early")[2] == ["r1"]  # type: ignore[index]
    assert event_step(store, "r1").result["id"] == "early"
    (listed,) = store.events.list_events(name="order.paid", limit=10)
    assert listed[2] == ["r1"]
    again = store.events.emit(event("early", payload={"order_id": 7}))
    assert (again.new, again.woke) == (False, ("r1",))


def test_a_wait_passes_over_events_it_was_handed_before(store: Store) -> None:
    token = claimed_run(store)
    store.events.emit(event("first", at=T0 + 1))
    wait(store, "r1", token, seen=frozenset({"first"}))
    assert store.runs.get_run("r1").status is RunStatus.WAITING  # type: ignore[union-attr]


def test_a_stale_lease_cannot_wait_and_stores_nothing(store: Store) -> None:
    store.runs.insert_run(NewRun("r1", "waiter", "1", None, 0, "default", T0, T0))
    store.runs.claim_runs(
        ClaimRequest(
            now_ms=T0,
            lease_ms=LEASE,
            worker="w",
            pools=["default"],
            limits={"waiter": None},
            limit=1,
            idle=True,
        )
    )
    wait = NewWait("r1", "stale", ("x",), None, T0, None, "x", 1, frozenset(), T0, 1)
    with pytest.raises(LeaseLost):
        store.events.wait_run(wait, then_claim=None)
    assert store.events.emit(event("e", name="x")).woke == ()
    assert store.runs.get_run("r1").status is RunStatus.RUNNING  # type: ignore[union-attr]


def test_a_waiting_run_is_claimable_at_its_timeout_and_not_before(store: Store) -> None:
    waiting_run(store, until_ms=T0 + 1000)

    def claim(at: int) -> list[str]:
        return [
            c.info.id
            for c in store.runs.claim_runs(
                ClaimRequest(
                    now_ms=at,
                    lease_ms=LEASE,
                    worker="w",
                    pools=["default"],
                    limits={"waiter": None},
                    limit=1,
                    idle=True,
                )
            )
        ]

    assert claim(T0 + 999) == []
    assert claim(T0 + 1000) == ["r1"]


def test_subscriptions_are_upserted_by_key_listed_and_deleted(store: Store) -> None:
    store.events.upsert_subscriptions([subscription("k", "a")])
    store.events.upsert_subscriptions([subscription("k", "b")])
    assert [(s.key, s.event_name) for s in store.events.list_subscriptions()] == [("k", "b")]
    assert store.events.delete_subscription("k") is True
    assert store.events.delete_subscription("k") is False
    assert store.events.list_subscriptions() == []


def test_events_are_listed_newest_first_and_by_name(store: Store) -> None:
    for n, name in enumerate(["a", "b", "a"]):
        store.events.emit(event(f"e{n}", name=name, at=T0 + n))
    assert [e.id for e, _, _ in store.events.list_events(name=None, limit=10)] == ["e2", "e1", "e0"]
    assert [e.id for e, _, _ in store.events.list_events(name="a", limit=1)] == ["e2"]


def test_a_due_buffer_starts_its_run_once_however_many_flush_it(store: Store) -> None:
    flow = Flow.of(debounce="1s", debounce_max=None, batch=None, batch_window=None, key="k")
    record = replace(subscription("deb", "order.paid"), flow_json=flow.to_json())
    store.events.upsert_subscriptions([record])
    for n in range(5):
        assert store.events.emit(event(f"e{n}", payload={"k": n % 2, "n": n})).started == ()
    assert store.events.next_flush_ms() == T0 + 1000
    assert store.events.flush_due(now_ms=T0 + 999, limit=10) == []
    threads = 6
    barrier = threading.Barrier(threads)
    flushed: list[list[str]] = []

    def flush() -> None:
        barrier.wait()
        flushed.append(store.events.flush_due(now_ms=T0 + 1000, limit=10))

    workers = [threading.Thread(target=flush) for _ in range(threads)]
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    started = sorted(run for runs in flushed for run in runs)
    assert started == ["deb@debounce:e0", "deb@debounce:e1"]
    assert sorted(r.input["n"] for r in store.runs.list_runs()) == [3, 4]  # each key's last
    assert store.events.next_flush_ms() is None


# -- the look back's order on an upgraded store, and under concurrent emits ---------------


def _execute(url: str, statement: str) -> None:
    """One statement on the store's database, by its own driver, committed."""
    if url.startswith("sqlite:///"):
        import sqlite3

        conn = sqlite3.connect(url.removeprefix("sqlite:///"))
        with conn:
            conn.execute(statement)
        conn.close()
        return
    import psycopg

    with psycopg.connect(url) as pg:
        pg.execute(statement)  # type: ignore[arg-type]


@pytest.fixture(params=["sqlite", "postgres"])
def url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    if request.param == "sqlite":
        yield f"sqlite:///{tmp_path / 'contract.db'}"
        return
    with fresh_schema() as found:
        yield found


def test_a_run_stored_before_the_events_order_keeps_the_millisecond_rule(url: str) -> None:
    """Migration 0022 leaves a run stored before it without a mark: its waits look back
    at the events emitted from its creation's millisecond on, as they did."""
    store = open_store(url)
    store.migrate()
    try:
        store.events.emit(event("emitted-earlier", payload={"order_id": 7}, at=T0 - 1))
        store.events.emit(event("stored-before", payload={"order_id": 7}, at=T0 + 5))
        token = claimed_run(store)
        _execute(url, "UPDATE tickwork_runs SET event_mark = NULL WHERE id = 'r1'")
        wait(store, "r1", token, match={"order_id": 7})
        assert event_step(store, "r1").result["id"] == "stored-before"
    finally:
        store.close()


def test_on_postgresql_an_emit_begun_before_a_run_and_committed_after_is_not_its() -> None:
    """PostgreSQL hands out the events' positions as emits begin, not as they commit: an
    event that drew its position before the run's insert is before the run, even when it
    commits after (it was emitted concurrently with the run's creation); an emit begun
    after the insert always matches. (SQLite's writes take turns: nothing is concurrent.)"""
    import psycopg

    with fresh_schema() as url:
        store = open_store(url)
        store.migrate()
        try:
            with psycopg.connect(url) as pending:  # an emit's transaction, uncommitted
                pending.execute(
                    "INSERT INTO tickwork_events (id, name, payload, emitted_at, started, woke)"
                    " VALUES ('concurrent', 'order.paid', '{\"order_id\":7}', %s, '[]', '[]')",
                    (T0,),
                )
                token = claimed_run(store)
            assert store.events.get_event("concurrent") is not None  # committed after the run
            wait(store, "r1", token, match={"order_id": 7})
            assert store.runs.get_run("r1").status is RunStatus.WAITING  # type: ignore[union-attr]
            assert store.events.emit(event("later", payload={"order_id": 7})).woke == ("r1",)
        finally:
            store.close()
