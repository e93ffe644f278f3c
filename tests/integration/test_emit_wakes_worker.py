"""An emit in a process with a worker hands that worker the runs it started or woke at
once, as ``engine.start`` does, rather than leaving them to its next poll (DESIGN §9:
"emitting ... costs about one run start"). The wake-up is the worker's wake signal: set
by the emit itself, it is what the loop waits on (``_worker.Worker``)."""

from __future__ import annotations

import logging
from typing import Any

import pytest

from tickwork import Context, Engine, On


@pytest.fixture
def routed(engine: Engine) -> Engine:
    @engine.workflow("welcome", on=On("user.signed_up"))
    def welcome(ctx: Context, input: Any) -> None:
        return None

    @engine.workflow("fulfil")
    def fulfil(ctx: Context, input: Any) -> Any:
        event = ctx.wait_for_event("order.paid", match={"order_id": input})
        return event.id

    engine.sync_subscriptions()
    return engine


def emitting(engine: Engine, name: str, payload: Any) -> None:
    """A workflow ``emit-<name>`` that clears the worker's wake signal, emits, and keeps
    whether the signal was set by its ``ctx.emit``; then, replayed after a sleep, whether
    the replayed ``ctx.emit`` (its checkpoint: nothing emitted) set it again."""
    wake = engine._runtime.wake

    @engine.workflow(f"emit-{name}")
    def emitter(ctx: Context, input: Any) -> Any:
        wake.clear()
        ctx.emit(name, payload)  # the first time, emitted; on the replay, its checkpoint
        emitted = ctx.step("woke", wake.is_set)  # stored the first time
        replayed = wake.is_set()
        ctx.sleep("pause", "1s")
        return [emitted, replayed]


def test_ctx_emit_that_starts_a_run_wakes_this_processs_worker(routed: Engine, clock) -> None:
    emitting(routed, "user.signed_up", {"user_id": 1})
    handle = routed.start("emit-user.signed_up")
    routed.run_until_idle()
    clock.advance("1s")
    routed.run_until_idle()
    assert handle.result() == [True, False]
    assert len(routed.list_runs(workflow="welcome")) == 1


def test_ctx_emit_that_wakes_a_waiting_run_wakes_this_processs_worker(
    routed: Engine, clock
) -> None:
    waiting = routed.start("fulfil", 7)
    routed.run_until_idle()
    emitting(routed, "order.paid", {"order_id": 7})
    handle = routed.start("emit-order.paid")
    routed.run_until_idle()
    assert waiting.result().startswith("run-")  # the workflow's event woke it
    clock.advance("1s")
    routed.run_until_idle()
    assert handle.result() == [True, False]


def test_ctx_emit_that_starts_nothing_leaves_the_worker_asleep(routed: Engine, clock) -> None:
    emitting(routed, "nobody.listens", {})
    handle = routed.start("emit-nobody.listens")
    routed.run_until_idle()
    clock.advance("1s")
    routed.run_until_idle()
    assert handle.result() == [False, False]


def test_engine_emit_wakes_this_processs_worker(routed: Engine) -> None:
    wake = routed._runtime.wake
    wake.clear()
    routed.emit("nobody.listens", {})
    assert not wake.is_set()
    routed.emit("user.signed_up", {"user_id": 1}, id="s1")
    assert wake.is_set()
    wake.clear()
    routed.emit("user.signed_up", {"user_id": 1}, id="s1")  # the same id: nothing new
    assert not wake.is_set()


def test_ctx_emit_logs_the_runs_it_started(
    routed: Engine, clock, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="tickwork")
    emitting(routed, "user.signed_up", {"user_id": 1})
    routed.start("emit-user.signed_up", run_id="emitter")
    routed.run_until_idle()
    (started,) = [r.id for r in routed.list_runs(workflow="welcome")]
    lines = [r.getMessage() for r in caplog.records]
    assert any(line.startswith("event user.signed_up (run-") and line.endswith(
        f"started run {started}") for line in lines)  # fmt: skip
