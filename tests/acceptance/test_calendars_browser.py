"""Business calendars in a real browser (Debian's chromium, Playwright, a real uvicorn
server): the Calendars page, reached from the navigation, lists the stored calendars; a
calendar's page shows its weekend, country and subdivision, and its holidays of this year,
and the year switcher shows the next. The navigation and both pages fit a 390 px phone.

No timing is asserted: every check waits (generously) for what the page should show.
Without /usr/bin/chromium the test skips, except under CI.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from tests.acceptance.browser import OVERFLOW, dashboard_page, log_in, need_chromium, serve

from tickwork import Engine
from tickwork.server import create_app

pytestmark = pytest.mark.acceptance


@pytest.fixture
def site(tmp_path: Path) -> Iterator[tuple[str, Engine, str]]:
    """A served app over an engine with two calendars: (url, engine, API key)."""
    need_chromium()
    with Engine(f"sqlite:///{tmp_path / 'tickwork.db'}") as engine:
        year = engine.clock.now().year
        engine.calendar(
            "uk", country="GB", subdivision="ENG", holidays=[f"{year}-12-24", f"{year + 1}-01-02"]
        )
        engine.calendar("gulf", weekend=["FRI", "SAT"])
        key = engine.create_api_key("browser-test")
        with serve(create_app(engine)) as url:
            yield url, engine, key


def test_calendars_page_and_a_calendars_holidays_by_year(site: tuple[str, Engine, str]) -> None:
    from playwright.sync_api import expect

    url, engine, key = site
    year = engine.clock.now().year
    errors: list[str] = []
    with dashboard_page(errors) as page:
        log_in(page, url, key)
        nav = page.get_by_role("navigation")
        nav.get_by_role("link", name="Calendars").click()
        expect(page).to_have_url(f"{url}/calendars")
        expect(nav.get_by_role("link", name="Calendars")).to_have_attribute("aria-current", "page")
        rows = page.locator("tr.calendar")
        expect(rows).to_have_count(2)
        expect(rows.nth(0)).to_contain_text("gulf")
        expect(rows.nth(0)).to_contain_text("FRI, SAT")
        expect(rows.nth(1)).to_contain_text("GB-ENG")

        # A calendar's page: its weekend, country, subdivision and this year's holidays.
        rows.nth(1).get_by_role("link", name="uk").click()
        expect(page.locator("h1")).to_have_text("uk")
        expect(page.locator("#weekend")).to_have_text("SAT, SUN")
        expect(page.locator("#country")).to_have_text("GB")
        expect(page.locator("#subdivision")).to_have_text("ENG")
        expect(page.locator("#year")).to_have_text(f"Holidays in {year}")
        holidays = page.locator("tr.holiday")
        expect(holidays.filter(has_text=f"{year}-12-25")).to_contain_text("Christmas Day")
        expect(holidays.filter(has_text=f"{year}-12-24")).to_contain_text("listed")
        expect(holidays.filter(has_text=f"{year + 1}-")).to_have_count(0)

        # The year switcher: the next year's holidays, its listed date among them.
        page.get_by_role("link", name=f"{year + 1} →").click()
        expect(page.locator("#year")).to_have_text(f"Holidays in {year + 1}")
        expect(holidays.filter(has_text=f"{year + 1}-01-01")).to_contain_text("New Year")
        expect(holidays.filter(has_text=f"{year + 1}-01-02")).to_contain_text("listed")
        expect(holidays.filter(has_text=f"{year}-")).to_have_count(0)
        page.get_by_role("link", name=f"← {year}").click()
        expect(page.locator("#year")).to_have_text(f"Holidays in {year}")
        calendar_page = page.url.removeprefix(url)

        # Readable on a phone: the navigation (one link more) and both pages fit.
        page.set_viewport_size({"width": 390, "height": 844})
        for path in ["/calendars", calendar_page, "/"]:
            page.goto(url + path)
            assert page.evaluate(OVERFLOW) == 0, f"{path} is wider than a 390px screen"
            box = page.get_by_role("navigation").bounding_box()
            assert box is not None and box["x"] + box["width"] <= 390, path
    assert errors == []  # no script errors, no Content-Security-Policy violations
