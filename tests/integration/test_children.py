"""Child runs, fan-out and fan-in (DESIGN §10) on both backends with a FakeClock: a
workflow starts workflows and waits for them, exactly once, counted not scanned."""

from __future__ import annotations

from typing import Any

import pytest

from tickwork import (
    ChildRunFailed,
    ConfigError,
    Context,
    Engine,
    Outcome,
    Retry,
    RunStatus,
    UnknownWorkflowError,
    WaitTimedOut,
)
from tickwork.testing import FakeClock


def add_resize(engine: Engine, calls: list[Any] | None = None) -> None:
    @engine.workflow("resize")
    def resize(ctx: Context, input: dict[str, Any]) -> dict[str, Any]:
        if calls is not None:
            calls.append(input)
        if input.get("fail"):
            raise ValueError(f"cannot resize {input['img']}")
        return {"small": input["img"] + ".small"}


def test_a_parent_starts_a_child_waits_and_gets_its_result(engine: Engine) -> None:
    add_resize(engine)

    @engine.workflow("album")
    def album(ctx: Context, input: dict[str, Any]) -> Any:
        cover = ctx.start("resize", {"img": input["cover"]}, key="cover")
        return {"cover": ctx.wait(cover)}

    handle = engine.start("album", {"cover": "c.png"})
    engine.run_until_idle()
    assert handle.result() == {"cover": {"small": "c.png.small"}}
    child = engine.get_run(f"{handle.id}/cover")
    assert child is not None and child.parent_id == handle.id
    assert child.status is RunStatus.COMPLETED
    parent = engine.get_run(handle.id)
    assert parent is not None and parent.parent_id is None


def test_the_parent_waits_freed_and_is_woken_once_by_its_last_child(
    engine: Engine, clock: FakeClock
) -> None:
    add_resize(engine)
    entered: list[int] = []

    @engine.workflow("album")
    def album(ctx: Context, input: Any) -> Any:
        entered.append(1)
        handles = [ctx.start("resize", {"img": f"{n}.png"}) for n in range(3)]
        return ctx.wait(handles)

    handle = engine.start("album")
    engine.run_until_idle()
    # the parent ran twice: once to start its children and wait, once woken by the last
    assert len(entered) == 2
    assert handle.result() == [{"small": f"{n}.png.small"} for n in range(3)]
    ids = [f"{handle.id}/resize", f"{handle.id}/resize#2", f"{handle.id}/resize#3"]
    assert [engine.get_run(i).status for i in ids] == [RunStatus.COMPLETED] * 3  # type: ignore[union-attr]


def test_a_failed_child_raises_child_run_failed_in_the_parent(engine: Engine) -> None:
    add_resize(engine)

    @engine.workflow("album")
    def album(ctx: Context, input: Any) -> Any:
        ok = ctx.start("resize", {"img": "a"})
        bad = ctx.start("resize", {"img": "b", "fail": True})
        try:
            ctx.wait([ok, bad])
        except ChildRunFailed as exc:
            return {"run_id": exc.run_id, "status": exc.status, "error": exc.error}
        return "no error"

    handle = engine.start("album")
    engine.run_until_idle()
    got = handle.result()
    assert got["run_id"] == f"{handle.id}/resize#2" and got["status"] == "failed"
    assert "cannot resize b" in got["error"]


def test_settle_returns_every_outcome_in_order(engine: Engine) -> None:
    add_resize(engine)

    @engine.workflow("album")
    def album(ctx: Context, input: Any) -> Any:
        handles = [ctx.start("resize", {"img": "a"}), ctx.start("resize", {"img": "b", "fail": 1})]
        outcomes = ctx.wait(handles, settle=True)
        assert all(isinstance(o, Outcome) for o in outcomes)
        return [(o.status.value, o.result, o.error is not None) for o in outcomes]

    handle = engine.start("album")
    engine.run_until_idle()
    assert handle.result() == [["completed", {"small": "a.small"}, False], ["failed", None, True]]


