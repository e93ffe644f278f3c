"""The dashboard's Events page and a waiting run's page (DESIGN §9)."""

from __future__ import annotations

import html
import re
from collections.abc import Iterator
from contextlib import ExitStack
from datetime import timedelta
from typing import Any

import httpx
import pytest
from tests.browser import Browser

from tickwork import Context, Engine, On
from tickwork.server import create_app
from tickwork.testing import FakeClock


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
    assert "order-7" in shown  # waiting, for what and which order:
    assert "order.paid where order_id = 7" in shown
    assert "<b>42</b>" not in page.text  # a payload is escaped
    engine.emit("order.paid", {"order_id": 7}, id="paid-7")
    shown = text(browser.get("/events", params={"name": "order.paid"}))
    assert "paid-7" in shown and "signup-42" not in shown
    assert "No run waits for an event." in shown


def test_a_waiting_runs_page_says_what_it_waits_for_its_match_and_until_when_in_words(
    browser: Browser, engine: Engine, clock: FakeClock
) -> None:
    @engine.workflow("quick")
    def quick(ctx: Context, input: Any) -> Any:
        return ctx.wait_for_event("order.paid", match={"order_id": input}, timeout="18m")

    engine.start("quick", 404, run_id="order-404")
    engine.run_until_idle()
    clock.advance(timedelta(minutes=9))
    page = browser.get("/run", params={"id": "order-404"})
    shown = text(page)
    assert (
        "waits for order.paid where order_id = 404, until 2026-03-01 12:18:00 UTC (in 9 min)"
    ) in shown
    assert '"since"' not in page.text and '"until"' not in page.text  # no raw epoch ms
    (row,) = re.findall(r"<tr>\s*<td data-label=\"#\">1</td>.*?</tr>", page.text, re.S)
    step = text(httpx.Response(200, text=row))
    # Still waiting: not finished, and how long so far (neither 0 ms nor a finish time).
    assert "waiting" in step and "not yet" in step and "9 min so far" in step
    assert "0 ms" not in step


def test_a_finished_sleep_and_wait_show_how_long_each_took_and_when_it_ended(
    browser: Browser, engine: Engine, clock: FakeClock
) -> None:
    @engine.workflow("pays")
    def pays(ctx: Context, input: Any) -> Any:
        ctx.sleep("cool-off", "1h")
        return ctx.wait_for_event("order.paid", match={"order_id": 9}, timeout="2d") is not None

    engine.start("pays", run_id="pays-9")
    engine.run_until_idle()
    clock.advance(timedelta(hours=1))
    engine.run_until_idle()  # now waiting
    clock.advance(timedelta(minutes=25))
    engine.emit("order.paid", {"order_id": 9}, id="paid-9")
    clock.advance(timedelta(minutes=5))
    engine.run_until_idle()
    page = browser.get("/run", params={"id": "pays-9"})
    rows = [text(httpx.Response(200, text=r)) for r in re.findall(r"<tr>.*?</tr>", page.text, re.S)]
    sleep = next(r for r in rows if r.startswith("1 cool-off"))
    wait = next(r for r in rows if r.startswith("2 order.paid"))
    assert "2026-03-01 13:00:00 UTC 1 h" in sleep  # finished at its wake, an hour
    assert "slept 1 h" in sleep
    assert "2026-03-01 13:25:00 UTC 25 min" in wait  # from its start to the event
    assert "paid-9" in wait


def test_a_timed_out_wait_took_its_timeout_and_says_it_timed_out(
    browser: Browser, engine: Engine, clock: FakeClock
) -> None:
    @engine.workflow("quick")
    def quick(ctx: Context, input: Any) -> Any:
        return ctx.wait_for_event("order.paid", match={"order_id": input}, timeout="30m")

    engine.start("quick", 5, run_id="order-5")
    engine.run_until_idle()
    clock.advance(timedelta(minutes=30))
    engine.run_until_idle()
    assert engine.get_run("order-5").status == "completed"  # type: ignore[union-attr]
    page = browser.get("/run", params={"id": "order-5"})
    (row,) = re.findall(r"<tr>\s*<td data-label=\"#\">1</td>.*?</tr>", page.text, re.S)
    step = text(httpx.Response(200, text=row))
    # From its start, kept when its timeout was written, to the timeout.
    assert "2026-03-01 12:30:00 UTC 30 min" in step and "timed out" in step


def test_a_match_value_is_escaped_where_a_wait_is_shown(browser: Browser, engine: Engine) -> None:
    @engine.workflow("mark")
    def mark(ctx: Context, input: Any) -> Any:
        return ctx.wait_for_event("tag", match={"label": "<b>x</b>"})

    engine.start("mark", run_id="mark-1")
    engine.run_until_idle()
    for page in (browser.get("/run", params={"id": "mark-1"}), browser.get("/events")):
        assert "<b>x</b>" not in page.text
        assert 'tag where label = "<b>x</b>"' in text(page)
    assert "no timeout" in text(browser.get("/run", params={"id": "mark-1"}))


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
