"""``twin``: the ``<name>_async`` variant of a blocking ``Engine`` or ``Client`` method.

The twin runs its blocking method in a worker thread (``asyncio.to_thread``), so an
event loop never waits on the database or the network; it takes the same parameters
(type checkers see them, through ``ParamSpec``), returns the same result and raises the
same errors.
"""

from __future__ import annotations

import asyncio
import functools
from collections.abc import Callable, Coroutine
from typing import Any, Concatenate, ParamSpec, TypeVar

__all__ = ["twin"]

P = ParamSpec("P")
R = TypeVar("R")
S = TypeVar("S")


def twin(
    blocking: Callable[Concatenate[S, P], R],
) -> Callable[Concatenate[S, P], Coroutine[Any, Any, R]]:
    """``blocking`` as a coroutine method run in a worker thread (signature kept)."""

    @functools.wraps(blocking)
    async def run(self: S, /, *args: P.args, **kwargs: P.kwargs) -> R:
        return await asyncio.to_thread(blocking, self, *args, **kwargs)

    run.__name__ = f"{blocking.__name__}_async"
    run.__qualname__ = f"{blocking.__qualname__}_async"
    return run
