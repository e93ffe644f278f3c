"""Events (DESIGN §9): runs started by an emit, runs that wait for one, on both backends
with a FakeClock."""

from __future__ import annotations

import logging
from typing import Any

import pytest

from tickwork import ConfigError, Context, Engine, Event, On, RunStatus
from tickwork.testing import FakeClock


def test_an_emit_starts_one_run_of_each_subscribed_workflow_with_the_payload(
    engine: Engine,
) -> None:
    seen: list[Any] = []

    @engine.workflow("welcome", on=On("user.signed_up"))
    def welcome(ctx: Context, input: dict[str, Any]) -> None:
        seen.append(input)

    @engine.workflow("other", on=On("user.deleted"))
    def other(ctx: Context, input: Any) -> None:
        raise AssertionError("not subscribed to this event")

    started = engine.emit("user.signed_up", {"user_id": 42}, id="signup-42")
    assert len(started) == 1
    assert engine.run_until_idle() == 1
    assert seen == [{"user_id": 42}]
    run = engine.get_run(started[0])
    assert run is not None and (run.workflow, run.status) == ("welcome", RunStatus.COMPLETED)


def test_emitting_the_same_id_again_starts_nothing_and_returns_the_same_runs(
    engine: Engine,
) -> None:
    @engine.workflow("welcome", on=On("user.signed_up"))
    def welcome(ctx: Context, input: Any) -> None:
        return None

    first = engine.emit("user.signed_up", {"user_id": 1}, id="e-1")
    again = engine.emit("user.signed_up", {"user_id": 1}, id="e-1")
    assert first == again and len(first) == 1
    assert len(engine.list_runs(workflow="welcome")) == 1
    assert engine.emit("user.signed_up", {"user_id": 1}) != first  # no id: a new event


def test_match_routes_by_payload_and_input_maps_dotted_paths(engine: Engine) -> None:
    @engine.workflow(
        "big-orders",
        on=On("order.paid", match={"order.tier": "gold"}, input={"id": "order.id"}),
    )
    def big(ctx: Context, input: dict[str, Any]) -> Any:
        return input

    assert engine.emit("order.paid", {"order": {"id": 7, "tier": "basic"}}) == []
    started = engine.emit("order.paid", {"order": {"id": 8, "tier": "gold"}})
    engine.run_until_idle()
    assert engine.get_run(started[0]).result == {"id": 8}  # type: ignore[union-attr]


def test_runtime_subscriptions_are_stored_listed_and_removed(engine: Engine) -> None:
    @engine.workflow("audit")
    def audit(ctx: Context, input: Any) -> None:
        return None

    key = engine.subscribe("audit", "order.paid", match={"region": "eu"}, key="audit-eu")
    assert key == "audit-eu"
    assert engine.subscribe("audit", "order.paid", match={"region": "eu"}, key="audit-eu") == key
    (sub,) = engine.list_subscriptions()
    assert (sub.key, sub.workflow, sub.name, sub.match, sub.declared) == (
        "audit-eu", "audit", "order.paid", {"region": "eu"}, False
    )  # fmt: skip
    assert len(engine.emit("order.paid", {"region": "eu"})) == 1
    assert engine.unsubscribe(key) is True
    assert engine.unsubscribe(key) is False
    assert engine.emit("order.paid", {"region": "eu"}) == []


@pytest.mark.parametrize(
    ("name", "payload", "event_id", "match"),
    [
        ("bad\x00name", None, None, None),
        ("", None, None, None),
        ("ok", {"x": object()}, None, None),
        ("ok", float("nan"), None, None),
        ("ok", None, "id\x1b[31m", None),
        ("ok", None, None, {"a..b": 1}),
        ("ok", None, None, "order_id == 7"),
        ("ok", None, None, {"amount": {"$gt": 5}}),  # equality only: no operators
        ("ok", None, None, {"$or": [{"a": 1}]}),
        ("ok", None, None, {"items": [{"$elemMatch": {"a": 1}}]}),
    ],
)
def test_bad_input_is_refused_and_nothing_is_stored(
    engine: Engine, name: str, payload: Any, event_id: str | None, match: Any
) -> None:
    @engine.workflow("wf")
    def wf(ctx: Context, input: Any) -> None:
        return None

    with pytest.raises(ConfigError):
        if match is not None:
            engine.subscribe("wf", name, match=match)
        else:
            engine.emit(name, payload, id=event_id)
    assert engine.list_events() == []
    assert engine.list_subscriptions() == []


