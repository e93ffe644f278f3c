"""The dashboard's Events page and a waiting run's page (DESIGN §9)."""

from __future__ import annotations

import html
import re
from collections.abc import Iterator
from contextlib import ExitStack
from typing import Any

import httpx
import pytest
from tests.browser import Browser

from tickwork import Context, Engine, On
from tickwork.server import create_app


def text(response: httpx.Response) -> str:
    words = re.sub(r"<svg.*?</svg>", " ", response.text, flags=re.S)
    return " ".join(html.unescape(re.sub(r"<[^>]+>", " ", words)).split())


@pytest.fixture
def browser(engine: Engine) -> Iterator[Browser]:
    @engine.workflow("welcome", on=On("user.signed_up"))
    def welcome(ctx: Context, input: Any) -> None:
        return None

    @engine.workflow("fulfil")
    def fulfil(ctx: Context, input: Any) -> Any:
        return ctx.wait_for_event("order.paid", match={"order_id": input}, timeout="2d")

    with ExitStack() as stack:
        browser = Browser(create_app(engine), stack)
        assert browser.login(engine.create_api_key("dashboard")).status_code == 303
        yield browser


def test_the_events_page_shows_events_their_runs_and_the_waiting_runs(
    browser: Browser, engine: Engine
) -> None:
    (started,) = engine.emit("user.signed_up", {"user_id": "<b>42</b>"}, id="signup-42")
    engine.start("fulfil", 7, run_id="order-7")
    engine.run_until_idle()
    page = browser.get("/events")
    assert page.status_code == 200
    shown = text(page)
    assert "signup-42" in shown and started in shown
    assert "order-7" in shown and "order.paid" in shown  # waiting, and for what
    assert "<b>42</b>" not in page.text  # a payload is escaped
    engine.emit("order.paid", {"order_id": 7}, id="paid-7")
    shown = text(browser.get("/events", params={"name": "order.paid"}))
    assert "paid-7" in shown and "signup-42" not in shown
    assert "No run waits for an event." in shown


def test_a_waiting_runs_page_says_what_it_waits_for_and_until_when(
    browser: Browser, engine: Engine
) -> None:
    engine.start("fulfil", 7, run_id="order-7")
    engine.run_until_idle()
    shown = text(browser.get("/run", params={"id": "order-7"}))
    assert "waiting for order.paid (until 2026-03-03 12:00:00" in shown


def test_the_events_page_links_an_event_to_the_run_its_look_back_woke(
    browser: Browser, engine: Engine
) -> None:
    """An event emitted after the run started and before it waited is delivered by the
    wait's look back: the page shows the run among the event's runs woken all the same."""

    @engine.workflow("ship")
    def ship(ctx: Context, input: Any) -> Any:
        paid = ctx.wait_for_event("order.paid", match={"order_id": input})
        return None if paid is None else paid.id

    engine.start("ship", 303, run_id="order-303")
    engine.emit("order.paid", {"order_id": 303}, id="paid-303")
    engine.run_until_idle()
    assert engine.get_run("order-303").result == "paid-303"  # type: ignore[union-attr]
    page = browser.get("/events", params={"name": "order.paid"})
    row = next(r for r in page.text.split("<tr") if "paid-303" in r)
    woken = row.split('data-label="Runs woken"')[1].split("</td>")[0]
    assert "order-303" in woken and "none" not in woken
