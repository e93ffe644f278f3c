"""Checkpointed steps, durable sleeps and ``ctx.now()`` through the public API."""

from __future__ import annotations

from datetime import timedelta

import pytest

from tickwork import Context, Engine, RunStatus, StepFailed
from tickwork.testing import FakeClock


def test_three_step_run_completes_with_its_result(engine: Engine) -> None:
    """A workflow's steps run in order and its return value becomes the run's result."""

    @engine.workflow("add")
    def add(ctx: Context, input: dict[str, int]) -> dict[str, int]:
        a = ctx.step("a", lambda: input["x"] + 1)
        b = ctx.step("b", lambda v: v * 2, a)
        c = ctx.step("c", lambda v, plus=0: v + plus, b, plus=3)
        return {"c": c}

    handle = engine.start("add", {"x": 1})
    assert handle.status() is RunStatus.PENDING
    assert engine.run_until_idle() == 1
    assert handle.result() == {"c": 7}
    run = engine.get_run(handle.id)
    assert run is not None
    assert (run.status, run.attempt, run.version, run.pool, run.priority) == (
        RunStatus.COMPLETED,
        1,
        "1",
        "default",
        0,
    )
    assert run.input == {"x": 1}
    assert run.started_at is not None and run.finished_at is not None
    assert [s.name for s in engine.list_steps(handle.id)] == ["a", "b", "c"]


def test_sleep_suspends_the_run_and_completed_steps_are_not_rerun(
    engine: Engine, clock: FakeClock
) -> None:
    """After a durable sleep the workflow replays: stored steps return without running."""
    calls: list[str] = []

    @engine.workflow()
    def nap(ctx: Context) -> list[int]:
        first = ctx.step("first", lambda: calls.append("first") or 1)
        ctx.sleep("nap", "10m")
        second = ctx.step("second", lambda: calls.append("second") or 2)
        return [first, second]

    handle = engine.start(nap)
    assert engine.run_until_idle() == 1
    assert handle.status() is RunStatus.SLEEPING
    clock.advance("9m")
    assert engine.run_until_idle() == 0
    clock.advance("1m")
    assert engine.run_until_idle() == 1
    assert handle.result() == [1, 2]
    assert calls == ["first", "second"]


def test_sleep_until_a_past_instant_does_not_suspend(engine: Engine, clock: FakeClock) -> None:
    @engine.workflow()
    def late(ctx: Context) -> str:
        ctx.sleep_until("past", clock.now() - timedelta(hours=1))
        return "done"

    handle = engine.start(late)
    engine.run_until_idle()
    assert handle.result() == "done"


def test_sleep_until_waits_for_the_instant(engine: Engine, clock: FakeClock) -> None:
    target = clock.now() + timedelta(days=2)

    @engine.workflow()
    def wait_for(ctx: Context) -> str:
        ctx.sleep_until("target", target)
        return ctx.now().isoformat()

    handle = engine.start(wait_for)
    engine.run_until_idle()
    clock.set(target)
    engine.run_until_idle()
    assert handle.result() == target.isoformat()


def test_now_is_recorded_so_replays_see_the_same_value(engine: Engine, clock: FakeClock) -> None:
    @engine.workflow()
    def stamp(ctx: Context) -> list[str]:
        first = ctx.now()
        ctx.sleep("gap", "1h")
        return [first.isoformat(), ctx.now().isoformat()]

    start = clock.now()
    handle = engine.start(stamp)
    engine.run_until_idle()
    clock.advance("1h")
    engine.run_until_idle()
    assert handle.result() == [start.isoformat(), (start + timedelta(hours=1)).isoformat()]


def test_step_results_come_back_as_stored_json(engine: Engine) -> None:
    """A tuple comes back as a list on the first run exactly as on a replay."""

    @engine.workflow()
    def shapes(ctx: Context) -> object:
        return ctx.step("pair", lambda: (1, 2))

    handle = engine.start(shapes)
    engine.run_until_idle()
    assert handle.result() == [1, 2]


def test_same_step_name_in_a_loop_is_checkpointed_per_call(
    engine: Engine, clock: FakeClock
) -> None:
    calls: list[int] = []

    @engine.workflow()
    def loop(ctx: Context) -> int:
        total = 0
        for n in range(3):
            total += ctx.step("add", lambda n=n: calls.append(n) or n)
        ctx.sleep("rest", "1s")
        return total

    handle = engine.start(loop)
    engine.run_until_idle()
    clock.advance("1s")
    engine.run_until_idle()
    assert handle.result() == 3
    assert calls == [0, 1, 2]
    assert [s.name for s in engine.list_steps(handle.id)][:3] == ["add", "add#2", "add#3"]