def test_a_wait_with_operator_syntax_in_its_match_is_refused_before_it_waits(
    engine: Engine,
) -> None:
    @engine.workflow("fulfil")
    def fulfil(ctx: Context, input: Any) -> Any:
        return ctx.wait_for_event("order.paid", match={"amount": {"$gte": 10}})

    handle = engine.start("fulfil")
    engine.run_until_idle()
    assert handle.status() is RunStatus.FAILED
    assert "$gte" in (engine.get_run(handle.id).error or "")  # type: ignore[union-attr]


def test_a_match_on_a_dollar_free_object_or_a_dollar_inside_a_value_is_equality(
    engine: Engine,
) -> None:
    @engine.workflow("wf")
    def wf(ctx: Context, input: Any) -> None:
        return None

    engine.subscribe("wf", "x", match={"price": {"currency": "USD"}, "note": "$5 off"})
    assert engine.emit("x", {"price": {"currency": "USD"}, "note": "$5 off"}) != []
    assert engine.emit("x", {"price": {"currency": "EUR"}, "note": "$5 off"}) == []


def test_an_id_already_used_by_another_event_name_is_refused(engine: Engine) -> None:
    engine.emit("a", id="same")
    with pytest.raises(ConfigError, match="already an event named 'a'"):
        engine.emit("b", id="same")


def test_events_are_listed_newest_first_with_the_runs_they_started(
    engine: Engine, clock: FakeClock
) -> None:
    @engine.workflow("wf", on=On("ping"))
    def wf(ctx: Context, input: Any) -> None:
        return None

    started = engine.emit("ping", {"n": 1}, id="p1")
    clock.advance("1s")
    engine.emit("pong", {"n": 2}, id="p2")
    assert [e.id for e in engine.list_events()] == ["p2", "p1"]
    assert all(isinstance(e, Event) for e in engine.list_events())
    (ping,) = engine.list_events(name="ping")
    assert (ping.name, ping.payload, list(ping.started)) == ("ping", {"n": 1}, started)
    assert engine.get_event("p2").payload == {"n": 2}  # type: ignore[union-attr]
    assert engine.get_event("nope") is None


# -- waits -------------------------------------------------------------------------------


def _fulfil(engine: Engine, **wait: Any) -> None:
    @engine.workflow("fulfil")
    def fulfil(ctx: Context, input: dict[str, Any]) -> Any:
        paid = ctx.wait_for_event("order.paid", match={"order_id": input["order_id"]}, **wait)
        if paid is None:
            return "expired"
        assert isinstance(paid, Event)
        return {"id": paid.id, "amount": paid.payload["amount"]}


def test_a_waiting_run_is_woken_by_a_matching_emit_only(engine: Engine) -> None:
    _fulfil(engine, timeout="2d")
    handle = engine.start("fulfil", {"order_id": 7})
    engine.run_until_idle()
    assert handle.status() is RunStatus.WAITING
    assert [r.id for r in engine.list_runs(status="waiting")] == [handle.id]
    engine.emit("order.paid", {"order_id": 8, "amount": 1})  # another order
    assert engine.run_until_idle() == 0
    engine.emit("order.paid", {"order_id": 7, "amount": 30}, id="pay-7")
    assert engine.run_until_idle() == 1
    assert handle.result() == {"id": "pay-7", "amount": 30}
    assert engine.get_event("pay-7").woke == (handle.id,)  # type: ignore[union-attr]


