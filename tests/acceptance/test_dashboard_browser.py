"""The dashboard in a real browser: Debian's chromium, driven by Playwright, against a real
uvicorn server, with a worker executing runs in the same process.

Nothing here asserts how long anything takes: every check waits (generously) for what the
page should come to show, and the live refresh is what brings it there. Without
/usr/bin/chromium the test skips, except under CI (``CI=true``), where it fails.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from tests.acceptance.browser import (
    OVERFLOW,
    TEXT_LINES,
    WAIT_MS,
    dashboard_page,
    need_chromium,
    serve,
)

from tickwork import Context, Engine
from tickwork.server import create_app

pytestmark = pytest.mark.acceptance


class Gate:
    """Holds the first step of a run until the test opens it, so the page can be seen
    showing the run as running before it completes (no timing involved)."""

    def __init__(self) -> None:
        self.opened = threading.Event()

    def wait(self) -> str:
        if not self.opened.wait(WAIT_MS / 1000):
            raise TimeoutError("the test never opened the gate")
        return "gathered"


def define(engine: Engine, gate: Gate) -> None:
    @engine.workflow("nightly-report")
    def nightly_report(ctx: Context, input: dict[str, Any] | None = None) -> dict[str, Any]:
        rows = ctx.step("gather", gate.wait)
        ctx.step("render", lambda: f"{rows}: 3 rows")
        ctx.step("deliver", lambda: {"sent_to": "ops@example.com"})
        return {"rows": 3}


@pytest.fixture
def site(tmp_path: Path) -> Iterator[tuple[str, Engine, Gate, str]]:
    """A served app over a fresh engine with a schedule and a worker: (url, engine, gate,
    API key)."""
    need_chromium()
    with Engine(f"sqlite:///{tmp_path / 'tickwork.db'}") as engine:
        gate = Gate()
        define(engine, gate)
        engine.schedule(
            "nightly-report", {"team": "ops"}, cron="0 3 * * *", timezone="Europe/Paris",
            key="nightly-report",
        )  # fmt: skip
        key = engine.create_api_key("browser-test")
        with engine.worker(threads=2, poll_interval="200ms"), serve(create_app(engine)) as url:
            try:
                yield url, engine, gate, key
            finally:
                gate.opened.set()  # never leave the worker waiting on the gate


def test_log_in_pause_resume_run_now_and_watch_the_run_complete(
    site: tuple[str, Engine, Gate, str],
) -> None:
    from playwright.sync_api import expect

    url, engine, gate, key = site
    errors: list[str] = []
    with dashboard_page(errors) as page:
        # Unauthenticated: the login page. A wrong key is refused; the right one works.
        page.goto(url + "/")
        expect(page).to_have_url(f"{url}/login")
        page.fill("#key", "tw_000000000000_" + "x" * 43)
        page.get_by_role("button", name="Log in").click()
        expect(page.get_by_role("alert")).to_contain_text("not valid")
        errors.clear()  # the 401 of that refused login is logged by the browser
        page.fill("#key", key)
        page.get_by_role("button", name="Log in").click()
        expect(page).to_have_url(f"{url}/")

        # The schedule, its cadence in words and its zone.
        row = page.locator("tr", has_text="nightly-report")
        expect(row).to_contain_text("At 03:00")
        expect(row).to_contain_text("Europe/Paris")
        expect(row.locator(".badge")).to_have_text("active")

        row.get_by_role("button", name="Pause").click()
        expect(page.get_by_role("status")).to_contain_text("nightly-report: paused.")
        expect(row.locator(".badge")).to_have_text("paused")
        assert engine.get_schedule("nightly-report").state == "paused"  # type: ignore[union-attr]

        row.get_by_role("button", name="Resume").click()
        expect(row.locator(".badge")).to_have_text("active")
        assert engine.get_schedule("nightly-report").state == "active"  # type: ignore[union-attr]

        # Run now: the message links to the run; the runs page shows it running, then
        # (refreshed live, no reload) completed.
        row.get_by_role("button", name="Run now").click()
        flash = page.get_by_role("status")
        expect(flash).to_contain_text("nightly-report: started run")
        run_id = flash.locator("a").inner_text()
        page.get_by_role("navigation").get_by_role("link", name="Runs").click()
        run_row = page.locator("tr", has_text=run_id)
        expect(run_row.locator(".badge")).to_have_text("running")
        gate.opened.set()
        expect(run_row.locator(".badge")).to_have_text("completed")

        # The run's page: its steps, with their results.
        run_row.get_by_role("link", name=run_id).click()
        expect(page.locator("h1")).to_have_text(run_id)
        steps = page.locator("table.steps tbody tr")
        expect(steps).to_have_count(3)
        for i, name in enumerate(["gather", "render", "deliver"]):
            expect(steps.nth(i)).to_contain_text(name)
            expect(steps.nth(i).locator(".badge")).to_have_text("completed")
        expect(steps.nth(2)).to_contain_text("ops@example.com")
        expect(page.locator("dl.fields")).to_contain_text("nightly-report")

        # Run now again: the occurrence already ran, and the page says so rather than
        # "started"; "Start a new run" then starts one.
        page.get_by_role("navigation").get_by_role("link", name="Schedules").click()
        row = page.locator("tr", has_text="nightly-report")
        row.get_by_role("button", name="Run now").click()
        flash = page.get_by_role("status")
        expect(flash).to_contain_text(
            f"nightly-report: occurrence already ran: run {run_id} (completed)"
        )
        assert len(engine.list_runs(schedule_key="nightly-report")) == 1
        flash.get_by_role("button", name="Start a new run").click()
        expect(page.get_by_role("status")).to_contain_text("nightly-report: started run")
        new_id = page.get_by_role("status").locator("a").inner_text()
        assert new_id != run_id
        assert {r.id for r in engine.list_runs(schedule_key="nightly-report")} == {
            run_id,
            new_id,
        }

        # Readable on a phone: nothing wider than the screen.
        page.set_viewport_size({"width": 390, "height": 844})
        for path in ["/", "/runs", page.url.removeprefix(url)]:
            page.goto(url + path)
            assert page.evaluate(OVERFLOW) == 0, f"{path} is wider than a 390px screen"
            lines = page.get_by_role("button", name="Log out").evaluate(TEXT_LINES)
            assert lines == 1, f"{path}: 'Log out' wraps onto {lines} lines at 390px"

        # Logging out ends the session.
        page.get_by_role("button", name="Log out").click()
        expect(page).to_have_url(f"{url}/login")
        page.goto(url + "/runs")
        expect(page).to_have_url(f"{url}/login?next=%2Fruns")
    assert errors == []  # no script errors, no Content-Security-Policy violations
