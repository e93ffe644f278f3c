"""What the dashboard's browser tests share: Debian's chromium driven by Playwright, a
real uvicorn server on a free port, a page that gathers every script error and
Content-Security-Policy violation, and logging in with an API key.

Without /usr/bin/chromium the tests skip, except under CI (``CI=true``), where they fail.
"""

from __future__ import annotations

import os
import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from playwright.sync_api import Page

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
]  # fmt: skip
# How many pixels the widest part of the page (or of a scrolling table) overflows by.
OVERFLOW = """Math.max(0, document.documentElement.scrollWidth - window.innerWidth,
    ...[...document.querySelectorAll(".scroll")].map(e => e.scrollWidth - e.clientWidth))"""
# How many lines an element's text is laid out on (one box per line of a wrapped text).
TEXT_LINES = """e => { const r = document.createRange(); r.selectNodeContents(e);
    return new Set([...r.getClientRects()].map(b => Math.round(b.top))).size; }"""
WAIT_MS = 60_000  # generous: reached only when something is broken


def need_chromium() -> None:
    if os.path.exists(CHROMIUM):
        return
    reason = f"{CHROMIUM} is missing (apt-get install chromium); the browser test needs it"
    if os.environ.get("CI"):
        pytest.fail(reason)
    pytest.skip(reason)


@contextmanager
def serve(app: Any) -> Iterator[str]:
    """``app`` on a real uvicorn server on a free port of 127.0.0.1, in a thread."""
    import uvicorn

    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    config = uvicorn.Config(app, lifespan="off", ws="none", log_level="warning")
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    try:
        deadline = time.monotonic() + WAIT_MS / 1000
        while not server.started:
            assert thread.is_alive(), "uvicorn stopped before it started serving"
            assert time.monotonic() < deadline, "uvicorn did not start serving"
            time.sleep(0.02)
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(WAIT_MS / 1000)
        sock.close()


@contextmanager
def dashboard_page(errors: list[str]) -> Iterator[Page]:
    """A 1280x900 page of Debian's chromium; its console errors (CSP violations among
    them) and uncaught script errors are appended to ``errors``."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            page = browser.new_page(viewport={"width": 1280, "height": 900})
            page.set_default_timeout(WAIT_MS)
            page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
            page.on("pageerror", lambda exc: errors.append(str(exc)))
            yield page
        finally:
            browser.close()


def log_in(page: Page, url: str, key: str) -> None:
    """Log in with ``key`` from the login page the dashboard sends a visitor to."""
    from playwright.sync_api import expect

    page.goto(url + "/")
    expect(page).to_have_url(f"{url}/login")
    page.fill("#key", key)
    page.get_by_role("button", name="Log in").click()
    expect(page).to_have_url(f"{url}/")