def test_a_child_retried_by_its_own_retry_is_seen_only_once_it_ends(
    engine: Engine, clock: FakeClock
) -> None:
    tries: list[int] = []

    @engine.workflow("flaky", retry=Retry(max_attempts=3, backoff="1s"))
    def flaky(ctx: Context, input: Any) -> str:
        tries.append(ctx.attempt)
        if ctx.attempt < 3:
            raise ValueError("not yet")
        return "done"

    @engine.workflow("parent")
    def parent(ctx: Context, input: Any) -> Any:
        return ctx.wait(ctx.start("flaky"))

    handle = engine.start("parent")
    engine.run_until_idle()
    for _ in range(3):
        clock.advance("5s")
        engine.run_until_idle()
    assert tries == [1, 2, 3]
    assert handle.result() == "done"


def test_a_wait_past_its_timeout_raises_wait_timed_out_and_the_child_goes_on(
    engine: Engine, clock: FakeClock
) -> None:
    @engine.workflow("slow")
    def slow(ctx: Context, input: Any) -> str:
        ctx.sleep("nap", "1h")
        return "late"

    @engine.workflow("parent")
    def parent(ctx: Context, input: Any) -> Any:
        child = ctx.start("slow")
        try:
            return ctx.wait(child, timeout="10m")
        except WaitTimedOut as exc:
            return {"timed_out": exc.run_ids}

    handle = engine.start("parent")
    engine.run_until_idle()
    assert engine.get_run(handle.id).status is RunStatus.WAITING  # type: ignore[union-attr]
    clock.advance("11m")
    engine.run_until_idle()
    assert handle.result() == {"timed_out": [f"{handle.id}/slow"]}
    clock.advance("1h")
    engine.run_until_idle()
    assert engine.get_run(f"{handle.id}/slow").status is RunStatus.COMPLETED  # type: ignore[union-attr]


def test_map_starts_a_child_per_input_and_returns_results_in_order(engine: Engine) -> None:
    add_resize(engine)

    @engine.workflow("album")
    def album(ctx: Context, input: list[str]) -> Any:
        return ctx.map("resize", [{"img": i} for i in input])

    imgs = [f"{n}.png" for n in range(25)]
    handle = engine.start("album", imgs)
    engine.run_until_idle()
    assert handle.result() == [{"small": i + ".small"} for i in imgs]
    children = [engine.get_run(f"{handle.id}/resize/{n}") for n in range(25)]
    assert all(c is not None and c.parent_id == handle.id for c in children)


def test_map_under_max_parallel_runs_every_child_and_keeps_the_order(
    engine: Engine, clock: FakeClock
) -> None:
    # The window itself (never more than max_parallel runnable) is the store's:
    # tests/contract/test_children_contract.py.
    ran: list[int] = []

    @engine.workflow("work")
    def work(ctx: Context, n: int) -> int:
        ran.append(n)
        return n * 2

    @engine.workflow("fan")
    def fan(ctx: Context, input: Any) -> Any:
        return ctx.map("work", list(range(10)), max_parallel=3)

    handle = engine.start("fan")
    engine.run_until_idle()
    assert handle.result() == [n * 2 for n in range(10)]
    assert sorted(ran) == list(range(10))
    held = [r for r in engine.list_runs(parent=handle.id) if r.status is not RunStatus.COMPLETED]
    assert held == []


def test_grandchildren_and_a_replayed_parent_start_each_child_once(engine: Engine) -> None:
    calls: list[Any] = []
    add_resize(engine, calls)

    @engine.workflow("middle")
    def middle(ctx: Context, input: Any) -> Any:
        return ctx.map("resize", [{"img": "x"}, {"img": "y"}])

    @engine.workflow("top")
    def top(ctx: Context, input: Any) -> Any:
        first = ctx.start("middle", key="one")
        second = ctx.start("middle", key="two")
        return ctx.wait([first, second])

    handle = engine.start("top")
    engine.run_until_idle()
    assert handle.result() == [[{"small": "x.small"}, {"small": "y.small"}]] * 2
    assert len(calls) == 4
    grandchild = engine.get_run(f"{handle.id}/one/resize/1")
    assert grandchild is not None and grandchild.parent_id == f"{handle.id}/one"


