"""What a person on call reads of failures (DESIGN §8): a step's failed tries keep their
error and traceback (the last ten, bounded), a step that succeeded after failing keeps
them too, and a run that failed for good keeps its traceback — in ``list_steps`` and
``get_run``, the API, ``tickwork runs show`` and the dashboard."""

from __future__ import annotations

import re
from collections.abc import Iterator
from contextlib import ExitStack

import pytest
from click.testing import CliRunner
from tests.browser import Browser

from tickwork import Context, Engine, Retry, RunStatus
from tickwork.cli import main
from tickwork.server import create_app
from tickwork.testing import FakeClock

FLAKY = Retry(max_attempts=3, backoff="1s")


@pytest.fixture
def app(engine: Engine) -> Engine:
    calls = {"flaky": 0}

    def flaky_fetch() -> str:
        calls["flaky"] += 1
        if calls["flaky"] < 3:
            raise RuntimeError(f"flaky {calls['flaky']}")
        return "rows"

    def always_down() -> None:
        raise ConnectionError("the warehouse is down")

    def deep(n: int) -> None:
        if n:
            deep(n - 1)
        raise ValueError("x" * 9000)

    @engine.workflow()
    def recovers(ctx: Context) -> str:
        return str(ctx.step("fetch", flaky_fetch, retry=FLAKY))

    @engine.workflow()
    def gives_up(ctx: Context) -> None:
        ctx.step("load", always_down, retry=Retry(max_attempts=12, backoff="1s", factor=1))

    @engine.workflow()
    def breaks(ctx: Context) -> None:
        ctx.step("fine", lambda: 1)
        raise KeyError("missing-column")

    @engine.workflow()
    def deep_trace(ctx: Context) -> None:
        ctx.step("deep", lambda: deep(200))

    return engine


def drain(engine: Engine, clock: FakeClock, rounds: int = 20) -> None:
    for _ in range(rounds):
        engine.run_until_idle()
        clock.advance("2s")


def test_a_step_that_failed_twice_then_succeeded_keeps_both_errors(
    app: Engine, clock: FakeClock
) -> None:
    run_id = app.start("recovers").id
    drain(app, clock)
    (step,) = app.list_steps(run_id)
    assert (step.status, step.attempts, step.result) == ("completed", 3, "rows")
    assert [(t.attempt, t.error) for t in step.tries] == [
        (1, "RuntimeError: flaky 1"),
        (2, "RuntimeError: flaky 2"),
    ]
    for one in step.tries:
        assert one.traceback is not None and "in flaky_fetch" in one.traceback
        assert 'raise RuntimeError(f"flaky {calls' in one.traceback
        assert one.started_at <= one.finished_at
    run = app.get_run(run_id)
    assert run is not None and run.status is RunStatus.COMPLETED and run.traceback is None


def test_a_step_keeps_its_last_ten_tries(app: Engine, clock: FakeClock) -> None:
    run_id = app.start("gives_up").id
    drain(app, clock, rounds=30)
    (step,) = app.list_steps(run_id)
    assert step.status == "failed" and step.attempts == 12
    assert [t.attempt for t in step.tries] == list(range(3, 13))
    assert {t.error for t in step.tries} == {"ConnectionError: the warehouse is down"}


def test_a_run_that_failed_for_good_keeps_its_traceback(app: Engine, clock: FakeClock) -> None:
    run_id = app.start("breaks").id
    drain(app, clock)
    run = app.get_run(run_id)
    assert run is not None and run.status is RunStatus.FAILED
    assert run.error == "KeyError: 'missing-column'"
    assert run.traceback is not None
    assert 'raise KeyError("missing-column")' in run.traceback and "in breaks" in run.traceback
    assert run.traceback.rstrip().endswith("KeyError: 'missing-column'")
    assert app.list_runs(status=RunStatus.FAILED)[0].traceback == run.traceback


