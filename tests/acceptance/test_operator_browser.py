"""What an operator reads on the dashboard, in a real browser (Debian's chromium,
Playwright, a real uvicorn server): the Runs page shows each failed run's error, and a
Pause pressed on a page that another operator's pause made stale says the schedule was
already paused and keeps that operator's note.

No timing is asserted: every check waits (generously) for what the page should show.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from tests.acceptance.browser import dashboard_page, log_in, need_chromium, serve

from tickwork import Context, Engine
from tickwork.server import create_app

pytestmark = pytest.mark.acceptance


def _refuse(row: int) -> int:
    raise ValueError(f"row {row} is negative\nsecond line of the message")


@pytest.fixture
def site(tmp_path: Path) -> Iterator[tuple[str, Engine, str]]:
    """A served app over a fresh engine with one schedule and one failed run."""
    need_chromium()
    with Engine(f"sqlite:///{tmp_path / 'tickwork.db'}") as engine:

        @engine.workflow("import-orders")
        def import_orders(ctx: Context) -> int:
            return ctx.step("parse", _refuse, -2)

        engine.schedule("import-orders", cron="0 3 * * *", key="nightly-import")
        engine.start("import-orders", run_id="import-1")
        engine.run_until_idle()
        key = engine.create_api_key("browser-test")
        with serve(create_app(engine)) as url:
            yield url, engine, key


def test_the_runs_page_shows_a_failed_runs_error(site: tuple[str, Engine, str]) -> None:
    """The failed run's row carries the first line of its error, the whole of it on hover."""
    from playwright.sync_api import expect

    url, _engine, key = site
    errors: list[str] = []
    with dashboard_page(errors) as page:
        log_in(page, url, key)
        page.get_by_role("navigation").get_by_role("link", name="Runs").click()
        row = page.locator("tr", has_text="import-1")
        expect(row.locator("td[data-label=Status]")).to_contain_text("failed")
        cell = row.locator("td[data-label=Error]")
        expect(cell).to_contain_text("ValueError: row -2 is negative")
        expect(cell).not_to_contain_text("second line")
        expect(cell.locator(".run-error")).to_have_attribute("title", re.compile("second line"))
    assert not errors, errors


def test_a_pause_on_a_stale_page_says_already_paused_and_keeps_the_note(
    site: tuple[str, Engine, str],
) -> None:
    """Another operator paused the schedule (with a note) after this page was loaded: the
    Pause pressed here changes nothing, says so, and the first note stays."""
    from playwright.sync_api import expect

    url, engine, key = site
    errors: list[str] = []
    with dashboard_page(errors) as page:
        log_in(page, url, key)
        page.locator("tr", has_text="nightly-import").get_by_role("link").first.click()
        expect(page.locator("h1")).to_have_text("nightly-import")

        engine.pause("nightly-import", note="incident 42")  # the other operator
        page.get_by_role("textbox", name="Note").fill("my own reason")
        page.get_by_role("button", name="Pause").click()

        status = page.get_by_role("status")
        expect(status).to_contain_text("nightly-import: already paused, nothing changed")
        expect(status).to_contain_text("incident 42")
        info = engine.get_schedule("nightly-import")
        assert info is not None and info.note == "incident 42"
    assert not errors, errors