def test_a_wait_times_out_with_none(engine: Engine, clock: FakeClock) -> None:
    _fulfil(engine, timeout="2d")
    handle = engine.start("fulfil", {"order_id": 7})
    engine.run_until_idle()
    clock.advance("47h")
    assert engine.run_until_idle() == 0
    clock.advance("1h")
    assert engine.run_until_idle() == 1
    assert handle.result() == "expired"
    engine.emit("order.paid", {"order_id": 7, "amount": 1})  # too late: changes nothing
    assert engine.run_until_idle() == 0
    assert handle.result() == "expired"


def test_since_run_takes_an_event_emitted_before_the_wait_began(
    engine: Engine, clock: FakeClock
) -> None:
    _fulfil(engine)
    handle = engine.start("fulfil", {"order_id": 7})
    clock.advance("1s")
    engine.emit("order.paid", {"order_id": 7, "amount": 5}, id="early")
    engine.run_until_idle()
    assert handle.result() == {"id": "early", "amount": 5}


def test_since_run_is_the_stores_order_under_a_clock_that_stands_still(
    engine: Engine, clock: FakeClock
) -> None:
    """An event emitted before ``start`` is not the run's, though it has the run's very
    millisecond; one emitted after ``start`` and before the wait began is."""
    _fulfil(engine)
    engine.emit("order.paid", {"order_id": 7, "amount": 1}, id="1-before-start")
    handle = engine.start("fulfil", {"order_id": 7})
    engine.run_until_idle()
    assert handle.status() is RunStatus.WAITING
    other = engine.start("fulfil", {"order_id": 8})
    engine.emit("order.paid", {"order_id": 8, "amount": 2}, id="2-after-start")
    engine.run_until_idle()
    assert other.result() == {"id": "2-after-start", "amount": 2}
    assert handle.status() is RunStatus.WAITING


def test_a_run_started_by_an_event_does_not_take_that_event_by_its_wait(
    engine: Engine,
) -> None:
    """The event that starts a run is stored before the run (in the emit's transaction):
    a wait for the next event of its name waits for the next one."""

    @engine.workflow("relay", on=On("ping"))
    def relay(ctx: Context, input: Any) -> Any:
        got = ctx.wait_for_event("ping", timeout="1h")
        return None if got is None else got.id

    (first,) = engine.emit("ping", {}, id="ping-1")
    engine.run_until_idle()
    assert engine.get_run(first).status is RunStatus.WAITING  # type: ignore[union-attr]
    engine.emit("ping", {}, id="ping-2")
    engine.run_until_idle()
    assert engine.get_run(first).result == "ping-2"  # type: ignore[union-attr]


def test_since_wait_passes_over_an_event_of_its_millisecond_emitted_before_it(
    engine: Engine, clock: FakeClock
) -> None:
    _fulfil(engine, since="wait")
    handle = engine.start("fulfil", {"order_id": 7})
    engine.emit("order.paid", {"order_id": 7, "amount": 5}, id="early")
    engine.run_until_idle()
    assert handle.status() is RunStatus.WAITING
    engine.emit("order.paid", {"order_id": 7, "amount": 6}, id="late")
    engine.run_until_idle()
    assert handle.result() == {"id": "late", "amount": 6}


def test_an_event_delivered_by_the_look_back_lists_the_run_it_woke(
    engine: Engine, clock: FakeClock
) -> None:
    _fulfil(engine)
    handle = engine.start("fulfil", {"order_id": 303})
    clock.advance("1s")
    engine.emit("order.paid", {"order_id": 303, "amount": 5}, id="paid-303")
    engine.run_until_idle()
    assert handle.result() == {"id": "paid-303", "amount": 5}
    assert engine.get_event("paid-303").woke == (handle.id,)  # type: ignore[union-attr]
    (step,) = [s for s in engine.list_steps(handle.id) if s.kind == "event"]
    assert (step.status, step.result["id"]) == ("completed", "paid-303")


