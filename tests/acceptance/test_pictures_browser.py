"""The dashboard's pictures in a real browser (Debian's chromium, Playwright, a real uvicorn
server): each schedule's strip of its last 30 runs, a run's step timeline and a schedule's
lateness and duration charts render with a mark for each run, step, try, back-off and
sleep, coloured by the stylesheet, linking to their runs, with no Content-Security-Policy
violation, and fit a 390 px phone screen.

The history is made on a FakeClock before the server starts (so it is the same every
time); nothing asserts how long anything takes. Without /usr/bin/chromium the test skips,
except under CI.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest
from tests.acceptance.browser import OVERFLOW, dashboard_page, log_in, need_chromium, serve

from tickwork import Context, Engine, Retry
from tickwork.server import create_app
from tickwork.testing import FakeClock

pytestmark = pytest.mark.acceptance

OK_GREEN = "rgb(30, 123, 60)"  # --ok in dashboard.css: a completed run's colour
BAD_RED = "rgb(179, 38, 30)"  # --bad: a failed one's


def build(engine: Engine, clock: FakeClock) -> str:
    """35 minutes of a schedule firing every minute (every fifth run fails) and one run
    with a retried step and a durable sleep; returns that run's id."""

    def taking(seconds: str, value: Any) -> Any:
        def work() -> Any:
            clock.advance(seconds)
            return value

        return work

    fired = {"n": 0}

    @engine.workflow("report")
    def report(ctx: Context) -> str:
        fired["n"] += 1
        ctx.step("fetch", taking(f"{fired['n'] % 7 + 1}s", 3))
        if fired["n"] % 5 == 0:
            raise RuntimeError("the warehouse is down")
        return "ok"

    tries = {"push": 0}

    def push() -> str:
        tries["push"] += 1
        clock.advance("1s")
        if tries["push"] == 1:
            raise ConnectionError("crm: 503")
        return "pushed"

    @engine.workflow("export")
    def export(ctx: Context) -> str:
        ctx.step("connect", taking("2s", "crm"))
        ctx.step("push", push, retry=Retry(max_attempts=3, backoff="5s"))
        ctx.sleep("cool-down", "20s")
        return "done"

    engine.schedule("report", None, every="1m", key="often")
    for _ in range(35):
        clock.advance("1m")
        engine.tick()
        engine.run_until_idle()
    run_id = engine.start("export").id
    engine.run_until_idle()  # connect, and push fails
    for wait in ("5s", "20s"):  # push again, then sleep; the sleep ends
        clock.advance(wait)
        engine.run_until_idle()
    return run_id


@pytest.fixture
def site(tmp_path: Path) -> Iterator[tuple[str, Engine, str, str]]:
    """(url, engine, API key, the export run's id) over a served app."""
    need_chromium()
    clock = FakeClock(datetime(2026, 3, 1, 12, 0, tzinfo=UTC))
    with Engine(f"sqlite:///{tmp_path / 'tickwork.db'}", clock=clock) as engine:
        run_id = build(engine, clock)
        key = engine.create_api_key("browser-test")
        with serve(create_app(engine)) as url:
            yield url, engine, key, run_id


def fill(locator: Any) -> str:
    return str(locator.evaluate("e => getComputedStyle(e).fill"))


def test_run_strip_timeline_and_charts_render_under_the_csp_on_any_screen(
    site: tuple[str, Engine, str, str],
) -> None:
    from playwright.sync_api import expect

    url, engine, key, export_id = site
    errors: list[str] = []
    with dashboard_page(errors) as page:
        log_in(page, url, key)

        # The strip: the last 30 of 35 runs, oldest first, coloured by status.
        newest = engine.list_runs(schedule_key="often", limit=30)
        marks = page.locator("tr", has_text="often").locator("svg.strip a")
        expect(marks).to_have_count(30)
        assert marks.last.locator("title").text_content().startswith(newest[0].id)  # type: ignore[union-attr]
        for i, run in enumerate(reversed(newest)):
            rect = marks.nth(i).locator("rect.mark")
            assert fill(rect) == (OK_GREEN if run.status == "completed" else BAD_RED)
        box = page.locator("svg.strip").bounding_box()
        assert box is not None and box["width"] >= 90 and box["height"] > 20

        # A mark is a link to its run.
        marks.last.click()
        expect(page).to_have_url(f"{url}/run?id={quote(newest[0].id, safe='')}")
        expect(page.locator("h1")).to_have_text(newest[0].id)

        # The schedule's page: lateness and duration, a bar for each of its 35 runs.
        page.goto(f"{url}/schedule?key=often")
        expect(page.locator("svg.lateness a")).to_have_count(35)
        expect(page.locator("svg.duration a")).to_have_count(35)
        expect(page.locator("svg.duration")).to_contain_text("Duration")

        # The export run's timeline: a row per checkpoint; the failed try, the
        # back-off before the next and the sleep as marks of their own.
        page.goto(f"{url}/run?id={export_id}")
        timeline = page.locator("svg.timeline")
        expect(timeline.locator("g.row")).to_have_count(3)
        expect(timeline.locator("g.tl.step")).to_have_count(2)
        expect(timeline.locator("g.tl.try")).to_have_count(1)
        expect(timeline.locator("g.tl.backoff")).to_have_count(1)
        expect(timeline.locator("g.tl.sleep")).to_have_count(1)
        assert fill(timeline.locator("g.tl.try rect")) == BAD_RED
        assert fill(timeline.locator("g.tl.step rect").first) == OK_GREEN

        # Readable on a phone: nothing wider than the screen, the pictures as wide
        # as the page.
        page.set_viewport_size({"width": 390, "height": 844})
        for path in ["/", "/schedule?key=often", f"/run?id={export_id}"]:
            page.goto(url + path)
            assert page.evaluate(OVERFLOW) == 0, f"{path} is wider than a 390px screen"
        box = page.locator("svg.timeline").bounding_box()
        assert box is not None and 300 < box["width"] <= 390
    assert errors == []  # no script errors, no Content-Security-Policy violations
