"""Take the README's dashboard screenshots: ``.venv/bin/python docs/screenshots.py``.

Builds a throw-away database with a few workflows, schedules and runs on a FakeClock (so
the pictures are the same every time), serves the dashboard with uvicorn on 127.0.0.1 and
photographs it with Debian's chromium through Playwright (nothing is downloaded). Writes
``docs/dashboard-schedules.png``, ``docs/dashboard-schedule.png`` and ``docs/dashboard-run.png``.
"""

from __future__ import annotations

import socket
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import uvicorn
from playwright.sync_api import sync_playwright

from tickwork import Context, Engine, Retry
from tickwork.server import create_app
from tickwork.testing import FakeClock

DOCS = Path(__file__).resolve().parent
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
]  # fmt: skip
# How many pixels the widest part of the page (or of a scrolling table) overflows by.
OVERFLOW = """Math.max(0, document.documentElement.scrollWidth - window.innerWidth,
    ...[...document.querySelectorAll(".scroll")].map(e => e.scrollWidth - e.clientWidth))"""
START = datetime(2026, 11, 30, 5, 3, 20, tzinfo=UTC)


def build(engine: Engine, clock: FakeClock) -> str:
    """Workflows, schedules and a morning of runs; returns the run to photograph."""

    def taking(duration: str, value: Any) -> Callable[[], Any]:
        def step() -> Any:
            clock.advance(duration)  # the step "takes" this long on the fake clock
            return value

        return step

    deliveries = {"tries": 0}

    def deliver() -> dict[str, list[str]]:
        clock.advance("1.2s")
        deliveries["tries"] += 1
        if deliveries["tries"] == 1:  # the mail server refuses the first try
            raise ConnectionError("smtp.example.com: 421 too many connections")
        return {"sent_to": ["ops@example.com", "cfo@example.com"]}

    @engine.workflow("nightly-report")
    def nightly_report(ctx: Context, input: dict[str, Any] | None = None) -> dict[str, Any]:
        rows = ctx.step("gather", taking("1.8s", {"orders": 1284, "refunds": 17}))
        ctx.step("render", taking("640ms", "report-2026-11-30.pdf"))
        ctx.sleep("let-the-cdn-catch-up", "4s")
        ctx.step("deliver", deliver, retry=Retry(max_attempts=3, backoff="3s"))
        return {"rows": rows["orders"] + rows["refunds"], "file": "report-2026-11-30.pdf"}

    syncs = {"n": 0}

    @engine.workflow("sync-invoices")
    def sync_invoices(ctx: Context) -> dict[str, int]:
        syncs["n"] += 1
        fetched = ctx.step("fetch", taking(f"{1.4 + (syncs['n'] * 5 % 9) / 4:.2f}s", 42))
        ctx.step("upsert", taking("900ms", fetched))
        if syncs["n"] % 11 == 0:
            raise RuntimeError("invoice 2026-1184: duplicate number")
        return {"invoices": fetched}

    @engine.workflow("crm-export")
    def crm_export(ctx: Context) -> None:
        ctx.step("connect", taking("5s", "crm.example.com"))

        def push() -> None:
            clock.advance("1.5s")
            raise ConnectionError("crm.example.com: 503 Service Unavailable")

        ctx.step("push", push)

    @engine.workflow("cleanup")
    def cleanup(ctx: Context, input: dict[str, Any]) -> int:
        return int(ctx.step("delete-old-rows", taking("300ms", 318)))

    engine.schedule(
        "nightly-report",
        {"team": "ops"},
        cron="0 7 * * *",
        timezone="Europe/Paris",
        key="nightly-report",
    )
    engine.schedule("sync-invoices", None, every="15m", key="sync-invoices")
    engine.schedule("cleanup", {"older_than_days": 30}, every="1h", key="cleanup")
    engine.schedule(
        "crm-export", None, cron="30 8 * * MON-FRI", timezone="America/New_York", key="crm-export"
    )
    engine.schedule("nightly-report", {"team": "sales"}, cron="0 6 * * MON",
                    timezone="Asia/Tokyo", key="weekly-sales-digest")  # fmt: skip
    start = clock.now()
    for i in range(1, 29):  # seven hours of the fleet's life, a tick every 15 minutes...
        late = timedelta(seconds=(i * 7) % 12)  # ...give or take a busy worker's delay
        clock.set(start + i * timedelta(minutes=15) + late)
        engine.tick()
        for _ in range(4):  # sleeps and retries: a few seconds later
            engine.run_until_idle()
            clock.advance("2s")
    engine.trigger("crm-export")
    engine.run_until_idle()
    engine.pause("cleanup")
    engine.deactivate("weekly-sales-digest")
    clock.advance("3m")
    engine.tick()
    engine.run_until_idle()
    [report] = engine.list_runs(schedule_key="nightly-report", limit=1)
    return report.id


@contextmanager
def serve(app: Any) -> Iterator[str]:
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.bind(("127.0.0.1", 0))
    server = uvicorn.Server(uvicorn.Config(app, lifespan="off", ws="none", log_level="warning"))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    while not server.started:
        time.sleep(0.02)  # noqa: TID251 (a script, not the library)
    try:
        yield f"http://127.0.0.1:{sock.getsockname()[1]}"
    finally:
        server.should_exit = True
        thread.join()


def main() -> None:
    with tempfile.TemporaryDirectory() as folder:
        clock = FakeClock(START)
        with Engine(f"sqlite:///{folder}/tickwork.db", clock=clock) as engine:
            run_id = build(engine, clock)
            key = engine.create_api_key("screenshots")
            # A worker, so the pages show a served fleet (no "no worker is alive" banner);
            # on the stopped FakeClock it finds nothing due.
            with (
                engine.worker(threads=1),
                serve(create_app(engine)) as url,
                sync_playwright() as playwright,
            ):
                browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
                page = browser.new_page(viewport={"width": 1280, "height": 720})
                page.goto(url + "/login")
                page.fill("#key", key)
                page.get_by_role("button", name="Log in").click()
                page.wait_for_url(url + "/")
                overflow = page.evaluate(OVERFLOW)
                assert overflow == 0, f"the schedules page is {overflow}px wider than 1280px"
                page.screenshot(path=DOCS / "dashboard-schedules.png", full_page=True)
                page.goto(f"{url}/schedule?key=sync-invoices")
                charts = page.locator("section", has_text="Lateness and duration").bounding_box()
                assert charts is not None, "the schedule's page has no charts"
                bottom = charts["y"] + charts["height"] + 16  # the page down to its charts
                page.screenshot(
                    path=DOCS / "dashboard-schedule.png",
                    clip={"x": 0, "y": 0, "width": 1280, "height": bottom},
                    full_page=True,
                )
                page.goto(f"{url}/run?id={run_id}")
                page.screenshot(path=DOCS / "dashboard-run.png", full_page=True)
                browser.close()
    print("wrote", *(DOCS / f"dashboard-{name}.png" for name in ("schedules", "schedule", "run")))


if __name__ == "__main__":
    main()
