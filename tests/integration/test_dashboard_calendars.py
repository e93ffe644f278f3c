"""The dashboard's Calendars page and a calendar's page (DESIGN §3, issue 32): the
calendars stored, and one calendar's weekend, country and holidays of a year."""

from __future__ import annotations

import html
import re
import sys
from collections.abc import Iterator
from contextlib import ExitStack

import httpx
import pytest
from tests.browser import Browser

from tickwork import Context, Cron, Engine
from tickwork.server import create_app
from tickwork.testing import FakeClock


def text(response: httpx.Response) -> str:
    return " ".join(html.unescape(re.sub(r"<[^>]+>", " ", response.text)).split())


@pytest.fixture
def browser(engine: Engine) -> Iterator[Browser]:
    with ExitStack() as stack:
        browser = Browser(create_app(engine), stack)
        assert browser.login(engine.create_api_key("dashboard")).status_code == 303
        yield browser


def test_the_calendars_page_lists_every_calendar(browser: Browser, engine: Engine) -> None:
    assert "No calendars yet" in text(browser.get("/calendars"))
    engine.calendar("uk", country="GB", subdivision="ENG", holidays=["2026-12-24"])
    engine.calendar("gulf", weekend=["FRI", "SAT"])
    page = browser.get("/calendars")
    assert page.status_code == 200
    rows = re.findall(r'<tr class="calendar">(.*?)</tr>', page.text, flags=re.S)
    shown = [" ".join(html.unescape(re.sub(r"<[^>]+>", " ", row)).split()) for row in rows]
    assert shown[0].startswith("gulf FRI, SAT none 0")
    assert shown[1].startswith("uk SAT, SUN GB-ENG 1")
    assert 'href="/calendar?name=uk"' in page.text


def test_a_calendars_page_shows_its_holidays_of_this_year(
    browser: Browser, engine: Engine, clock: FakeClock
) -> None:
    engine.calendar("uk", country="GB", subdivision="ENG", holidays=[f"{clock.now().year}-12-24"])
    page = browser.get("/calendar", params={"name": "uk"})
    assert page.status_code == 200
    shown = text(page)
    year = clock.now().year  # the FakeClock's: 2026
    assert f"Holidays in {year}" in shown
    assert "Weekend SAT, SUN" in shown and "Country GB" in shown and "Subdivision ENG" in shown
    assert "Thu 2026-12-24 listed" in shown and "Fri 2026-12-25 Christmas Day" in shown
    assert "← 2025" in shown and "2027 →" in shown


def test_the_year_switcher_shows_another_year(browser: Browser, engine: Engine) -> None:
    engine.calendar("uk", country="GB", subdivision="ENG")
    shown = text(browser.get("/calendar", params={"name": "uk", "year": "2031"}))
    assert "Holidays in 2031" in shown and "Thu 2031-12-25 Christmas Day" in shown
    assert "2026-12-25" not in shown
    edge = text(browser.get("/calendar", params={"name": "uk", "year": "9999"}))
    assert "← 9998" in edge and "10000" not in edge
    # Not a year: this year's holidays, not an error.
    assert "Holidays in 2026" in text(browser.get("/calendar?name=uk&year=soon"))


def test_a_year_the_server_cannot_resolve_says_why(
    browser: Browser, engine: Engine, monkeypatch: pytest.MonkeyPatch
) -> None:
    engine.calendar("uk", country="GB")
    monkeypatch.setitem(sys.modules, "holidays", None)  # a server without the extra
    page = browser.get("/calendar", params={"name": "uk", "year": "2040"})
    assert page.status_code == 200
    assert "pip install 'tickwork[holidays]'" in text(page)
    # The years stored when it was set need no extra.
    assert "Christmas Day" in text(browser.get("/calendar", params={"name": "uk"}))


def test_an_unknown_calendar_is_404(browser: Browser) -> None:
    assert browser.get("/calendar", params={"name": "nope"}).status_code == 404
    assert browser.get("/calendar").status_code == 404


def test_a_name_with_dots_and_dashes_is_found(browser: Browser, engine: Engine) -> None:
    engine.calendar("a.b-c_d", holidays=["2026-01-02"])
    page = browser.get("/calendar", params={"name": "a.b-c_d"})
    assert page.status_code == 200 and "Fri 2026-01-02 listed" in text(page)


def test_the_pages_need_a_session(engine: Engine) -> None:
    with ExitStack() as stack:
        anonymous = Browser(create_app(engine), stack)
        for path in ("/calendars", "/calendar?name=uk"):
            assert anonymous.get(path).status_code == 303


def test_a_business_day_cron_is_said_in_words_naming_its_calendar(
    browser: Browser, engine: Engine
) -> None:
    """The Schedules page and the schedule's page say ``0 17 LBD * *`` in words (it
    showed the bare expression: the words need a calendar)."""
    engine.calendar("acme", holidays=["2026-12-31"])
    engine.workflow("close-books")(lambda ctx: None)
    key = engine.schedule("close-books", cron="0 17 LBD * *", calendar="acme", key="books")
    said = "At 17:00 on the last business day of the month (calendar acme)"
    assert said in text(browser.get("/"))
    assert said in text(browser.get(f"/schedule?key={key}"))


def test_a_declared_schedule_waiting_for_its_calendar_is_said_on_the_schedules_page(
    browser: Browser, engine: Engine
) -> None:
    """A declared schedule whose calendar is not stored is not registered (a worker
    reports it and serves the others): the Schedules page says which, and why, until
    the calendar is stored."""

    @engine.workflow("holiday-report", schedule=Cron("0 9 * * *", calendar="uk"))
    def holiday_report(ctx: Context) -> None:
        return None

    engine.sync_schedules()
    page = browser.get("/")
    assert 'id="banner-calendar-missing"' in page.text
    said = text(page)
    assert "1 declared schedule(s) not registered: their calendar is missing." in said
    assert (
        "holiday-report : not registered: no calendar 'uk' is stored (declared by this app)" in said
    )
    engine.calendar("uk")
    assert 'id="banner-calendar-missing"' not in browser.get("/").text
