"""Notes on the dashboard, in process: the text field beside the state buttons on a
schedule's page, the note on that page and beside the state on the Schedules page, a
refused note said and nothing changed; ``pause_after_failures`` on the schedule's page."""

from __future__ import annotations

import html
import re
from collections.abc import Iterator
from contextlib import ExitStack

import httpx
import pytest
from tests.browser import Browser

from tickwork import Context, Engine
from tickwork.server import create_app


@pytest.fixture
def logged_in(engine: Engine) -> Iterator[Browser]:
    @engine.workflow("report")
    def report(ctx: Context) -> None:
        return None

    engine.schedule("report", every="15m", key="k", pause_after_failures=3)
    with ExitStack() as stack:
        browser = Browser(create_app(engine), stack)
        assert browser.login(engine.create_api_key("dashboard")).status_code == 303
        yield browser


def text(response: httpx.Response) -> str:
    words = re.sub(r"<svg.*?</svg>", " ", response.text, flags=re.S)
    return " ".join(html.unescape(re.sub(r"<[^>]+>", " ", words)).split())


def test_the_schedules_page_has_a_note_field_beside_the_buttons(logged_in: Browser) -> None:
    page = logged_in.get("/schedule", params={"key": "k"}).text
    form = page[page.index('action="/schedule/action"') :]
    form = form[: form.index("</form>")]
    assert 'name="note"' in form and 'value="pause"' in form
    assert "3 in a row" in text(logged_in.get("/schedule", params={"key": "k"}))


def test_a_note_sent_with_pause_is_kept_and_shown(logged_in: Browser, engine: Engine) -> None:
    response = logged_in.act("k", "pause", note="  incident <42> & co  ")
    assert response.status_code == 303
    info = engine.get_schedule("k")
    assert info is not None and info.state == "paused" and info.note == "incident <42> & co"
    page = logged_in.get("/schedule", params={"key": "k"})
    assert "incident <42> & co" in text(page) and "incident <42>" not in page.text  # escaped
    listed = logged_in.get("/")
    assert "incident <42> & co" in text(listed)
    assert 'title="incident &lt;42&gt; &amp; co"' in listed.text


def test_an_empty_note_field_is_no_note(logged_in: Browser, engine: Engine) -> None:
    logged_in.act("k", "pause", note="")
    info = engine.get_schedule("k")
    assert info is not None and info.state == "paused" and info.note is None
    assert [(h.decision, h.reason) for h in engine.schedule_history("k")] == [("paused", "")]


def test_a_refused_note_is_said_and_changes_nothing(logged_in: Browser, engine: Engine) -> None:
    response = logged_in.act("k", "pause", note="x" * 1001)
    assert response.status_code == 303
    assert "k: not paused: A note must be" in text(logged_in.get("/"))
    info = engine.get_schedule("k")
    assert info is not None and info.state == "active" and info.note is None
