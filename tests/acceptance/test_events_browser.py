"""Events in a real browser (Debian's chromium, Playwright, a real uvicorn server, a real
worker): the Events page lists events with the runs each started and woke, the waiting
runs and what each waits for, and the subscriptions; a waiting run's page says "waiting
for order.paid (until …)" and, left open, shows the run completed once the event comes;
a debounced subscription's page shows its decisions (DESIGN §9).

Nothing asserts how long anything takes: each check waits (generously) for what the page
should come to show. Without /usr/bin/chromium the test skips, except under CI.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from tests.acceptance.browser import OVERFLOW, dashboard_page, log_in, need_chromium, serve

from tickwork import Context, Engine, On
from tickwork.server import create_app

pytestmark = pytest.mark.acceptance


@pytest.fixture
def site(tmp_path: Path) -> Iterator[tuple[str, Engine, str]]:
    """A served app whose engine routes events to three workflows: (url, engine, key)."""
    need_chromium()
    with Engine(f"sqlite:///{tmp_path / 'tickwork.db'}") as engine:

        @engine.workflow("welcome", on=On("user.signed_up"))
        def welcome(ctx: Context, input: Any) -> None:
            return None

        @engine.workflow("fulfil")
        def fulfil(ctx: Context, input: Any) -> str:
            paid = ctx.wait_for_event("order.paid", match={"order_id": input}, timeout="2d")
            return "shipped" if paid else "expired"

        @engine.workflow("sync", on=On("profile.changed", debounce="1h", key="user_id"))
        def sync(ctx: Context, input: Any) -> None:
            return None

        engine.sync_subscriptions()
        key = engine.create_api_key("browser-test")
        with serve(create_app(engine)) as url:
            yield url, engine, key


def test_the_events_page_and_a_waiting_runs_page_follow_what_happens(
    site: tuple[str, Engine, str],
) -> None:
    from playwright.sync_api import expect

    url, engine, key = site
    errors: list[str] = []
    with engine.worker(threads=1, poll_interval="200ms"), dashboard_page(errors) as page:
        order = engine.start("fulfil", 7, run_id="order-7")
        (welcomed,) = engine.emit("user.signed_up", {"user_id": 42}, id="signup-42")
        engine.emit("profile.changed", {"user_id": 5, "name": "Ada"}, id="profile-1")
        engine.emit("profile.changed", {"user_id": 5, "name": "Ada L."}, id="profile-2")
        log_in(page, url, key)

        # The Events page, from the navigation: the run waiting, the event and its run.
        page.get_by_role("navigation").get_by_role("link", name="Events").click()
        expect(page).to_have_url(f"{url}/events")
        waiting = page.locator("table.waiting tr", has_text="order-7")
        expect(waiting).to_contain_text("order.paid")  # the worker got it waiting
        signup = page.locator("table.events tr", has_text="signup-42")
        expect(signup).to_contain_text("user.signed_up")
        expect(signup.get_by_role("link", name=welcomed)).to_be_visible()
        subs = page.locator("table.subscriptions")
        expect(subs).to_contain_text("welcome")
        expect(subs).to_contain_text("profile.changed")

        # The waiting run's page says what it waits for, which order, and until when, in
        # words; its wait's row has no finish yet and no raw stored value.
        expect(waiting).to_contain_text("order.paid where order_id = 7")
        waiting.get_by_role("link", name="order-7").click()
        expect(page).to_have_url(re.compile(r"/run\?id=order-7$"))
        says = page.locator(".waiting-for")
        expect(says).to_have_text(
            re.compile(
                r"^waits for order\.paid where order_id = 7, "
                r"until \d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC \(in (1 d 23 h|2 d)\)$"
            )
        )
        expect(page.locator(".bar .badge").first).to_have_text("waiting")
        wait = page.locator("table.steps tbody tr").first
        expect(wait.locator('[data-label="Finished"]')).to_have_text("not yet")
        expect(wait.locator('[data-label="Duration"]')).to_contain_text("so far")
        expect(wait.locator('[data-label="Result or error"]')).to_contain_text(
            "waits for order.paid where order_id = 7, until "
        )
        expect(page.locator("main")).not_to_contain_text('"since"')
        if shots := os.environ.get("TICKWORK_SCREENSHOTS"):  # to look at it: a folder
            page.screenshot(path=str(Path(shots) / "waiting-run.png"), full_page=True)

        # The payment comes while the page is open: the live refresh shows it completed.
        engine.emit("order.paid", {"order_id": 7}, id="paid-7")
        expect(page.locator(".bar .badge").first).to_have_text("completed")
        expect(page.locator(".waiting-for")).to_have_count(0)
        assert order.result(timeout=60) == "shipped"

        # Back on the Events page: the event woke the run, and nothing waits any more.
        page.goto(url + "/events")
        paid = page.locator("table.events tr", has_text="paid-7")
        expect(paid.get_by_role("link", name="order-7")).to_be_visible()
        expect(page.get_by_text("No run waits for an event.")).to_be_visible()

        # The debounced subscription's page: both events, each extending the window.
        page.locator("table.subscriptions tr", has_text="profile.changed").get_by_role(
            "link"
        ).first.click()
        expect(page).to_have_url(re.compile(r"/subscription\?key="))
        history = page.locator("table.flow-history tbody tr")
        expect(history).to_have_count(2)
        expect(history.first).to_contain_text("debounced")
        expect(history.first).to_contain_text("extended the debounce window")
        expect(history.first).to_contain_text("profile-2")
        expect(history.nth(1)).to_contain_text("opened the debounce window")

        page.set_viewport_size({"width": 390, "height": 844})
        for path in ("/events", page.url.removeprefix(url)):
            page.goto(url + path)
            assert page.evaluate(OVERFLOW) == 0, f"{path} is wider than a 390px screen"
    assert errors == []  # no script errors, no Content-Security-Policy violations
