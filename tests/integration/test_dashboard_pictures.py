"""The dashboard's pictures, in-process (DESIGN §8): each schedule's recent runs as a strip
on the Schedules page, a run's steps as a timeline on its page, a schedule's lateness and
durations on its page; drawn on the server as SVG, under the strict Content-Security-Policy
(no inline style or script)."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from contextlib import ExitStack
from datetime import timedelta
from typing import Any
from urllib.parse import quote, unquote

import pytest
from tests.browser import Browser

from tickwork import Context, Engine, Retry
from tickwork.server import create_app
from tickwork.testing import FakeClock

SVG = "{http://www.w3.org/2000/svg}"


@pytest.fixture
def browser(engine: Engine, clock: FakeClock) -> Iterator[Browser]:
    tries = {"push": 0}

    def push() -> str:
        tries["push"] += 1
        if tries["push"] == 1:
            raise ConnectionError("crm <down>")
        return "pushed"

    def taking(seconds: str, value: Any) -> Any:
        def work() -> Any:
            clock.advance(seconds)
            return value

        return work

    @engine.workflow("report")
    def report(ctx: Context) -> str:
        ctx.step("fetch", taking("2s", 3))
        return "ok"

    @engine.workflow("export")
    def export(ctx: Context) -> str:
        ctx.step("connect", taking("1s", "crm"))
        ctx.step("push", push, retry=Retry(max_attempts=3, backoff="5s"))
        ctx.now()
        ctx.sleep("cool-down", "30s")
        return "done"

    with ExitStack() as stack:
        browser = Browser(create_app(engine), stack)
        assert browser.login(engine.create_api_key("pictures")).status_code == 303
        yield browser


def svgs(html: str, kind: str) -> list[ET.Element]:
    """The page's pictures of one kind (``<svg class="chart {kind}...">``), parsed."""
    found = re.findall(r'<svg class="chart ' + kind + r'[ "].*?</svg>', html, re.S)
    return [ET.fromstring(svg) for svg in found]


def marks(svg: ET.Element) -> list[ET.Element]:
    return svg.findall(f"{SVG}a")


def assert_no_inline_code(html: str) -> None:
    """What the Content-Security-Policy would refuse: inline styles, scripts, handlers."""
    assert not re.search(r"\sstyle=|<style|\son[a-z]+=|javascript:", html, re.I)
    assert re.findall(r"<script[^>]*>", html) == ['<script src="/static/live.js" defer>']


def fire(engine: Engine, clock: FakeClock, times: int) -> None:
    for _ in range(times):
        clock.advance("1m")
        engine.tick()
        engine.run_until_idle()


def test_schedules_page_draws_each_schedules_last_thirty_runs_as_a_strip(
    browser: Browser, engine: Engine, clock: FakeClock
) -> None:
    engine.schedule("report", None, every="1m", key="often")
    engine.schedule("report", None, every="10m", key="rare")
    engine.schedule("report", None, every="1m", key="never-ran", paused=True)
    fire(engine, clock, 35)
    response = browser.get("/")
    assert "default-src 'none'" in response.headers["content-security-policy"]
    assert_no_inline_code(response.text)
    strips = svgs(response.text, "strip")
    assert len(strips) == 2  # one per schedule that ran
    by_count = sorted(strips, key=lambda svg: len(marks(svg)))
    rare = len(engine.list_runs(schedule_key="rare"))
    assert [len(marks(svg)) for svg in by_count] == [rare, 30] and 0 < rare < 30
    newest = [r.id for r in engine.list_runs(schedule_key="often", limit=30)]
    hrefs = [a.get("href") for a in marks(by_count[1])]
    assert hrefs == [f"/run?id={quote(run_id, safe='')}" for run_id in reversed(newest)]
    for a in marks(by_count[1]):
        title = a.find(f"{SVG}title")
        assert title is not None and title.text and "completed" in title.text
        assert "2 s" in title.text


