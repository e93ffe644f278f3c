"""The log lines of a run's life and of firing decisions, and the fields they carry.

Every logger is a child of ``tickwork`` (``tickwork.runs``, ``tickwork.firing``), so a
user's ``logging.getLogger("tickwork")`` setup governs them all. Each line names its run
or schedule in the text and again as ``extra`` fields (``run_id``, ``workflow``,
``attempt``, ``key``...), which a JSON formatter turns into keys.

Nothing is formatted unless the level is on (``isEnabledFor``, ``%``-style arguments),
and a plain start or a step's success is never logged above DEBUG: a fleet firing a
thousand schedules a second must not drown its logs.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from datetime import datetime, timedelta
from typing import Any

from . import clock as _clock
from .durations import describe_duration
from .models import DeadlineMissed, Decision, HistoryEntry, RunInfo
from .retry import Retry

__all__ = [
    "EVENTS",
    "FIRING",
    "RUNS",
    "elapsed",
    "instant",
    "log_child_started",
    "log_deadline_missed",
    "log_decision",
    "log_emitted",
    "log_run",
    "log_step_failed",
]

#: a run's life: started, a step's try failed, sleeping, completed, failed, cancelled...
RUNS = logging.getLogger("tickwork.runs")
#: firing decisions other than a plain start: skipped, buffered, dropped, missed...
FIRING = logging.getLogger("tickwork.firing")
#: what an emit did: the runs it started and the waiting runs it woke
EVENTS = logging.getLogger("tickwork.events")
#: history entries that record a state change rather than an occurrence's fate
_STATE_CHANGES = frozenset({
    Decision.PAUSED, Decision.RESUMED, Decision.DEACTIVATED, Decision.ACTIVATED,
    Decision.AUTO_PAUSED,
})  # fmt: skip


def run_fields(info: RunInfo) -> dict[str, Any]:
    """The ``extra`` fields of a run's line."""
    fields: dict[str, Any] = {
        "run_id": info.id,
        "workflow": info.workflow,
        "attempt": info.attempt,
    }
    if info.schedule_key is not None:
        fields["key"] = info.schedule_key
    return fields


def log_run(
    level: int, info: RunInfo, message: str, *args: Any, exc_info: BaseException | None = None
) -> None:
    """Log "run <id> <message % args>" about ``info`` on ``tickwork.runs``."""
    if RUNS.isEnabledFor(level):
        RUNS.log(
            level, "run %s " + message, info.id, *args, exc_info=exc_info, extra=run_fields(info)
        )


def log_child_started(parent: RunInfo, child_id: str) -> None:
    """A workflow's ``ctx.start`` started a child run (INFO on ``tickwork.runs``)."""
    log_run(logging.INFO, parent, "started child run %s", child_id)


def log_step_failed(info: RunInfo, step: str, tries: int, exc: BaseException, retry: Retry) -> None:
    """A step's try failed (WARNING): its error, and when it is tried again."""
    if not RUNS.isEnabledFor(logging.WARNING):
        return
    error = f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
    if retry.allows_another(tries):
        then = f"retry in {elapsed(retry.delay_ms(tries))}"
    else:
        then = "no tries left"
    log_run(logging.WARNING, info, "step %r try %d failed: %s; %s", step, tries, error, then)


def log_decision(entry: HistoryEntry) -> None:
    """A firing decision other than a plain start (INFO on ``tickwork.firing``)."""
    if not FIRING.isEnabledFor(logging.INFO):
        return
    what = f"occurrence {instant(entry.occurrence)}"
    if entry.decision in _STATE_CHANGES:  # no occurrence: the instant of the change
        what = f"at {instant(entry.occurrence)}"
    elif entry.count > 1:
        last = "" if entry.last_occurrence is None else f" to {instant(entry.last_occurrence)}"
        what = f"{entry.count} occurrences {instant(entry.occurrence)}{last}"
    fields: dict[str, Any] = {
        "key": entry.key,
        "occurrence": instant(entry.occurrence),
        "decision": entry.decision.value,
        "count": entry.count,
    }
    if entry.run_id is not None:
        fields["run_id"] = entry.run_id
    FIRING.info(
        "schedule %s: %s %s: %s",
        entry.key,
        what,
        entry.decision.value,
        entry.reason,
        extra=fields,
    )


def log_deadline_missed(missed: DeadlineMissed) -> None:
    """A run missed its schedule's deadline (WARNING on ``tickwork.firing``)."""
    FIRING.warning(
        "schedule %s: occurrence %s deadline_missed: %s",
        missed.key,
        instant(missed.occurrence),
        missed.reason,
        extra={
            "key": missed.key,
            "occurrence": instant(missed.occurrence),
            "decision": Decision.DEADLINE_MISSED.value,
            "run_id": missed.run_id,
            "status": missed.status.value,
        },
    )


def log_emitted(name: str, event_id: str, started: Sequence[str], woke: Sequence[str]) -> None:
    """Each run an emit started and each waiting run it woke (INFO on ``tickwork.events``),
    whether ``engine.emit`` or a workflow's ``ctx.emit`` made it."""
    if not EVENTS.isEnabledFor(logging.INFO):
        return
    for run_id in started:
        EVENTS.info("event %s (%s) started run %s", name, event_id, run_id,
                    extra={"event": name, "event_id": event_id, "run_id": run_id})  # fmt: skip
    for run_id in woke:
        EVENTS.info("event %s (%s) woke run %s", name, event_id, run_id,
                    extra={"event": name, "event_id": event_id, "run_id": run_id})  # fmt: skip


def instant(when: datetime | int) -> str:
    """An instant in a log line: ``2026-12-01T14:03:05Z`` (UTC, milliseconds if any)."""
    if isinstance(when, int):
        when = _clock.from_ms(when)
    text = when.strftime("%Y-%m-%dT%H:%M:%S")
    if when.microsecond:
        text += f".{when.microsecond // 1000:03d}"
    return text + "Z"


def elapsed(ms: int) -> str:
    """A length of time for people: ``850 ms``, ``2.1 s``, ``4 min 5 s``, ``2 h 3 min``."""
    return describe_duration(timedelta(milliseconds=ms), rounded=True)
