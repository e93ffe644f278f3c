"""Nobody serving, in a real browser (Debian's chromium, Playwright, a real uvicorn server):
the Workers page lists the live worker; the overdue banner appears on the Schedules page
when the only worker stops, and goes when one starts again — brought by the live refresh,
without a reload.

Nothing asserts how long anything takes: each check waits (generously) for what the page
should come to show. Without /usr/bin/chromium the test skips, except under CI.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from tests.acceptance.browser import (
    OVERFLOW,
    WAIT_MS,
    dashboard_page,
    log_in,
    need_chromium,
    serve,
)

from tickwork import Context, Engine
from tickwork.server import create_app

pytestmark = pytest.mark.acceptance


@pytest.fixture
def site(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[str, Engine, str]]:
    """A served app over an engine with a schedule every 2 s: (url, engine, API key)."""
    need_chromium()
    monkeypatch.setenv("TICKWORK_WORKER_HEARTBEAT", "500ms")
    with Engine(f"sqlite:///{tmp_path / 'tickwork.db'}") as engine:

        @engine.workflow("heartbeat-check")
        def check(ctx: Context) -> str:
            return "ok"

        engine.schedule("heartbeat-check", every="2s", key="every-2s")
        key = engine.create_api_key("browser-test")
        with serve(create_app(engine)) as url:
            yield url, engine, key


def test_workers_page_and_the_overdue_banner_follow_the_fleet(
    site: tuple[str, Engine, str],
) -> None:
    from playwright.sync_api import expect

    url, engine, key = site
    errors: list[str] = []
    with dashboard_page(errors) as page:
        log_in(page, url, key)
        overdue = page.locator("#banner-overdue")

        with engine.worker(threads=1, poll_interval="200ms"):
            (worker,) = engine.list_workers()
            # The Workers page, reached from the navigation, lists it alive.
            page.get_by_role("navigation").get_by_role("link", name="Workers").click()
            expect(page).to_have_url(f"{url}/workers")
            row = page.locator("tr.worker", has_text=worker.id)
            expect(row).to_contain_text(worker.host)
            expect(row).to_contain_text(str(worker.pid))
            expect(row).to_contain_text("heartbeat-check")
            expect(row.locator(".badge")).to_have_text("yes")
            expect(page.locator("#banner-no-workers")).to_have_count(0)

            page.get_by_role("navigation").get_by_role("link", name="Schedules").click()
            expect(page.locator("tr", has_text="every-2s")).to_be_visible()
            expect(overdue).to_have_count(0)

        # The only worker stopped: the schedule falls due and nobody fires it. The page,
        # left open, comes to say so (live refresh) once the 10 s grace has passed,
        # naming the schedule and why.
        expect(overdue).to_be_visible(timeout=WAIT_MS)
        expect(overdue).to_contain_text("every-2s")
        expect(overdue).to_contain_text("no worker is alive")

        with engine.worker(threads=1, poll_interval="200ms"):
            # A worker again: it fires the overdue occurrence, and the banner goes.
            expect(overdue).to_have_count(0)
            expect(page.locator("#banner-unserved")).to_have_count(0)

        # The Workers page says the worker stopped, and that none is alive.
        page.goto(url + "/workers")
        expect(page.locator("tr.worker", has_text=worker.id).locator(".badge")).to_have_text(
            "stopped"
        )
        expect(page.locator("#banner-no-workers")).to_be_visible()
        page.set_viewport_size({"width": 390, "height": 844})
        page.goto(url + "/workers")
        assert page.evaluate(OVERFLOW) == 0, "/workers is wider than a 390px screen"
    assert errors == []  # no script errors, no Content-Security-Policy violations
