"""``max_recoveries``: a step that keeps killing its worker ends its run, a lost worker
below the limit does not (DESIGN §1, Durability).

A worker dying inside a step is played in-process: the step raises ``WorkerDied``, a
``BaseException`` no layer of tickwork catches, so the execution stops where it is and
writes nothing more, its lease still held, as after a SIGKILL. The lease then expires on
the fake clock and the next ``run_until_idle`` takes the run over.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

import pytest

from tickwork import Context, Engine, Retry, RunInfo, RunStatus
from tickwork.errors import ConfigError
from tickwork.testing import FakeClock

LEASE = "30s"


class WorkerDied(BaseException):
    """The worker process died here (os._exit, OOM kill, segfault)."""


def lose_workers(engine: Engine, clock: FakeClock, run_id: str, most: int = 20) -> int:
    """Let workers execute the run, each dying where the workflow dies, its lease then
    expiring, until the run ends; how many workers it cost."""
    lost = 0
    for _ in range(most):
        try:
            engine.run_until_idle()
        except WorkerDied:
            lost += 1
            clock.advance(LEASE)
            continue
        run = engine.get_run(run_id)
        assert run is not None
        if run.status in (RunStatus.COMPLETED, RunStatus.FAILED):
            return lost
    raise AssertionError(f"run {run_id} still unfinished after {most} workers")


def test_a_step_that_keeps_killing_its_worker_fails_the_run_naming_it(
    engine: Engine, clock: FakeClock
) -> None:
    executions: Counter[str] = Counter()
    failed: list[RunInfo] = []
    errors: list[tuple[BaseException, dict[str, Any]]] = []
    engine.on_run_failed(failed.append)
    engine._runtime.hooks.on_error = lambda error, info: errors.append((error, info))

    def prepare() -> int:
        executions["prepare"] += 1
        return 1

    def crash() -> None:
        executions["crash"] += 1
        raise WorkerDied

    # A retry policy does not apply: a lost worker is not a failed attempt.
    @engine.workflow("crash-loop", max_recoveries=3, retry=Retry(max_attempts=5))
    def crash_loop(ctx: Context) -> None:
        ctx.step("prepare", prepare)
        ctx.step("crash", crash)

    run_id = engine.start("crash-loop").id
    assert lose_workers(engine, clock, run_id) == 3

    run = engine.get_run(run_id)
    assert run is not None and run.status is RunStatus.FAILED and run.attempt == 1
    assert run.error is not None
    assert "step 'crash' lost its worker 3 times in a row (max_recoveries=3)" in run.error
    assert executions == {"prepare": 1, "crash": 3}  # not a fourth time
    assert [r.id for r in failed] == [run_id] and failed[0].error == run.error
    ((error, info),) = errors
    assert "step 'crash'" in str(error) and info["run_id"] == run_id
    assert engine.run_until_idle() == 0  # ended for good


def test_the_default_is_five_lost_workers(engine: Engine, clock: FakeClock) -> None:
    @engine.workflow("crash-loop")
    def crash_loop(ctx: Context) -> None:
        ctx.step("crash", _die)

    run_id = engine.start("crash-loop").id
    assert lose_workers(engine, clock, run_id) == 5
    run = engine.get_run(run_id)
    assert run is not None and run.error is not None
    assert "lost its worker 5 times in a row (max_recoveries=5)" in run.error


def test_workers_lost_below_the_limit_do_not_fail_the_run(engine: Engine, clock: FakeClock) -> None:
    """SIGKILLed workers (a deploy) while a step runs: the run completes, same attempt."""
    tries = Counter[str]()

    def flaky_host() -> str:
        tries["step"] += 1
        if tries["step"] <= 2:
            raise WorkerDied
        return "done"

    @engine.workflow("survivor", max_recoveries=3)
    def survivor(ctx: Context) -> str:
        return str(ctx.step("step", flaky_host))

    handle = engine.start("survivor")
    assert lose_workers(engine, clock, handle.id) == 2
    assert handle.result(timeout=1) == "done"
    run = engine.get_run(handle.id)
    assert run is not None and run.attempt == 1 and run.error is None


def test_progress_starts_the_count_again(engine: Engine, clock: FakeClock) -> None:
    """Every step kills its worker once, and one step twice: more workers lost in all
    than max_recoveries, never that many in a row at one step, so the run completes."""
    died: Counter[str] = Counter()
    kills = {"a": 1, "b": 2, "c": 1, "d": 1}

    def work(name: str) -> str:
        if died[name] < kills[name]:
            died[name] += 1
            raise WorkerDied
        return name

    @engine.workflow("many-deaths", max_recoveries=3)
    def many_deaths(ctx: Context) -> list[str]:
        return [ctx.step(name, work, name) for name in kills]

    handle = engine.start("many-deaths")
    assert lose_workers(engine, clock, handle.id) == 5
    assert handle.result(timeout=1) == ["a", "b", "c", "d"]


def test_a_released_lease_is_not_a_lost_worker(engine: Engine, clock: FakeClock) -> None:
    """A draining worker's released run, taken by the next worker, costs nothing."""

    @engine.workflow("released", max_recoveries=1)
    def released(ctx: Context) -> str:
        return str(ctx.step("step", lambda: "done"))

    handle = engine.start("released")
    for _ in range(3):  # claimed and handed back at shutdown, three times over
        (claimed,) = engine._runtime.claim(1)
        engine._runtime.store.runs.release_leases(
            tokens=[claimed.lease_token], now_ms=engine._runtime.now_ms()
        )
    assert engine.run_until_idle() == 1
    assert handle.result(timeout=1) == "done"


