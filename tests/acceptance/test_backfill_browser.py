"""The backfill form, in a real browser (Debian's chromium, Playwright, a real uvicorn
server, a worker in the same process): a span typed on the schedule's page is previewed
with how many runs it will start, confirmed, flashed; the runs appear on the Runs page
and run, and the schedule's history records each occurrence as ``backfilled``. Confirming
the same span again starts nothing more (one run per occurrence).

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

KEY = "nightly-report"
# Five 03:00 occurrences of "0 3 * * *": Jan 1 to Jan 5 (the end is excluded).
SPAN = ("2026-01-01T00:00", "2026-01-06T00:00")  # as chromium sends them back


@pytest.fixture
def site(tmp_path: Path) -> Iterator[tuple[str, Engine, str]]:
    """A served app over a fresh engine with one daily schedule and a worker running:
    (url, engine, API key)."""
    need_chromium()
    with Engine(f"sqlite:///{tmp_path / 'tickwork.db'}") as engine:

        @engine.workflow("nightly-report")
        def nightly_report(ctx: Context) -> str:
            return "done"

        engine.schedule("nightly-report", cron="0 3 * * *", key=KEY)
        key = engine.create_api_key("browser-test")
        with engine.worker(threads=2, poll_interval="200ms"), serve(create_app(engine)) as url:
            yield url, engine, key


def test_a_backfill_is_previewed_confirmed_and_shown_in_runs_and_history(
    site: tuple[str, Engine, str],
) -> None:
    from playwright.sync_api import expect

    url, engine, key = site
    next_fire = engine.get_schedule(KEY).next_fire_at  # type: ignore[union-attr]
    errors: list[str] = []  # console errors, CSP refusals among them, and script errors
    with dashboard_page(errors) as page:
        log_in(page, url, key)

        # The first step previews the span and starts nothing.
        page.locator("tr", has_text=KEY).get_by_role("link", name=KEY).click()
        expect(page.locator("h1")).to_have_text(KEY)
        form = page.locator("form.backfill")
        form.get_by_label("From").fill(SPAN[0])
        form.get_by_label("To").fill(SPAN[1])
        form.get_by_role("button", name="Preview").click()
        expect(page.locator(".backfill-count")).to_have_text("5")
        expect(page.locator(".backfill-preview")).to_contain_text(
            f"5 occurrences from {SPAN[0]} to {SPAN[1]} UTC"
        )
        assert engine.list_runs() == []

        # Confirming starts them: a flash, and the history's five backfilled entries.
        page.get_by_role("button", name="Start 5 runs").click()
        expect(page.get_by_role("status")).to_contain_text(f"{KEY}: backfilled 5 occurrence(s)")
        backfilled = page.locator("table.list tbody tr", has_text="backfilled")
        expect(backfilled).to_have_count(5)
        for day in range(1, 6):
            expect(backfilled.filter(has_text=f"2026-01-0{day} 03:00:00")).to_have_count(1)
        runs = engine.list_runs(schedule_key=KEY)
        assert len(runs) == 5
        # The schedule's own cadence did not move.
        assert engine.get_schedule(KEY).next_fire_at == next_fire  # type: ignore[union-attr]

        # The Runs page lists them, and the worker runs them (the live refresh shows it).
        page.get_by_role("link", name="All runs of this schedule").click()
        rows = page.locator("table.list tbody tr")
        expect(rows).to_have_count(5)
        for run in runs:
            expect(rows.filter(has_text=run.id)).to_have_count(1)
        expect(rows.filter(has_text="completed")).to_have_count(5)

        # The same span again: one run per occurrence, nothing more started.
        page.goto(f"{url}/schedule?key={KEY}")
        form.get_by_label("From").fill(SPAN[0])
        form.get_by_label("To").fill(SPAN[1])
        form.get_by_role("button", name="Preview").click()
        page.get_by_role("button", name="Start 5 runs").click()
        expect(page.get_by_role("status")).to_contain_text("backfilled 5 occurrence(s)")
        assert sorted(r.id for r in engine.list_runs(schedule_key=KEY)) == sorted(
            r.id for r in runs
        )

        # Readable on a phone: the form does not widen the schedule's page.
        page.set_viewport_size({"width": 390, "height": 844})
        page.reload()
        expect(form.get_by_label("From")).to_be_visible()
        assert page.evaluate(OVERFLOW) <= 1
        assert errors == []