def test_bad_input_is_refused_before_anything_is_stored(engine: Engine) -> None:
    add_resize(engine)
    refused: list[str] = []

    def attempt(call: Any) -> None:
        try:
            call()
        except (ConfigError, UnknownWorkflowError) as exc:
            refused.append(type(exc).__name__)

    @engine.workflow("parent")
    def parent(ctx: Context, input: Any) -> str:
        attempt(lambda: ctx.start("nope"))
        attempt(lambda: ctx.start("resize", key="a\x00b"))
        attempt(lambda: ctx.start("resize", key="a/b"))
        attempt(lambda: ctx.map("resize", [{"img": "a"}], max_parallel=0))
        attempt(lambda: ctx.map("resize", []))
        attempt(lambda: ctx.map("resize", [{"img": "a"}] * 100_001))
        attempt(lambda: ctx.map("nope", [1]))
        return "ok"

    @engine.workflow("other")
    def other(ctx: Context, input: Any) -> str:
        stranger = engine.start("resize", {"img": "z"})
        try:
            ctx.wait(stranger)
        except ConfigError:
            return "refused"
        return "waited"

    handle = engine.start("parent")
    engine.run_until_idle()
    assert handle.result() == "ok"
    assert refused == ["UnknownWorkflowError", *["ConfigError"] * 5, "UnknownWorkflowError"]
    assert engine.list_runs(workflow="resize") == []
    waiting_on_a_stranger = engine.start("other")
    engine.run_until_idle()
    assert waiting_on_a_stranger.result() == "refused"


@pytest.mark.parametrize("settle", [False, True])
def test_a_cancelled_child_counts_as_ended(engine: Engine, settle: bool, clock: FakeClock) -> None:
    @engine.workflow("slow")
    def slow(ctx: Context, input: Any) -> str:
        ctx.sleep("nap", "1h")
        return "late"

    @engine.workflow("parent")
    def parent(ctx: Context, input: Any) -> Any:
        try:
            got = ctx.wait(ctx.start("slow"), settle=settle)
        except ChildRunFailed as exc:
            return exc.status
        return got.status.value

    handle = engine.start("parent")
    engine.run_until_idle()
    assert engine.cancel(f"{handle.id}/slow")
    engine.run_until_idle()
    assert handle.result() == "cancelled"


def test_parallel_async_steps_run_at_once_and_replay_by_their_keys(
    engine: Engine, clock: FakeClock
) -> None:
    import asyncio

    calls: list[str] = []
    order: list[str] = []

    @engine.workflow("fan")
    async def fan(ctx: Context, input: Any) -> Any:
        b_done = asyncio.Event()

        async def a() -> str:
            calls.append("a")
            await b_done.wait()  # ends after b: both were running at once
            order.append("a")
            return "A"

        async def b() -> str:
            calls.append("b")
            order.append("b")
            b_done.set()
            return "B"

        got = await asyncio.gather(ctx.step("a", a), ctx.step("b", b))
        await ctx.sleep("after", "1m")  # the run leaves here and is replayed later
        return got

    handle = engine.start("fan")
    engine.run_until_idle()
    assert order == ["b", "a"] and engine.get_run(handle.id).status is RunStatus.SLEEPING  # type: ignore[union-attr]
    clock.advance("2m")
    engine.run_until_idle()
    assert handle.result() == ["A", "B"]
    assert calls == ["a", "b"]  # the replay ran neither again