def test_since_wait_only_takes_later_events(engine: Engine, clock: FakeClock) -> None:
    _fulfil(engine, since="wait")
    handle = engine.start("fulfil", {"order_id": 7})
    engine.emit("order.paid", {"order_id": 7, "amount": 5}, id="early")
    clock.advance("1s")
    engine.run_until_idle()
    assert handle.status() is RunStatus.WAITING
    clock.advance("1s")
    engine.emit("order.paid", {"order_id": 7, "amount": 6}, id="late")
    engine.run_until_idle()
    assert handle.result() == {"id": "late", "amount": 6}


def test_waiting_on_a_list_of_names_takes_the_first_of_any(engine: Engine) -> None:
    @engine.workflow("either")
    def either(ctx: Context) -> Any:
        event = ctx.wait_for_event(["approved", "rejected"])
        return event.name if event else None

    handle = engine.start("either")
    engine.run_until_idle()
    engine.emit("rejected", {})
    engine.emit("approved", {})
    engine.run_until_idle()
    assert handle.result() == "rejected"


def test_each_event_is_handed_to_a_run_once_across_its_waits(
    engine: Engine, clock: FakeClock
) -> None:
    @engine.workflow("collect")
    def collect(ctx: Context) -> Any:
        return [ctx.wait_for_event("item").payload for _ in range(3)]  # type: ignore[union-attr]

    handle = engine.start("collect")
    engine.emit("item", 1)
    clock.advance("1ms")  # in the order emitted (within one millisecond: by id)
    engine.emit("item", 2)
    engine.run_until_idle()
    assert handle.status() is RunStatus.WAITING
    engine.emit("item", 3)
    engine.run_until_idle()
    assert handle.result() == [1, 2, 3]


def test_a_waiting_run_can_be_cancelled(engine: Engine) -> None:
    _fulfil(engine)
    handle = engine.start("fulfil", {"order_id": 7})
    engine.run_until_idle()
    assert engine.cancel(handle.id) is True
    assert handle.status() is RunStatus.CANCELLED
    assert engine.emit("order.paid", {"order_id": 7, "amount": 1}, id="x") == []
    assert engine.get_event("x").woke == ()  # type: ignore[union-attr]


def test_ctx_emit_is_not_repeated_on_replay(engine: Engine, clock: FakeClock) -> None:
    @engine.workflow("downstream", on=On("step.done"))
    def downstream(ctx: Context, input: Any) -> None:
        return None

    @engine.workflow("upstream")
    def upstream(ctx: Context) -> Any:
        started = ctx.emit("step.done", {"n": 1})
        ctx.sleep("nap", "1m")  # the workflow runs again from the top after this
        return started

    handle = engine.start("upstream")
    engine.run_until_idle()
    clock.advance("1m")
    engine.run_until_idle()
    started = handle.result()
    assert len(started) == 1
    assert [r.id for r in engine.list_runs(workflow="downstream")] == started
    assert len(engine.list_events(name="step.done")) == 1


def test_an_async_workflow_awaits_its_wait(engine: Engine) -> None:
    @engine.workflow("async-wait")
    async def waits(ctx: Context) -> Any:
        event = await ctx.wait_for_event("go")
        await ctx.emit("went", {})
        return event.payload if event else None

    handle = engine.start("async-wait")
    engine.run_until_idle()
    engine.emit("go", {"ok": True})
    engine.run_until_idle()
    assert handle.result() == {"ok": True}


def test_events_are_pruned_under_the_retention_and_their_counts_stay(
    engine: Engine, clock: FakeClock
) -> None:
    engine.emit("old", {}, id="old")
    clock.advance("31d")
    engine.emit("new", {}, id="new")
    assert engine.prune() >= 1
    assert [e.id for e in engine.list_events()] == ["new"]
    assert engine.console.event_counts() == {"old": 1, "new": 1}


def test_a_waiting_run_is_neither_pruned_nor_counted_as_ended(
    engine: Engine, clock: FakeClock
) -> None:
    _fulfil(engine, timeout="90d")
    handle = engine.start("fulfil", {"order_id": 7})
    engine.run_until_idle()
    clock.advance("60d")  # past the runs' retention, still waiting
    engine.prune()
    stats = engine.console.storage_stats()  # a waiting run has no end: not the oldest ended run
    assert stats.oldest_ended_at is None and stats.prunable_runs == 0
    assert handle.status() is RunStatus.WAITING
    assert engine.list_runs(status="completed") == []


