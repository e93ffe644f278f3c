"""A note on pause, in a real browser (Debian's chromium, Playwright, a real uvicorn
server): typed beside the Pause button on the schedule's page, it is shown on that page
and in its history, and on the Schedules page beside the state.

No timing is asserted: every check waits (generously) for what the page should show.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from tests.acceptance.browser import OVERFLOW, dashboard_page, log_in, need_chromium, serve

from tickwork import Context, Engine
from tickwork.server import create_app

pytestmark = pytest.mark.acceptance

NOTE = "Incident 42: the warehouse API is down"


@pytest.fixture
def site(tmp_path: Path) -> Iterator[tuple[str, Engine, str]]:
    """A served app over a fresh engine with one schedule: (url, engine, API key)."""
    need_chromium()
    with Engine(f"sqlite:///{tmp_path / 'tickwork.db'}") as engine:

        @engine.workflow("nightly-report")
        def nightly_report(ctx: Context) -> None:
            return None

        engine.schedule("nightly-report", cron="0 3 * * *", key="nightly-report")
        key = engine.create_api_key("browser-test")
        with serve(create_app(engine)) as url:
            yield url, engine, key


def test_a_note_typed_beside_pause_is_shown_on_the_page_and_in_the_history(
    site: tuple[str, Engine, str],
) -> None:
    from playwright.sync_api import expect

    url, engine, key = site
    errors: list[str] = []
    with dashboard_page(errors) as page:
        log_in(page, url, key)

        page.locator("tr", has_text="nightly-report").get_by_role("link").first.click()
        expect(page.locator("h1")).to_have_text("nightly-report")
        page.get_by_role("textbox", name="Note").fill(NOTE)
        page.get_by_role("button", name="Pause").click()
        expect(page.get_by_role("status")).to_contain_text("nightly-report: paused.")

        # On the schedule's page: the state with its note, and the history's entry.
        expect(page.locator(".bar .badge")).to_have_text("paused")
        expect(page.locator("#state-note")).to_contain_text(NOTE)
        entry = page.locator("table.list tbody tr", has_text=NOTE)
        expect(entry.locator(".badge")).to_have_text("paused")
        info = engine.get_schedule("nightly-report")
        assert info is not None and info.note == NOTE

        # Resuming without a note: the note goes, the history keeps it.
        page.get_by_role("button", name="Resume").click()
        expect(page.locator(".bar .badge")).to_have_text("active")
        expect(page.locator("#state-note")).not_to_contain_text(NOTE)
        expect(page.locator("table.list tbody tr", has_text=NOTE)).to_have_count(1)

        # The Schedules page shows a note beside the state (and as its tooltip).
        page.get_by_role("textbox", name="Note").fill(NOTE)
        page.get_by_role("button", name="Deactivate").click()
        expect(page.get_by_role("status")).to_contain_text("deactivated")
        page.get_by_role("navigation").get_by_role("link", name="Schedules").click()
        row = page.locator("tr", has_text="nightly-report")
        expect(row.locator("td[data-label=State]")).to_contain_text(NOTE)
        expect(row.locator("td[data-label=State]")).to_have_attribute("title", NOTE)

        # Readable on a phone: the note field does not widen the schedule's page.
        row.get_by_role("link", name="nightly-report").click()
        expect(page.get_by_role("textbox", name="Note")).to_be_visible()
        page.set_viewport_size({"width": 390, "height": 844})
        page.reload()
        assert page.evaluate(OVERFLOW) <= 1
        assert errors == []