def test_cancelling_a_waiting_parent_cancels_its_unfinished_children(
    engine: Engine, clock: FakeClock
) -> None:
    @engine.workflow("slow")
    def slow(ctx: Context, input: Any) -> str:
        ctx.sleep("nap", "1h")
        return "late"

    @engine.workflow("quick")
    def quick(ctx: Context, input: Any) -> str:
        return "soon"

    @engine.workflow("parent")
    def parent(ctx: Context, input: Any) -> Any:
        done = ctx.start("quick")
        ctx.wait(done)
        return ctx.map("slow", [1, 2, 3])

    handle = engine.start("parent")
    engine.run_until_idle()
    assert engine.get_run(handle.id).status is RunStatus.WAITING  # type: ignore[union-attr]
    assert engine.cancel(handle.id)
    children = {r.id: r.status for r in engine.list_runs(parent=handle.id)}
    assert children == {
        f"{handle.id}/quick": RunStatus.COMPLETED,  # ended before: left as it was
        **{f"{handle.id}/slow/{n}": RunStatus.CANCELLED for n in range(3)},
    }
    assert engine.get_run(handle.id).status is RunStatus.CANCELLED  # type: ignore[union-attr]
    clock.advance("2h")
    assert engine.run_until_idle() == 0


def test_a_parent_that_ends_without_waiting_leaves_its_children_running(
    engine: Engine, clock: FakeClock
) -> None:
    @engine.workflow("slow")
    def slow(ctx: Context, input: Any) -> str:
        ctx.sleep("nap", "1h")
        return "late"

    @engine.workflow("parent")
    def parent(ctx: Context, input: Any) -> str:
        ctx.start("slow")
        return "left"

    handle = engine.start("parent")
    engine.run_until_idle()
    assert handle.result() == "left"
    clock.advance("2h")
    engine.run_until_idle()
    assert engine.get_run(f"{handle.id}/slow").status is RunStatus.COMPLETED  # type: ignore[union-attr]


def test_a_parent_retried_after_a_failure_keeps_its_children(
    engine: Engine, clock: FakeClock
) -> None:
    calls: list[Any] = []
    add_resize(engine, calls)
    attempts: list[int] = []

    @engine.workflow("album", retry=Retry(max_attempts=2, backoff="1s"))
    def album(ctx: Context, input: Any) -> Any:
        attempts.append(ctx.attempt)
        got = ctx.map("resize", [{"img": "a"}, {"img": "b"}])
        if ctx.attempt == 1:
            raise RuntimeError("a bug after the children ended")
        return got

    handle = engine.start("album")
    engine.run_until_idle()
    clock.advance("2s")
    engine.run_until_idle()
    assert attempts == [1, 1, 2] and handle.result() == [{"small": "a.small"}, {"small": "b.small"}]
    assert len(calls) == 2  # the retry started no second child


def test_a_child_started_and_a_parent_woken_are_logged_at_info(
    engine: Engine, caplog: pytest.LogCaptureFixture
) -> None:
    import logging

    add_resize(engine)

    @engine.workflow("album")
    def album(ctx: Context, input: Any) -> Any:
        return ctx.wait(ctx.start("resize", {"img": "a"}, key="cover"))

    caplog.set_level(logging.INFO, logger="tickwork.runs")
    handle = engine.start("album", run_id="al")
    engine.run_until_idle()
    assert handle.result() == {"small": "a.small"}
    said = [r.getMessage() for r in caplog.records if r.name == "tickwork.runs"]
    assert "run al started child run al/cover" in said
    assert "run al woken: its 1 child run(s) ended" in said


@pytest.mark.filterwarnings("error")  # no "coroutine was never awaited" when it suspends
def test_gathered_waits_follow_one_another_and_return_both(engine: Engine) -> None:
    import asyncio

    add_resize(engine)

    @engine.workflow("both")
    async def both(ctx: Context, input: Any) -> Any:
        a = await ctx.start("resize", {"img": "a"})
        b = await ctx.start("resize", {"img": "b"})
        return list(await asyncio.gather(ctx.wait(a), ctx.wait(b)))

    handle = engine.start("both")
    engine.run_until_idle()
    assert handle.result() == [{"small": "a.small"}, {"small": "b.small"}]
