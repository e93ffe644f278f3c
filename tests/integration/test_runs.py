"""Starting, ordering, pooling, limiting, leasing and waiting for runs."""

from __future__ import annotations

import asyncio
import threading
from typing import Any

import pytest

from tickwork import ConfigError, Context, Engine, RunInfo, RunStatus, RunTimeout
from tickwork.testing import FakeClock


def test_start_is_idempotent_by_run_id(engine: Engine) -> None:
    @engine.workflow()
    def wf(ctx: Context, input: int) -> int:
        return input

    first = engine.start(wf, 1, run_id="once")
    second = engine.start(wf, 2, run_id="once")
    assert first == second
    assert engine.run_until_idle() == 1
    assert second.result() == 1
    assert [r.id for r in engine.list_runs()] == ["once"]


def test_higher_priority_runs_first(engine: Engine) -> None:
    order: list[str] = []

    @engine.workflow()
    def wf(ctx: Context, input: str) -> None:
        order.append(input)

    engine.start(wf, "low")
    engine.start(wf, "high", priority=10)
    engine.start(wf, "middle", priority=5)
    engine.run_until_idle()
    assert order == ["high", "middle", "low"]


def test_workflow_priority_is_the_default_for_its_runs(engine: Engine) -> None:
    @engine.workflow(priority=7, pool="fast")
    def wf(ctx: Context) -> None:
        return None

    run = engine.get_run(engine.start(wf).id)
    assert run is not None and (run.priority, run.pool) == (7, "fast")


def test_worker_executes_only_the_pools_it_serves(db_url: str, clock: FakeClock) -> None:
    with Engine(db_url, clock=clock) as default, Engine(db_url, clock=clock, pools=["gpu"]) as gpu:
        for engine in (default, gpu):

            @engine.workflow("wf")
            def wf(ctx: Context) -> str:
                return "done"

        on_gpu = default.start("wf", pool="gpu")
        assert default.run_until_idle() == 0
        assert gpu.run_until_idle() == 1
        assert on_gpu.result() == "done"


def test_delayed_run_waits_for_its_time(engine: Engine, clock: FakeClock) -> None:
    @engine.workflow()
    def wf(ctx: Context) -> None:
        return None

    handle = engine.start(wf, delay="5m")
    assert engine.run_until_idle() == 0
    clock.advance("5m")
    assert engine.run_until_idle() == 1
    assert handle.status() is RunStatus.COMPLETED


def test_concurrency_limit_holds_across_engines(db_url: str, clock: FakeClock) -> None:
    """With concurrency=1 a second engine finds nothing to claim while a run is held."""
    engines = [Engine(db_url, clock=clock) for _ in range(2)]
    try:
        for engine in engines:

            @engine.workflow("limited", concurrency=1)
            def limited(ctx: Context) -> str:
                return "ok"

        first, other = engines
        first.start("limited")
        first.start("limited")
        held = first._runtime.claim(5)
        assert len(held) == 1
        assert other.run_until_idle() == 0
        first._runtime.run_claimed(held[0], _keeper(first))
        assert other.run_until_idle() == 1
    finally:
        for engine in engines:
            engine.close()


def _keeper(engine: Engine) -> Any:
    from tickwork._runtime.core import LeaseKeeper

    return LeaseKeeper(engine._runtime)


def test_expired_lease_is_taken_over_without_rerunning_steps(db_url: str, clock: FakeClock) -> None:
    """A worker that died mid-run loses its lease; another finishes from the checkpoint."""
    calls: list[str] = []
    engines = [Engine(db_url, clock=clock, lease="10s") for _ in range(2)]
    try:
        for engine in engines:

            @engine.workflow("two-steps")
            def two_steps(ctx: Context) -> list[int]:
                a = ctx.step("a", lambda: calls.append("a") or 1)
                b = ctx.step("b", lambda: calls.append("b") or 2)
                return [a, b]

        dead, alive = engines
        handle = dead.start("two-steps")
        (claim,) = dead._runtime.claim(1)
        from tickwork._store import StepRecord

        dead._runtime.store.runs.record_step(
            run_id=handle.id,
            token=claim.lease_token,
            step=StepRecord("step", "a", 1, "completed", "1", None, 1, 0, 0),
            now_ms=dead._runtime.now_ms(),
            lease_ms=10_000,
        )
        assert alive.run_until_idle() == 0  # the lease is still live
        clock.advance("10s")
        assert alive.run_until_idle() == 1
        assert handle.result() == [1, 2]
        assert calls == ["b"]
    finally:
        for engine in engines:
            engine.close()


def test_result_times_out_while_the_run_is_unfinished(engine: Engine) -> None:
    @engine.workflow()
    def wf(ctx: Context) -> None:
        return None

    handle = engine.start(wf)
    with pytest.raises(RunTimeout) as info:
        handle.result(timeout=0.01)
    assert info.value.status == "pending"


def test_background_worker_executes_runs_and_result_waits(db_url: str) -> None:
    with Engine(db_url) as engine:

        @engine.workflow()
        def wf(ctx: Context, input: int) -> int:
            return ctx.step("double", lambda: input * 2)

        with engine.worker(threads=2):
            handles = [engine.start(wf, n) for n in range(5)]
            assert [h.result(timeout=60) for h in handles] == [0, 2, 4, 6, 8]