def test_workers_lost_outside_any_step_fail_the_run_too(engine: Engine, clock: FakeClock) -> None:
    """A workflow that kills its worker between steps never reaches a step to blame: one
    worker past the limit, the run fails, saying after which checkpoint."""

    @engine.workflow("between-steps", max_recoveries=2)
    def between_steps(ctx: Context) -> None:
        ctx.step("one", lambda: 1)
        raise WorkerDied
        ctx.step("two", lambda: 2)  # never reached

    run_id = engine.start("between-steps").id
    assert lose_workers(engine, clock, run_id) == 3
    run = engine.get_run(run_id)
    assert run is not None and run.status is RunStatus.FAILED and run.error is not None
    assert "after checkpoint 'one'" in run.error
    assert "lost its worker 3 times in a row (max_recoveries=2)" in run.error


def test_none_sets_no_limit(engine: Engine, clock: FakeClock) -> None:
    tries = Counter[str]()

    def dies_seven_times() -> int:
        tries["step"] += 1
        if tries["step"] <= 7:
            raise WorkerDied
        return tries["step"]

    @engine.workflow("unbounded", max_recoveries=None)
    def unbounded(ctx: Context) -> int:
        return int(ctx.step("step", dies_seven_times))

    handle = engine.start("unbounded")
    assert lose_workers(engine, clock, handle.id) == 7
    assert handle.result(timeout=1) == 8


def test_async_workflow_is_failed_by_its_step_too(engine: Engine, clock: FakeClock) -> None:
    @engine.workflow("async-crash", max_recoveries=2)
    async def async_crash(ctx: Context) -> None:
        await ctx.step("crash", _die)

    run_id = engine.start("async-crash").id
    assert lose_workers(engine, clock, run_id) == 2
    run = engine.get_run(run_id)
    assert run is not None and run.status is RunStatus.FAILED and run.error is not None
    assert "step 'crash' lost its worker 2 times" in run.error


@pytest.mark.parametrize("value", [0, -1, 10_001, True, 2.5, "5"])
def test_max_recoveries_must_be_a_positive_int_or_none(engine: Engine, value: object) -> None:
    with pytest.raises(ConfigError, match="max_recoveries"):
        engine.workflow("bad", max_recoveries=value)  # type: ignore[arg-type]
    assert "bad" not in engine.workflows()


def _die() -> None:
    raise WorkerDied
