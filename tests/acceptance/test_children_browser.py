"""Child runs in a real browser (Debian's chromium, Playwright, a real uvicorn server, a
real worker; DESIGN §10): a waiting parent's page says "waiting for N of 20 runs of
resize" and shows its children by status, their strip and their rows; a child's page
links back to its parent; left open, the parent's page shows it completed once the
children end.

Nothing asserts how long anything takes: each check waits (generously) for what the page
should come to show. Without /usr/bin/chromium the test skips, except under CI.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from tests.acceptance.browser import OVERFLOW, dashboard_page, log_in, need_chromium, serve

from tickwork import Context, Engine
from tickwork.server import create_app

pytestmark = pytest.mark.acceptance

RELEASE = threading.Event()


@pytest.fixture
def site(tmp_path: Path) -> Iterator[tuple[str, Engine, str]]:
    """A served app whose album maps resize over 20 images: (url, engine, key)."""
    need_chromium()
    RELEASE.clear()
    with Engine(f"sqlite:///{tmp_path / 'tickwork.db'}") as engine:

        @engine.workflow("resize")
        def resize(ctx: Context, n: int) -> int:
            if n >= 5:  # the first five end at once, the rest when the test says
                ctx.step("held", RELEASE.wait, 60)
            return n

        @engine.workflow("album")
        def album(ctx: Context, count: int) -> Any:
            return ctx.map("resize", list(range(count)), max_parallel=20)

        key = engine.create_api_key("browser-test")
        with serve(create_app(engine)) as url:
            yield url, engine, key


def test_a_parents_page_and_a_childs_page_follow_the_children(
    site: tuple[str, Engine, str],
) -> None:
    from playwright.sync_api import expect

    url, engine, key = site
    errors: list[str] = []
    with engine.worker(threads=24, poll_interval="200ms"), dashboard_page(errors) as page:
        engine.start("album", 20, run_id="album-1")
        log_in(page, url, key)
        page.goto(f"{url}/run?id=album-1")
        says = page.locator(".waiting-for")
        expect(says).to_have_text(re.compile(r"^waiting for 15 of 20 runs of resize$"))
        children = page.locator("section.children")
        expect(children).to_contain_text("20 child runs")
        expect(children.locator("svg.chart.strip")).to_have_count(1)
        expect(children.locator("tbody tr")).to_have_count(20)

        # A child's page names its parent, a link back.
        children.get_by_role("link", name="album-1/resize/19", exact=True).click()
        expect(page).to_have_url(re.compile(r"/run\?id=album-1%2Fresize%2F19$"))
        page.get_by_role("link", name="album-1", exact=True).click()
        expect(page).to_have_url(re.compile(r"/run\?id=album-1$"))

        # The children end while the page is open: the live refresh shows it completed.
        RELEASE.set()
        expect(page.locator(".bar .badge").first).to_have_text("completed", timeout=60_000)
        expect(page.locator(".waiting-for")).to_have_count(0)
        expect(page.locator("section.children")).to_contain_text("completed 20")

        page.set_viewport_size({"width": 390, "height": 844})
        page.goto(f"{url}/run?id=album-1")
        assert page.evaluate(OVERFLOW) == 0, "a parent's page is wider than a 390px screen"
    assert errors == []  # no script errors, no Content-Security-Policy violations
