"""Run a tickwork worker inside an ASGI app (Starlette, FastAPI)."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Callable
from typing import Any

from ._engine import Engine

__all__ = ["lifespan"]


def lifespan(engine: Engine, *, threads: int = 8) -> Callable[[Any], Any]:
    """A lifespan handler that runs ``engine``'s worker on a thread while the app serves.

    ``Starlette(lifespan=tickwork.asgi.lifespan(engine))``.
    """

    @contextlib.asynccontextmanager
    async def handler(_app: Any) -> AsyncIterator[None]:
        with engine.worker(threads=threads):
            yield

    return handler
