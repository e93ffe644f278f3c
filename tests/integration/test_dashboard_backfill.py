"""The dashboard's backfill form: a first step (GET) that previews how many occurrences the
span holds, a second (POST, with the session's CSRF token) that starts them."""

from __future__ import annotations

import html
import re
from collections.abc import Iterator
from contextlib import ExitStack
from datetime import timedelta

import pytest
from tests.browser import Browser
from tests.timeline import START

from tickwork import Context, Engine
from tickwork.server import create_app
from tickwork.testing import FakeClock


@pytest.fixture
def logged_in(engine: Engine) -> Iterator[Browser]:
    @engine.workflow()
    def job(ctx: Context) -> None:
        return None

    engine.schedule("job", None, key="k", every="10m")
    with ExitStack() as stack:
        browser = Browser(create_app(engine), stack)
        assert browser.login(engine.create_api_key("dashboard")).status_code == 303
        yield browser


def text(body: str) -> str:
    return " ".join(html.unescape(re.sub(r"<[^>]+>", " ", body)).split())


SPAN = {"key": "k", "from": "2026-03-01T11:00", "to": "2026-03-01T12:00", "overlap": ""}


def test_the_preview_counts_the_occurrences_and_starts_nothing(
    logged_in: Browser, engine: Engine
) -> None:
    page = logged_in.get("/schedule", params=SPAN)
    assert page.status_code == 200
    assert "6 occurrences from 2026-03-01T11:00 to 2026-03-01T12:00 UTC" in text(page.text)
    assert "Start 6 runs" in page.text
    assert engine.list_runs() == []


def test_a_bad_span_is_explained_on_the_page(logged_in: Browser) -> None:
    page = logged_in.get("/schedule", params={**SPAN, "to": "2026-03-01T10:00"})
    assert "later than its start" in text(page.text)
    assert "Start" not in re.sub(r"Start a run", "", page.text)


def test_confirming_starts_the_runs_with_a_csrf_token(
    logged_in: Browser, engine: Engine, clock: FakeClock
) -> None:
    token = logged_in.csrf("/schedule?key=k")
    form = {**SPAN, "action": "backfill", "next": "/schedule?key=k"}
    refused = logged_in.post("/schedule/action", data={**form, "csrf": "forged"})
    assert refused.status_code == 403 and engine.list_runs() == []
    done = logged_in.post("/schedule/action", data={**form, "csrf": token})
    assert done.status_code == 303
    assert len(engine.list_runs(schedule_key="k")) == 6
    page = logged_in.get(done.headers["location"])
    assert "k: backfilled 6 occurrence(s)" in text(page.text)
    assert text(page.text).count("backfilled") >= 6  # the history shows each
    first = min(r.scheduled_for for r in engine.list_runs(schedule_key="k"))  # type: ignore[type-var]
    assert first == START - timedelta(hours=1)
