"""Declared schedules waiting for their calendar (DESIGN §3, issue 47).

One declared schedule whose calendar is not stored must not stop a worker from serving
the others: it is left out of the start-up's registration, reported naming it and its
calendar, and handed back for registration once the calendar is stored (the firing
loop asks at each poll while one waits: one read of the calendars' names). What waits
(``pairs``) goes into the worker's record with each renewal (``_heartbeat``), so that the
faces without the app (``tickwork schedules list``, ``tickwork serve``) say why such a
schedule does not fire.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence

from .._rules.spec import ScheduleSpec
from .._runtime.core import Runtime
from ..errors import ConfigError

__all__ = ["WaitingForCalendars"]


class WaitingForCalendars:
    """The declared schedules of one engine left out for a calendar not stored."""

    __slots__ = ("_lock", "_runtime", "_waiting")

    def __init__(self, runtime: Runtime) -> None:
        self._runtime = runtime
        self._waiting: list[tuple[str, ScheduleSpec]] = []  # (key, spec), as declared
        self._lock = threading.Lock()  # a start-up's sync and the loop's poll

    def __bool__(self) -> bool:
        return bool(self._waiting)

    def split(
        self, specs: Sequence[ScheduleSpec], key_of: Callable[[ScheduleSpec], str]
    ) -> list[ScheduleSpec]:
        """The specs whose calendar (if any) is stored; the others wait, each reported
        (``on_error``, else logged at ERROR) naming the schedule and its calendar."""
        stored = self._runtime.store.calendars.calendar_stamps()
        ready: list[ScheduleSpec] = []
        waiting: list[tuple[str, ScheduleSpec]] = []
        for spec in specs:
            if spec.calendar is not None and spec.calendar not in stored:
                waiting.append((key_of(spec), spec))
            else:
                ready.append(spec)
        for key, spec in waiting:
            self._report(spec, key)
        with self._lock:
            self._waiting = waiting
        return ready

    def ready(self) -> list[ScheduleSpec]:
        """The waiting specs whose calendar is stored now, no longer waiting."""
        stored = self._runtime.store.calendars.calendar_stamps()
        with self._lock:
            ready = [spec for _, spec in self._waiting if spec.calendar in stored]
            self._waiting = [(k, s) for k, s in self._waiting if s.calendar not in stored]
        return ready

    def pairs(self) -> tuple[tuple[str, str], ...]:
        """What waits now: (key, calendar) pairs by key (the worker's record)."""
        with self._lock:
            waiting = list(self._waiting)
        return tuple(sorted((key, str(spec.calendar)) for key, spec in waiting))

    def _report(self, spec: ScheduleSpec, key: str) -> None:
        name = spec.calendar
        error = ConfigError(
            f"Schedule {key!r} (workflow {spec.workflow!r}) is not registered: no calendar "
            f"{name!r} is stored. Set it (tickwork calendars set {name} ...) or declare it "
            f"(Engine(calendars=[Calendar({name!r}, ...)])); the schedule is registered once "
            "the calendar is stored, and the other schedules are served meanwhile"
        )
        info = {"where": "registering declared schedules", "schedule_key": key, "calendar": name}
        self._runtime.hooks.report(error, info)
