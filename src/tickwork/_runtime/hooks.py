"""Run hooks and the error hook: user callbacks whose own errors are reported, never raised.

``on_error`` receives every error of firing and of the worker loop; without it they are
logged. Nothing is ever silently dropped (DESIGN §1, hooks).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from .._values.models import DeadlineMissed, RunInfo

__all__ = ["DeadlineHook", "ErrorHook", "Hook", "Hooks", "Outage"]

log = logging.getLogger("tickwork")

Hook = Callable[[RunInfo], Any]
ErrorHook = Callable[[BaseException, dict[str, Any]], Any]
DeadlineHook = Callable[[DeadlineMissed], Any]


@dataclass
class Hooks:
    """Callbacks for run events; their own errors go to ``on_error``, never further."""

    on_error: ErrorHook | None = None
    started: list[Hook] = field(default_factory=list)
    completed: list[Hook] = field(default_factory=list)
    failed: list[Hook] = field(default_factory=list)
    deadline_missed: list[DeadlineHook] = field(default_factory=list)

    def report(self, error: BaseException, info: dict[str, Any]) -> None:
        """Hand an error to ``on_error``, or log it when there is no hook (never drop it)."""
        if self.on_error is not None:
            try:
                self.on_error(error, info)
                return
            except Exception:
                log.exception("the on_error hook itself failed")
        where = info.get("where", "error")
        log.error("%s: %s: %s", where, type(error).__name__, error, exc_info=error, extra=info)

    def fire(self, hooks: list[Hook], run: RunInfo) -> None:
        for hook in hooks:
            try:
                hook(run)
            except Exception as exc:
                self.report(
                    exc, {"where": f"hook {getattr(hook, '__name__', hook)}", "run_id": run.id}
                )

    def deadline(self, missed: DeadlineMissed) -> None:
        """Hand a recorded deadline miss to every ``on_deadline_missed`` hook."""
        for hook in self.deadline_missed:
            try:
                hook(missed)
            except Exception as exc:
                where = f"hook {getattr(hook, '__name__', hook)}"
                self.report(exc, {"where": where, "run_id": missed.run_id})


class Outage:
    """A database outage as one part of a worker meets it (its loop, its heartbeat, its
    lease renewals): reported once when it begins, not at every attempt, and its end said
    once in the log, so that each outage reported has its line saying it is over, even
    when this part alone met it (the others waited for a connection and never failed)."""

    __slots__ = ("_down", "_hooks", "_where")

    def __init__(self, hooks: Hooks, where: str) -> None:
        self._hooks, self._where, self._down = hooks, where, False

    def failed(self, error: BaseException) -> None:
        if not self._down:
            self._down = True
            self._hooks.report(error, {"where": self._where, "outage": True})

    def succeeded(self) -> None:
        if self._down:
            self._down = False
            log.warning("the database is reachable again (%s)", self._where)
