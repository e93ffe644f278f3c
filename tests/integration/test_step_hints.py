"""The step mistakes a newcomer makes end the run with an error that says the fix: a
result passed to ``ctx.step`` instead of a function, an ``async def`` workflow that forgets
``await`` on ``ctx.step``/``ctx.sleep``; and an ``async def`` step works from a sync
workflow."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime
from typing import Any

import pytest

from tickwork import Context, Engine, RunStatus
from tickwork.testing import FakeClock

START = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)


@pytest.fixture
def engine() -> Iterator[Engine]:
    with Engine("sqlite://", clock=FakeClock(START)) as engine:
        yield engine


def fetch(n: int = 3) -> list[int]:
    return list(range(n))


def ended(engine: Engine, workflow: str) -> Any:
    """Start ``workflow`` and execute it; the run as stored."""
    handle = engine.start(workflow)
    engine.run_until_idle()
    return engine.get_run(handle.id)


def test_a_result_passed_instead_of_a_function_fails_the_run_saying_how_to_write_it(
    engine: Engine,
) -> None:
    """``ctx.step("fetch", fetch())`` fails at the call with a ConfigError that names the
    step, the type it got and the two right ways to write it; nothing is recorded."""

    @engine.workflow("eager")
    def eager(ctx: Context) -> Any:
        return ctx.step("fetch", fetch())

    run = ended(engine, "eager")
    assert run.status is RunStatus.FAILED
    assert run.error == (
        "ConfigError: ctx.step('fetch', ...) needs a function to call, got a list (the "
        "result of calling it?): write ctx.step('fetch', f) or ctx.step('fetch', f, arg)"
    )
    assert engine.list_steps(run.id) == []


def test_an_int_or_none_is_named_with_its_article(engine: Engine) -> None:
    """The message says "an int" and "None" as a person would."""

    @engine.workflow("count")
    def count(ctx: Context) -> Any:
        return ctx.step("n", 3)

    @engine.workflow("nothing")
    def nothing(ctx: Context) -> Any:
        return ctx.step("n", print("x"))

    assert "got an int (the result of calling it?)" in ended(engine, "count").error
    assert "got None (the result of calling it?)" in ended(engine, "nothing").error


def test_an_async_workflow_that_forgets_await_on_a_step_fails_naming_the_step(
    engine: Engine,
) -> None:
    """The un-awaited step never ran: the run fails (rather than going on with a coroutine
    for the step's result) with an error naming the step and saying ``await ctx.step``."""
    ran: list[int] = []

    def work() -> int:
        ran.append(1)
        return 1

    @engine.workflow("forgetful")
    async def forgetful(ctx: Context) -> Any:
        ctx.step("work", work)
        return "done"

    run = ended(engine, "forgetful")
    assert run.status is RunStatus.FAILED
    assert "ctx.step('work', ...) was never awaited" in run.error
    assert "write await ctx.step('work', ...)" in run.error
    assert ran == []


def test_a_forgotten_await_is_named_before_the_error_it_caused(engine: Engine) -> None:
    """A workflow that used the coroutine as the step's result (``rows[0]``) fails with
    the forgotten await, not with "'coroutine' object is not subscriptable"."""

    @engine.workflow("indexing")
    async def indexing(ctx: Context) -> Any:
        rows = ctx.step("fetch", fetch)
        return rows[0]

    run = ended(engine, "indexing")
    assert run.status is RunStatus.FAILED
    assert run.error.startswith("ConfigError: ctx.step('fetch', ...) was never awaited")


def test_an_async_workflow_that_forgets_await_on_a_due_sleep_fails_naming_it(
    engine: Engine,
) -> None:
    """A sleep already over when the (resumed) workflow reaches it returns a coroutine;
    not awaiting it is named too."""

    @engine.workflow("napper")
    async def napper(ctx: Context) -> str:
        ctx.sleep_until("nap", START)  # already over
        return "done"

    run = ended(engine, "napper")
    assert run.status is RunStatus.FAILED
    assert "ctx.sleep_until('nap', ...) was never awaited" in run.error


def test_an_async_workflow_that_awaits_completes(engine: Engine) -> None:
    """The same workflows with ``await`` complete: the check finds nothing to say."""

    @engine.workflow("careful")
    async def careful(ctx: Context) -> Any:
        rows = await ctx.step("fetch", fetch)
        await ctx.sleep_until("nap", START)
        return rows[0]

    run = ended(engine, "careful")
    assert (run.status, run.result) == (RunStatus.COMPLETED, 0)


def test_an_async_step_function_called_from_a_sync_workflow_is_awaited(engine: Engine) -> None:
    """``ctx.step("x", an_async_def)`` in a plain workflow stores the step's value, not a
    coroutine."""

    async def fetch_later() -> list[int]:
        return [7, 8]

    @engine.workflow("plain")
    def plain(ctx: Context) -> Any:
        return ctx.step("fetch", fetch_later)

    run = ended(engine, "plain")
    assert (run.status, run.result) == (RunStatus.COMPLETED, [7, 8])
