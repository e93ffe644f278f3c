"""``RunHandle``: a started run, whether the engine is local or behind a ``Client``."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

from ..errors import RunCancelled, RunFailed, RunTimeout, TickworkError
from . import clock as _clock
from .models import RunInfo, RunStatus

__all__ = ["RunHandle"]


class RunHandle:
    """A started run: ask its status, wait for its result, cancel it.

    ``Engine.start`` and ``Client.start`` both return one; they differ only in how they
    read the run and how they wait between looks (``pause(seconds, look)`` waits at most
    ``seconds``, ``look`` counting from 0).
    """

    def __init__(
        self,
        run_id: str,
        *,
        get_run: Callable[[str], RunInfo | None],
        cancel: Callable[[str], bool],
        pause: Callable[[float, int], None],
    ) -> None:
        self.id = run_id
        self._get_run = get_run
        self._cancel = cancel
        self._pause = pause

    def _run(self) -> RunInfo:
        run = self._get_run(self.id)
        if run is None:
            raise TickworkError(f"Run {self.id} no longer exists")
        return run

    def status(self) -> RunStatus:
        return self._run().status

    def result(self, timeout: float | None = None) -> Any:
        """Wait until the run ends; return its result or raise ``RunFailed`` /
        ``RunCancelled``. With ``timeout`` (seconds, real time), give up with
        ``RunTimeout``; the run goes on.
        """
        deadline = None if timeout is None else _clock.monotonic() + timeout
        look = 0
        while True:
            run = self._run()
            if run.status is RunStatus.COMPLETED:
                return run.result
            if run.status is RunStatus.FAILED:
                raise RunFailed(run.id, run.error)
            if run.status is RunStatus.CANCELLED:
                raise RunCancelled(run.id)
            wait = 1.0
            if deadline is not None:
                wait = deadline - _clock.monotonic()
                if wait <= 0:
                    raise RunTimeout(run.id, run.status.value)
            self._pause(wait, look)
            look += 1

    async def result_async(self, timeout: float | None = None) -> Any:
        return await asyncio.to_thread(self.result, timeout)

    def cancel(self) -> bool:
        return self._cancel(self.id)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, RunHandle) and other.id == self.id

    def __hash__(self) -> int:
        return hash(self.id)

    def __repr__(self) -> str:
        return f"RunHandle({self.id!r})"