def test_background_worker_wakes_when_a_fake_clock_moves(db_url: str, clock: FakeClock) -> None:
    done = threading.Event()
    with Engine(db_url, clock=clock) as engine:
        engine.on_run_completed(lambda run: done.set())

        @engine.workflow()
        def wf(ctx: Context) -> None:
            ctx.sleep("nap", "1h")

        with engine.worker(poll_interval="1h"):
            handle = engine.start(wf)
            while handle.status() is not RunStatus.SLEEPING:
                done.wait(0.01)
            clock.advance("1h")
            assert done.wait(60), "the worker did not wake when the clock moved"
        assert handle.status() is RunStatus.COMPLETED


def test_hooks_see_started_and_completed_runs(engine: Engine) -> None:
    seen: list[tuple[str, RunStatus]] = []
    engine.on_run_started(lambda run: seen.append(("started", run.status)))
    engine.on_run_completed(lambda run: seen.append(("completed", run.status)))

    @engine.workflow()
    def wf(ctx: Context) -> None:
        return None

    engine.start(wf)
    engine.run_until_idle()
    assert seen == [("started", RunStatus.RUNNING), ("completed", RunStatus.COMPLETED)]


def test_failing_hook_is_reported_to_on_error_and_the_run_still_completes(
    db_url: str, clock: FakeClock
) -> None:
    errors: list[tuple[BaseException, dict[str, Any]]] = []
    with Engine(db_url, clock=clock, on_error=lambda e, i: errors.append((e, i))) as engine:

        @engine.on_run_completed
        def broken(run: RunInfo) -> None:
            raise RuntimeError("hook broke")

        @engine.workflow()
        def wf(ctx: Context) -> int:
            return 1

        handle = engine.start(wf)
        engine.run_until_idle()
        assert handle.result() == 1
    ((error, info),) = errors
    assert str(error) == "hook broke"
    assert info["run_id"] == handle.id


def test_error_without_hook_is_logged(engine: Engine, caplog: pytest.LogCaptureFixture) -> None:
    engine.on_run_completed(lambda run: 1 / 0)

    @engine.workflow()
    def wf(ctx: Context) -> int:
        return 1

    engine.start(wf)
    with caplog.at_level("ERROR", logger="tickwork"):
        engine.run_until_idle()
    assert any("ZeroDivisionError" in (r.exc_text or "") for r in caplog.records)


def test_tick_without_schedules_starts_nothing(engine: Engine) -> None:
    assert engine.tick() == []


def test_list_runs_before_pages_and_rejects_a_non_id(engine: Engine, clock: FakeClock) -> None:
    @engine.workflow()
    def noop(ctx: Context) -> None:
        return None

    for n in range(3):
        engine.start(noop, run_id=f"r{n}")
        clock.advance("1s")
    assert [r.id for r in engine.list_runs(before="r2")] == ["r1", "r0"]
    for bad in ("", 7):
        with pytest.raises(ConfigError):
            engine.list_runs(before=bad)  # type: ignore[arg-type]


def test_async_twins_match_the_sync_api(engine: Engine) -> None:
    @engine.workflow()
    def wf(ctx: Context, input: int) -> int:
        return input + 1

    async def scenario() -> tuple[Any, ...]:
        handle = await engine.start_async(wf, 1, run_id="async")
        engine.run_until_idle()
        run = await engine.get_run_async("async")
        runs = await engine.list_runs_async(status="completed")
        return (
            handle.id,
            run,
            [r.id for r in runs],
            await handle.result_async(),
            (await engine.cancel_async("async")),
        )

    run_id, run, ids, result, cancelled = asyncio.run(scenario())
    assert (run_id, ids, result, cancelled) == ("async", ["async"], 2, False)
    assert run is not None and run.status is RunStatus.COMPLETED


def test_run_hooks_get_the_run_as_stored(engine: Engine) -> None:
    """The run handed to the started, completed and failed hooks is built without
    reading it back (run_rows.ended_run): every field must still be what is stored."""
    seen: dict[str, RunInfo] = {}
    engine.on_run_started(lambda run: seen.setdefault(f"started {run.input}", run))
    engine.on_run_completed(lambda run: seen.setdefault(f"ended {run.input}", run))
    engine.on_run_failed(lambda run: seen.setdefault(f"ended {run.input}", run))

    @engine.workflow()
    def wf(ctx: Context, input: str) -> dict[str, str]:
        ctx.step("one", lambda: input)
        if input == "fail":
            raise ValueError("asked to")
        return {"got": input}

    ok = engine.start(wf, "ok", priority=3)
    failed = engine.start(wf, "fail")
    engine.run_until_idle()
    for handle, name in ((ok, "ok"), (failed, "fail")):
        stored = engine.get_run(handle.id)
        assert stored is not None and seen[f"ended {name}"] == stored
        assert seen[f"started {name}"].started_at == stored.started_at
    assert seen["ended ok"].result == {"got": "ok"} and seen["ended ok"].priority == 3
    assert seen["ended fail"].status is RunStatus.FAILED