def test_tracebacks_are_bounded_and_keep_their_end(app: Engine, clock: FakeClock) -> None:
    run_id = app.start("deep_trace").id
    drain(app, clock)
    (step,) = app.list_steps(run_id)
    (one,) = step.tries
    assert one.traceback is not None and len(one.traceback) <= 8001
    assert one.traceback.startswith("…")  # the start was cut: the raise is at the end
    assert one.traceback.rstrip().endswith("x" * 100)
    assert len(one.error) <= 2001 and one.error.startswith("ValueError: xxx")
    run = app.get_run(run_id)
    assert run is not None and run.traceback is not None and len(run.traceback) <= 8001


# -- the faces ---------------------------------------------------------------------------


@pytest.fixture
def failed_runs(app: Engine, clock: FakeClock) -> dict[str, str]:
    ids = {"recovers": app.start("recovers").id, "breaks": app.start("breaks").id}
    drain(app, clock)
    return ids


@pytest.fixture
def api(app: Engine) -> Iterator[Browser]:
    with ExitStack() as stack:
        client = Browser(create_app(app), stack)
        client.client.headers["Authorization"] = f"Bearer {app.create_api_key('test')}"
        yield client


def test_the_api_sends_tries_and_the_traceback(
    api: Browser, app: Engine, failed_runs: dict[str, str]
) -> None:
    shown = api.get(f"/api/v1/runs/{failed_runs['recovers']}").json()
    (step,) = shown["steps"]
    assert [t["error"] for t in step["tries"]] == ["RuntimeError: flaky 1", "RuntimeError: flaky 2"]
    assert "in flaky_fetch" in step["tries"][0]["traceback"]
    assert step["tries"][0]["finished_at"].endswith("Z")
    broken = api.get(f"/api/v1/runs/{failed_runs['breaks']}").json()
    assert broken["traceback"] == app.get_run(failed_runs["breaks"]).traceback  # type: ignore[union-attr]


def test_runs_show_prints_each_failed_try_and_the_traceback(
    db_url: str, failed_runs: dict[str, str]
) -> None:
    runner = CliRunner()
    out = runner.invoke(main, ["runs", "show", failed_runs["recovers"], "--database", db_url])
    assert out.exit_code == 0, out.output
    assert "fetch, try 1 failed: RuntimeError: flaky 1" in out.output
    assert "fetch, try 2 failed: RuntimeError: flaky 2" in out.output
    out = runner.invoke(main, ["runs", "show", failed_runs["breaks"], "--database", db_url])
    assert re.search(r"traceback:\n(    .*\n)*    KeyError: 'missing-column'", out.output)


def test_the_run_page_shows_tries_and_the_traceback(
    app: Engine, failed_runs: dict[str, str]
) -> None:
    with ExitStack() as stack:
        browser = Browser(create_app(app), stack)
        assert browser.login(app.create_api_key("dashboard")).status_code == 303
        page = browser.get("/run", params={"id": failed_runs["recovers"]}).text
        assert "2 failed tries" in page
        assert page.count('<pre class="error">RuntimeError: flaky') == 2
        assert "in flaky_fetch" in page
        page = browser.get("/run", params={"id": failed_runs["breaks"]}).text
        assert "<summary>Traceback</summary>" in page
        assert "raise KeyError(&#34;missing-column&#34;)" in page


def test_checkpoints_after_a_retried_step_keep_their_order(
    engine: Engine, clock: FakeClock
) -> None:
    tries = {"n": 0}

    def push() -> str:
        tries["n"] += 1
        if tries["n"] == 1:
            raise RuntimeError("once")
        return "pushed"

    @engine.workflow()
    def ordered(ctx: Context) -> None:
        ctx.step("connect", lambda: 1)
        ctx.step("push", push, retry=FLAKY)
        ctx.sleep("cool-down", "1s")
        ctx.now()
        ctx.step("report", lambda: 2)

    run_id = engine.start("ordered").id
    drain(engine, clock)
    steps = engine.list_steps(run_id)
    assert [(s.kind, s.name) for s in steps] == [
        ("step", "connect"), ("step", "push"), ("sleep", "cool-down"), ("now", "now"),
        ("step", "report"),
    ]  # fmt: skip
