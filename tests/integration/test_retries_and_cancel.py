"""Retries with back-off, timeouts and cancellation through the public API."""

from __future__ import annotations

import pytest

from tickwork import Context, Engine, Retry, RunCancelled, RunFailed, RunStatus
from tickwork.testing import FakeClock


def test_failed_attempt_is_retried_after_backoff_keeping_completed_steps(
    engine: Engine, clock: FakeClock
) -> None:
    calls: list[str] = []

    def flaky() -> str:
        calls.append("flaky")
        tries = calls.count("flaky")
        if tries < 3:
            raise RuntimeError(f"try {tries}")
        return "ok"

    @engine.workflow(retry=Retry(max_attempts=3, backoff="10s", factor=2))
    def retried(ctx: Context) -> list[object]:
        first = ctx.step("once", lambda: calls.append("once") or 1)
        return [first, flaky(), ctx.attempt]

    handle = engine.start(retried)
    assert engine.run_until_idle() == 1
    run = engine.get_run(handle.id)
    assert run is not None
    assert (run.status, run.attempt, run.error) == (RunStatus.PENDING, 2, "RuntimeError: try 1")
    clock.advance("9s")
    assert engine.run_until_idle() == 0
    clock.advance("1s")
    assert engine.run_until_idle() == 1  # attempt 2 fails; next back-off is 20 s
    clock.advance("19s")
    assert engine.run_until_idle() == 0
    clock.advance("1s")
    assert engine.run_until_idle() == 1
    assert handle.result() == [1, "ok", 3]
    assert calls == ["once", "flaky", "flaky", "flaky"]


def test_run_fails_for_good_when_attempts_run_out(engine: Engine, clock: FakeClock) -> None:
    failed: list[str] = []
    engine.on_run_failed(lambda run: failed.append(run.id))

    @engine.workflow(retry=Retry(max_attempts=2, backoff="1s"))
    def doomed(ctx: Context) -> None:
        raise KeyError("missing")

    handle = engine.start(doomed)
    engine.run_until_idle()
    clock.advance("1s")
    engine.run_until_idle()
    with pytest.raises(RunFailed) as info:
        handle.result()
    assert info.value.error == "KeyError: 'missing'"
    run = engine.get_run(handle.id)
    assert run is not None and (run.status, run.attempt) == (RunStatus.FAILED, 2)
    assert failed == [handle.id]


def test_without_retry_a_failure_is_final(engine: Engine) -> None:
    @engine.workflow()
    def once(ctx: Context) -> None:
        raise ValueError("bad")

    handle = engine.start(once)
    engine.run_until_idle()
    assert handle.status() is RunStatus.FAILED


def test_step_retry_retries_only_the_step_durably(engine: Engine, clock: FakeClock) -> None:
    tries: list[int] = []

    def flaky() -> str:
        tries.append(1)
        if len(tries) < 2:
            raise ConnectionError("down")
        return "up"

    @engine.workflow()
    def wf(ctx: Context) -> list[object]:
        return [ctx.step("flaky", flaky, retry=Retry(max_attempts=3, backoff="30s")), ctx.attempt]

    handle = engine.start(wf)
    engine.run_until_idle()
    assert handle.status() is RunStatus.PENDING  # waiting for the step's back-off
    clock.advance("30s")
    engine.run_until_idle()
    assert handle.result() == ["up", 1]
    (step,) = engine.list_steps(handle.id)
    assert (step.status, step.attempts) == ("completed", 2)


def test_step_retries_exhausted_raise_into_the_workflow(engine: Engine, clock: FakeClock) -> None:
    def down() -> None:
        raise ConnectionError("down")

    @engine.workflow()
    def wf(ctx: Context) -> str:
        try:
            ctx.step("down", down, retry=Retry(max_attempts=2, backoff="1s"))
        except ConnectionError:
            return "gave up"
        return "unreachable"

    handle = engine.start(wf)
    engine.run_until_idle()
    clock.advance("1s")
    engine.run_until_idle()
    assert handle.result() == "gave up"


def test_new_attempt_gives_a_failed_step_a_fresh_budget(engine: Engine, clock: FakeClock) -> None:
    tries: list[int] = []

    def flaky() -> str:
        tries.append(1)
        if len(tries) == 1:
            raise OSError("first")
        return "second"

    @engine.workflow(retry=Retry(max_attempts=2, backoff="1s"))
    def wf(ctx: Context) -> str:
        return ctx.step("flaky", flaky)

    handle = engine.start(wf)
    engine.run_until_idle()
    clock.advance("1s")
    engine.run_until_idle()
    assert handle.result() == "second"


def test_timeout_fails_the_attempt_at_the_next_step(engine: Engine, clock: FakeClock) -> None:
    @engine.workflow(timeout="1m")
    def slow(ctx: Context) -> None:
        ctx.step("slow", lambda: clock.advance("2m") and None)
        ctx.step("never", lambda: None)

    handle = engine.start(slow)
    engine.run_until_idle()
    run = engine.get_run(handle.id)
    assert run is not None and run.status is RunStatus.FAILED
    assert "TimeoutError" in (run.error or "")
    assert [s.name for s in engine.list_steps(handle.id)] == ["slow"]


def test_cancel_pending_run_is_immediate(engine: Engine) -> None:
    @engine.workflow()
    def wf(ctx: Context) -> None:
        return None

    handle = engine.start(wf, delay="1h")
    assert handle.cancel()
    assert handle.status() is RunStatus.CANCELLED
    assert engine.run_until_idle() == 0
    with pytest.raises(RunCancelled):
        handle.result()
    assert not handle.cancel()


def test_cancel_sleeping_run_is_immediate(engine: Engine, clock: FakeClock) -> None:
    @engine.workflow()
    def wf(ctx: Context) -> None:
        ctx.sleep("nap", "1h")
        ctx.step("after", lambda: pytest.fail("ran after cancel"))

    handle = engine.start(wf)
    engine.run_until_idle()
    assert engine.cancel(handle.id)
    clock.advance("2h")
    assert engine.run_until_idle() == 0
    assert handle.status() is RunStatus.CANCELLED


def test_cancel_running_run_stops_at_the_next_step(engine: Engine) -> None:
    ran: list[str] = []

    @engine.workflow()
    def wf(ctx: Context) -> None:
        ctx.step("first", lambda: engine.cancel(ctx.run_id) and ran.append("first"))
        ctx.step("second", lambda: ran.append("second"))

    handle = engine.start(wf)
    engine.run_until_idle()
    assert handle.status() is RunStatus.CANCELLED
    assert ran == ["first"]


def test_cancel_unknown_or_finished_run_is_false(engine: Engine) -> None:
    @engine.workflow()
    def wf(ctx: Context) -> int:
        return 1

    handle = engine.start(wf)
    engine.run_until_idle()
    assert not engine.cancel(handle.id)
    assert not engine.cancel("no-such-run")


def test_cancellation_cannot_be_swallowed_by_the_workflow(engine: Engine) -> None:
    @engine.workflow()
    def stubborn(ctx: Context) -> str:
        ctx.step("first", lambda: engine.cancel(ctx.run_id))
        try:
            ctx.step("second", lambda: None)
        except Exception:
            return "swallowed"
        return "ignored"

    handle = engine.start(stubborn)
    engine.run_until_idle()
    assert handle.status() is RunStatus.CANCELLED