def test_a_runs_page_draws_its_steps_tries_back_off_and_sleep_on_a_timeline(
    browser: Browser, engine: Engine, clock: FakeClock
) -> None:
    run_id = engine.start("export").id
    engine.run_until_idle()  # connect; push fails once
    clock.advance("5s")
    engine.run_until_idle()  # push again: it works; then the run sleeps
    page = browser.get(f"/run?id={run_id}").text
    assert_no_inline_code(page)
    [timeline] = svgs(page, "timeline")
    rows = timeline.findall(f"{SVG}g[@class='row']")
    kinds = [[g.get("class") for g in row.findall(f"{SVG}g")] for row in rows]
    assert kinds == [
        ["tl step completed"],  # connect
        ["tl try failed", "tl backoff pending", "tl step completed"],  # push
        ["tl now-read"],  # now()
        ["tl sleep sleeping"],  # cool-down, its wake time still ahead
    ]
    assert timeline.find(f"{SVG}g[@class='tl now-line']") is not None
    assert "crm &lt;down&gt;" in page and "crm <down>" not in page

    clock.advance("30s")
    engine.run_until_idle()  # wakes and completes
    page = browser.get(f"/run?id={run_id}").text
    [timeline] = svgs(page, "timeline")
    rows = timeline.findall(f"{SVG}g[@class='row']")
    assert len(rows) == 4
    assert [g.get("class") for g in rows[3].findall(f"{SVG}g")] == ["tl sleep completed"]
    assert timeline.find(f"{SVG}g[@class='tl now-line']") is None


def test_a_schedules_page_charts_its_runs_lateness_and_durations(
    browser: Browser, engine: Engine, clock: FakeClock
) -> None:
    key = engine.schedule("report", None, every="1m", key="often")
    fire(engine, clock, 12)
    started = engine.trigger(key, new_run=True)  # started by hand: no lateness, a duration
    engine.run_until_idle()
    page = browser.get(f"/schedule?key={key}").text
    assert_no_inline_code(page)
    [lateness] = svgs(page, "bars lateness")
    [durations] = svgs(page, "bars duration")
    runs = engine.list_runs(schedule_key=key, limit=100)
    assert len(marks(durations)) == len(runs) == 13
    fired = [r for r in runs if r.scheduled_for is not None and r.id != started]
    assert len(marks(lateness)) == len(fired) == 12  # the run started now is left out
    axis_text = " ".join("".join(t.itertext()) for t in durations.iter(f"{SVG}text"))
    assert "Duration" in axis_text and "max 2 s" in axis_text and "UTC" in axis_text


def test_a_schedules_lateness_chart_leaves_out_its_backfilled_and_run_now_runs(
    browser: Browser, engine: Engine, clock: FakeClock
) -> None:
    """Runs backfilled for the day before the schedule existed (late by a day or more)
    and a run started now get no lateness bar, and the chart says so; the fired runs'
    bars are all there, the largest of them a fired run's lateness, not a day's."""
    start = clock.now()
    key = engine.schedule("report", None, every="1h", key="hourly")
    fire_times = 4
    for _ in range(fire_times):
        clock.advance("1h")
        engine.tick()
    backfilled = engine.backfill(key, start - timedelta(days=1), start)
    started = engine.trigger(key, new_run=True)
    engine.run_until_idle()
    page = browser.get(f"/schedule?key={key}").text
    [lateness] = svgs(page, "bars lateness")
    charted = [unquote(a.get("href", "").split("id=", 1)[1]) for a in marks(lateness)]
    assert len(backfilled) == 24 and len(charted) == fire_times
    assert not set(charted) & {*backfilled, started}
    said = " ".join("".join(t.itertext()) for t in lateness.iter(f"{SVG}text"))
    assert "left out: 24 backfilled, 1 run now" in said
    largest = said.split("max ", 1)[1].split(" · ", 1)[0]
    assert largest.endswith((" ms", " s")), largest  # not hours or days late
    [durations] = svgs(page, "bars duration")
    assert len(marks(durations)) == fire_times + 25  # their durations are still shown


def test_a_schedule_that_never_ran_has_no_pictures_but_says_so(
    browser: Browser, engine: Engine
) -> None:
    engine.schedule("report", None, every="1h", key="quiet")
    assert svgs(browser.get("/").text, "strip") == []
    page = browser.get("/schedule?key=quiet").text
    assert "<svg" not in page and "No runs yet." in page