# -- debounce and batch --------------------------------------------------------------------


def test_debounce_starts_one_run_per_key_once_its_events_stop(
    engine: Engine, clock: FakeClock
) -> None:
    @engine.workflow("sync", on=On("profile.changed", debounce="5m", key="user_id"))
    def sync(ctx: Context, input: Any) -> Any:
        return input

    assert engine.emit("profile.changed", {"user_id": 1, "v": 1}) == []
    clock.advance("4m")
    engine.emit("profile.changed", {"user_id": 1, "v": 2})  # the wait starts again
    engine.emit("profile.changed", {"user_id": 2, "v": 1})
    clock.advance("4m")
    assert engine.tick() == []
    clock.advance("1m")
    started = engine.tick()
    assert len(started) == 2 and engine.tick() == []
    engine.run_until_idle()
    results = sorted(r.result["user_id"] * 10 + r.result["v"] for r in engine.list_runs())
    assert results == [12, 21]  # the last payload of each key


def test_debounce_max_bounds_the_wait(engine: Engine, clock: FakeClock) -> None:
    @engine.workflow("sync", on=On("ping", debounce="5m", debounce_max="12m"))
    def sync(ctx: Context, input: Any) -> Any:
        return input

    for n in range(4):  # an event every 4 minutes would put the run off for ever
        engine.emit("ping", {"n": n})
        clock.advance("4m")
    (run_id,) = engine.tick()  # at 16 min: due at 12
    engine.run_until_idle()
    assert engine.get_run(run_id).result == {"n": 3}  # type: ignore[union-attr]


def test_batch_starts_a_run_with_the_payloads_when_full_or_at_its_window(
    engine: Engine, clock: FakeClock
) -> None:
    @engine.workflow("bulk", on=On("row", batch=3, batch_window="10s"))
    def bulk(ctx: Context, input: Any) -> Any:
        return input

    assert engine.emit("row", 1) == []
    assert engine.emit("row", 2) == []
    (full,) = engine.emit("row", 3)  # the third fills it: started by the emit
    engine.emit("row", 4)
    clock.advance("9s")
    assert engine.tick() == []
    clock.advance("1s")
    (windowed,) = engine.tick()
    engine.run_until_idle()
    assert engine.get_run(full).result == [1, 2, 3]  # type: ignore[union-attr]
    assert engine.get_run(windowed).result == [4]  # type: ignore[union-attr]


@pytest.mark.parametrize(
    "on",
    [
        {"debounce": "5m", "batch": 3, "batch_window": "1s"},
        {"batch": 3},
        {"batch": 0, "batch_window": "1s"},
        {"debounce": "0s"},
        {"debounce": "5m", "debounce_max": "1m"},
        {"key": "user_id"},
        {"debounce": "5m", "key": "a..b"},
    ],
)
def test_bad_flow_control_is_refused(on: dict[str, Any]) -> None:
    with pytest.raises(ConfigError):
        On("x", **on)


def test_waits_emit_starts_and_wake_ups_are_logged(
    engine: Engine, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="tickwork")

    @engine.workflow("welcome", on=On("user.signed_up"))
    def welcome(ctx: Context, input: Any) -> None:
        return None

    _fulfil(engine, timeout="2d")
    handle = engine.start("fulfil", {"order_id": 7})
    engine.run_until_idle()
    (started,) = engine.emit("user.signed_up", {}, id="s1")
    engine.emit("order.paid", {"order_id": 7, "amount": 1}, id="p7")
    lines = [r.getMessage() for r in caplog.records]
    waits = f"run {handle.id} waiting for order.paid where order_id = 7 until 2026-03-03T12:00:00Z"
    assert waits in lines  # the match too: which order it waits for
    assert f"event user.signed_up (s1) started run {started}" in lines
    assert f"event order.paid (p7) woke run {handle.id}" in lines
