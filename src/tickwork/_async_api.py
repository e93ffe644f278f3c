"""``<name>_async``: the async variant of every blocking call ``Engine`` and ``Client`` share.

Each runs its blocking twin in a worker thread (``asyncio.to_thread``), so an event loop
never waits on the database or the network; parameters, results and errors are the
twin's. One mixin for both classes keeps the two APIs the same by construction.
"""

from __future__ import annotations

import asyncio
import functools
from collections.abc import Callable
from datetime import datetime
from typing import Any, Protocol

from ._durations import Duration
from ._handle import RunHandle
from ._models import HistoryEntry, RunInfo, RunStatus, ScheduleInfo, StepInfo
from ._retry import Retry

__all__ = ["AsyncTwins"]


class _Blocking(Protocol):
    """The blocking calls the async twins run (``Engine`` and ``Client`` have them all)."""

    start: Callable[..., RunHandle]
    get_run: Callable[[str], RunInfo | None]
    list_runs: Callable[..., list[RunInfo]]
    list_steps: Callable[[str], list[StepInfo]]
    cancel: Callable[[str], bool]
    schedule: Callable[..., str]
    unschedule: Callable[[str], bool]
    pause: Callable[[str], bool]
    resume: Callable[[str], bool]
    deactivate: Callable[[str], bool]
    activate: Callable[[str], bool]
    trigger: Callable[[str], str | None]
    get_schedule: Callable[[str], ScheduleInfo | None]
    list_schedules: Callable[[], list[ScheduleInfo]]
    schedule_history: Callable[[str, int], list[HistoryEntry]]


class AsyncTwins:
    """The ``_async`` methods; see each blocking twin for what it does."""

    # -- runs ----------------------------------------------------------------------------

    async def start_async(
        self: _Blocking,
        workflow: str | Callable[..., Any],
        input: Any = None,
        *,
        run_id: str | None = None,
        priority: int | None = None,
        pool: str | None = None,
        delay: Duration | None = None,
    ) -> RunHandle:
        start = functools.partial(
            self.start, workflow, input, run_id=run_id, priority=priority, pool=pool, delay=delay
        )
        return await asyncio.to_thread(start)

    async def get_run_async(self: _Blocking, run_id: str) -> RunInfo | None:
        return await asyncio.to_thread(self.get_run, run_id)

    async def list_runs_async(
        self: _Blocking,
        *,
        workflow: str | None = None,
        status: RunStatus | str | None = None,
        schedule_key: str | None = None,
        limit: int = 100,
        before: str | None = None,
    ) -> list[RunInfo]:
        listing = functools.partial(
            self.list_runs,
            workflow=workflow,
            status=status,
            schedule_key=schedule_key,
            limit=limit,
            before=before,
        )
        return await asyncio.to_thread(listing)

    async def list_steps_async(self: _Blocking, run_id: str) -> list[StepInfo]:
        return await asyncio.to_thread(self.list_steps, run_id)

    async def cancel_async(self: _Blocking, run_id: str) -> bool:
        return await asyncio.to_thread(self.cancel, run_id)

    # -- schedules -----------------------------------------------------------------------

    async def schedule_async(
        self: _Blocking,
        workflow: str | Callable[..., Any],
        input: Any = None,
        *,
        every: Duration | None = None,
        cron: str | None = None,
        timezone: str = "UTC",
        key: str | None = None,
        overlap: str = "allow",
        catchup: int | str = 1,
        catchup_window: Duration | None = None,
        jitter: Duration | None = None,
        paused: bool | None = None,
        pool: str | None = None,
        priority: int | None = None,
        retry: Retry | None = None,
        start_at: datetime | None = None,
        end_at: datetime | None = None,
        on_conflict: str = "update",
    ) -> str:
        register = functools.partial(
            self.schedule,
            workflow,
            input,
            every=every,
            cron=cron,
            timezone=timezone,
            key=key,
            overlap=overlap,
            catchup=catchup,
            catchup_window=catchup_window,
            jitter=jitter,
            paused=paused,
            pool=pool,
            priority=priority,
            retry=retry,
            start_at=start_at,
            end_at=end_at,
            on_conflict=on_conflict,
        )
        return await asyncio.to_thread(register)

    async def unschedule_async(self: _Blocking, key: str) -> bool:
        return await asyncio.to_thread(self.unschedule, key)

    async def pause_async(self: _Blocking, key: str) -> bool:
        return await asyncio.to_thread(self.pause, key)

    async def resume_async(self: _Blocking, key: str) -> bool:
        return await asyncio.to_thread(self.resume, key)

    async def deactivate_async(self: _Blocking, key: str) -> bool:
        return await asyncio.to_thread(self.deactivate, key)

    async def activate_async(self: _Blocking, key: str) -> bool:
        return await asyncio.to_thread(self.activate, key)

    async def trigger_async(self: _Blocking, key: str) -> str | None:
        return await asyncio.to_thread(self.trigger, key)

    async def get_schedule_async(self: _Blocking, key: str) -> ScheduleInfo | None:
        return await asyncio.to_thread(self.get_schedule, key)

    async def list_schedules_async(self: _Blocking) -> list[ScheduleInfo]:
        return await asyncio.to_thread(self.list_schedules)

    async def schedule_history_async(
        self: _Blocking, key: str, limit: int = 100
    ) -> list[HistoryEntry]:
        return await asyncio.to_thread(self.schedule_history, key, limit)
