"""A synchronous HTTP client over an ASGI app that keeps cookies like a browser: the
dashboard's tests drive its pages and forms with it (no server, no threads of uvicorn)."""

from __future__ import annotations

import re
from contextlib import ExitStack
from typing import Any

import anyio.from_thread
import httpx

CSRF = re.compile(r'name="csrf" value="([^"]*)"')


class Browser:
    """A synchronous HTTP client over the app, keeping cookies like a browser."""

    def __init__(self, app: Any, stack: ExitStack, base_url: str = "http://testserver") -> None:
        self.portal = stack.enter_context(anyio.from_thread.start_blocking_portal())
        transport = httpx.ASGITransport(app=app)
        self.client = httpx.AsyncClient(transport=transport, base_url=base_url)
        stack.callback(self.portal.call, self.client.aclose)

    def get(self, url: str, **kwargs: Any) -> httpx.Response:
        return self.portal.call(lambda: self.client.get(url, **kwargs))

    def post(self, url: str, **kwargs: Any) -> httpx.Response:
        return self.portal.call(lambda: self.client.post(url, **kwargs))

    def csrf(self, url: str = "/") -> str:
        """The CSRF token the page at ``url`` puts in its forms."""
        return str(CSRF.findall(self.get(url).text)[0])

    def login(self, key: str) -> httpx.Response:
        token = CSRF.findall(self.get("/login").text)[0]
        return self.post("/login", data={"key": key, "csrf": token, "next": "/"})

    def act(self, key: str, action: str, **extra: str) -> httpx.Response:
        data = {"csrf": self.csrf(), "key": key, "action": action, "next": "/", **extra}
        return self.post("/schedule/action", data=data)