def test_non_json_step_result_fails_the_run_with_a_clear_error(engine: Engine) -> None:
    @engine.workflow()
    def bad(ctx: Context) -> object:
        return ctx.step("obj", lambda: object())

    handle = engine.start(bad)
    engine.run_until_idle()
    run = engine.get_run(handle.id)
    assert run is not None and run.status is RunStatus.FAILED
    assert "not a JSON value" in (run.error or "")


def test_step_exception_reaches_the_workflow_which_may_handle_it(engine: Engine) -> None:
    def boom() -> None:
        raise ValueError("nope")

    @engine.workflow()
    def careful(ctx: Context) -> str:
        try:
            ctx.step("boom", boom)
        except ValueError as exc:
            return f"handled {exc}"
        return "unreachable"

    handle = engine.start(careful)
    engine.run_until_idle()
    assert handle.result() == "handled nope"
    (step,) = engine.list_steps(handle.id)
    assert (step.status, step.error) == ("failed", "ValueError: nope")


def test_replayed_failed_step_raises_step_failed_without_running_again(
    engine: Engine, clock: FakeClock
) -> None:
    calls: list[str] = []

    def boom() -> None:
        calls.append("boom")
        raise ValueError("nope")

    @engine.workflow()
    def careful(ctx: Context) -> list[str]:
        seen = []
        try:
            ctx.step("boom", boom)
        except ValueError:
            seen.append("ValueError")
        except StepFailed as exc:
            seen.append(f"StepFailed {exc.error}")
        ctx.sleep("rest", "1s")
        return seen

    handle = engine.start(careful)
    engine.run_until_idle()
    clock.advance("1s")
    engine.run_until_idle()
    assert handle.result() == ["StepFailed ValueError: nope"]
    assert calls == ["boom"]


def test_async_workflow_with_async_and_sync_steps(engine: Engine, clock: FakeClock) -> None:
    async def fetch(n: int) -> int:
        return n * 10

    @engine.workflow()
    async def asynchronous(ctx: Context, input: int) -> int:
        a = await ctx.step("fetch", fetch, input)
        await ctx.sleep("nap", "5s")
        b = await ctx.step("sync", lambda: 1)
        return a + b

    handle = engine.start(asynchronous, 4)
    engine.run_until_idle()
    assert handle.status() is RunStatus.SLEEPING
    clock.advance("5s")
    engine.run_until_idle()
    assert handle.result() == 41


def test_sync_workflow_may_call_an_async_step(engine: Engine) -> None:
    async def fetch() -> str:
        return "ok"

    @engine.workflow()
    def mixed(ctx: Context) -> str:
        return ctx.step("fetch", fetch)

    handle = engine.start(mixed)
    engine.run_until_idle()
    assert handle.result() == "ok"


def test_context_describes_the_run(engine: Engine) -> None:
    @engine.workflow("describe")
    def describe(ctx: Context, input: dict[str, int]) -> dict[str, object]:
        return {
            "run_id": ctx.run_id,
            "workflow": ctx.workflow,
            "attempt": ctx.attempt,
            "input": ctx.input,
            "schedule_key": ctx.schedule_key,
            "scheduled_for": ctx.scheduled_for,
        }

    handle = engine.start("describe", {"a": 1}, run_id="my-run")
    engine.run_until_idle()
    assert handle.result() == {
        "run_id": "my-run",
        "workflow": "describe",
        "attempt": 1,
        "input": {"a": 1},
        "schedule_key": None,
        "scheduled_for": None,
    }


def test_step_names_must_be_non_empty_strings(engine: Engine) -> None:
    @engine.workflow()
    def unnamed(ctx: Context) -> None:
        ctx.step("", lambda: 1)

    handle = engine.start(unnamed)
    engine.run_until_idle()
    run = engine.get_run(handle.id)
    assert run is not None and run.status is RunStatus.FAILED
    assert "non-empty name" in (run.error or "")


@pytest.mark.parametrize("duration", [0, -5, "soon"])
def test_bad_sleep_duration_fails_the_attempt(engine: Engine, duration: object) -> None:
    @engine.workflow()
    def sleepy(ctx: Context) -> None:
        ctx.sleep("nap", duration)  # type: ignore[arg-type]

    handle = engine.start(sleepy)
    engine.run_until_idle()
    run = engine.get_run(handle.id)
    assert run is not None and run.status is RunStatus.FAILED
    assert "ConfigError" in (run.error or "")
