"""A parent's and a child's run pages on the dashboard (DESIGN §10): the parent's
children by status, a strip, the first 100 and a link to all; what a waiting parent
waits for; a child's link to its parent; the runs page filtered by parent."""

from __future__ import annotations

import html
import re
from collections.abc import Iterator
from contextlib import ExitStack
from typing import Any

import httpx
import pytest
from tests.browser import Browser

from tickwork import Context, Engine
from tickwork.server import create_app
from tickwork.testing import FakeClock


def text(response: httpx.Response) -> str:
    words = re.sub(r"<svg.*?</svg>", " ", response.text, flags=re.S)
    return " ".join(html.unescape(re.sub(r"<[^>]+>", " ", words)).split())


@pytest.fixture
def browser(engine: Engine) -> Iterator[Browser]:
    @engine.workflow("resize")
    def resize(ctx: Context, n: int) -> int:
        if n >= 3:
            ctx.sleep("slow", "1h")
        return n

    @engine.workflow("album")
    def album(ctx: Context, count: int) -> Any:
        return ctx.map("resize", list(range(count)))

    with ExitStack() as stack:
        browser = Browser(create_app(engine), stack)
        assert browser.login(engine.create_api_key("dashboard")).status_code == 303
        yield browser


def test_a_waiting_parents_page_shows_its_children_and_what_it_waits_for(
    browser: Browser, engine: Engine, clock: FakeClock
) -> None:
    engine.start("album", 120, run_id="a1")
    engine.run_until_idle()
    page = browser.get("/run", params={"id": "a1"})
    assert page.status_code == 200
    shown = text(page)
    assert "waiting for 117 of 120 runs of resize" in shown
    assert "120 child runs:" in shown and "completed 3" in shown and "sleeping 117" in shown
    assert '<svg class="chart strip"' in page.text  # the children's strip
    assert len(re.findall(r'href="/run\?id=a1%2Fresize%2F\d+"', page.text)) >= 100
    assert 'href="/runs?parent=a1"' in page.text  # all 120, past the first 100
    clock.advance("2h")
    engine.run_until_idle()
    assert "waiting for" not in text(browser.get("/run", params={"id": "a1"}))


def test_a_childs_page_links_its_parent_and_the_runs_page_lists_a_parents_children(
    browser: Browser, engine: Engine
) -> None:
    engine.start("album", 2, run_id="a2")
    engine.run_until_idle()
    child = browser.get("/run", params={"id": "a2/resize/1"})
    assert "Parent" in text(child) and 'href="/run?id=a2"' in child.text
    listed = browser.get("/runs", params={"parent": "a2"})
    shown = text(listed)
    assert "children of a2" in shown
    rows = re.findall(r'<td data-label="Run">.*?</td>', listed.text, re.S)
    assert len(rows) == 2 and all("a2%2Fresize%2F" in row for row in rows)
    assert "a2/resize/0" in shown and "a2/resize/1" in shown
