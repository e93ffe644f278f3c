"""``Engine("sqlite://")`` (or ``sqlite:///:memory:``): a private store in memory, for a
user's own tests, with no file to create or clean up.

It works with ``run_until_idle()`` and with a worker on background threads, and each
engine has a store of its own.
"""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from tickwork import Context, Engine, RunStatus
from tickwork.testing import FakeClock

MEMORY_URLS = ["sqlite://", "sqlite:///:memory:"]


def register(engine: Engine) -> None:
    @engine.workflow("report")
    def report(ctx: Context, input: dict[str, int]) -> dict[str, int]:
        rows = ctx.step("gather", lambda: list(range(input["rows"])))
        ctx.sleep("cool-down", "10m")
        total = ctx.step("sum", lambda: sum(rows))
        return {"rows": len(rows), "total": total}

    @engine.workflow("quick")
    def quick(ctx: Context, input: int) -> int:
        return ctx.step("double", lambda: input * 2)


@pytest.mark.parametrize("url", MEMORY_URLS)
def test_run_until_idle_runs_a_workflow_with_steps_and_a_sleep(url: str) -> None:
    clock = FakeClock(datetime(2026, 1, 1, tzinfo=UTC))
    with Engine(url, clock=clock) as engine:
        register(engine)
        handle = engine.start("report", {"rows": 4})
        engine.run_until_idle()
        assert handle.status() is RunStatus.SLEEPING
        clock.advance("10m")
        engine.run_until_idle()
        assert handle.result(timeout=1) == {"rows": 4, "total": 6}
        steps = engine.list_steps(handle.id)
        assert [s.name for s in steps if s.kind == "step"] == ["gather", "sum"]


@pytest.mark.parametrize("url", MEMORY_URLS)
def test_a_worker_on_threads_shares_the_store(url: str) -> None:
    with Engine(url) as engine:
        register(engine)
        with engine.worker(threads=4, poll_interval="50ms"):
            handles = [engine.start("quick", n) for n in range(40)]
            assert [h.result(timeout=30) for h in handles] == [n * 2 for n in range(40)]
        assert len(engine.list_runs(status=RunStatus.COMPLETED)) == 40


def test_two_engines_in_memory_do_not_see_each_others_runs() -> None:
    with Engine("sqlite://") as first, Engine("sqlite:///:memory:") as second:
        for engine in (first, second):
            register(engine)
        ran = first.start("quick", 1, run_id="same-id")
        first.run_until_idle()
        assert second.get_run("same-id") is None
        assert second.list_runs() == []
        other = second.start("quick", 2, run_id="same-id")  # its own, not first's
        second.run_until_idle()
        assert (ran.result(timeout=1), other.result(timeout=1)) == (2, 4)
        first.schedule("quick", every="1h", input=3, key="hourly")
        assert second.get_schedule("hourly") is None


def test_a_new_engine_in_memory_starts_empty() -> None:
    with Engine("sqlite://") as engine:
        register(engine)
        engine.start("quick", 1)
    with Engine("sqlite://") as again:
        assert again.list_runs() == []
