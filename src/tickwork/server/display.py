"""How the dashboard's templates show times, timings and values: pure text formatting.

Nothing here reads a clock or the database, so every function is a plain value in, text
out, and can be tested without a server.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from typing import Any

from .._values.business_days import BusinessDays
from .._values.checkpoints import relative_words, wait_words, waiting_for
from .._values.clock import from_ms
from .._values.durations import describe_duration
from .._values.models import ScheduleInfo, StepInfo
from ..cron import parse
from ..errors import ConfigError

__all__ = [
    "checkpoint_words",
    "format_elapsed",
    "format_relative",
    "format_utc",
    "pretty_json",
    "timing_words",
]


def format_elapsed(delta: timedelta) -> str:
    """A timing for people: ``850 ms``, ``2.4 s``, ``4 min 5 s``, ``2 h 3 min``."""
    return describe_duration(delta, rounded=True)


def format_relative(when: datetime, now: datetime) -> str:
    """``when`` seen from ``now``: ``in 4 min``, ``3 h 5 min ago``, ``now``."""
    return relative_words(when, now)


def format_utc(when: datetime | None, *, suffix: bool = True) -> str:
    """``2026-03-01 12:30:00 UTC`` (without `` UTC`` in columns headed "(UTC)")."""
    if when is None:
        return ""
    return when.astimezone(UTC).strftime("%Y-%m-%d %H:%M:%S" + (" UTC" if suffix else ""))


def timing_words(info: ScheduleInfo) -> str:
    """A cron's English ("At 09:00 on Monday through Friday", "At 17:00 on the last
    business day of the month (calendar acme)"); "Every 15 min" for an interval."""
    if info.cron is not None:
        # Words need the calendar's name only ("LBD" is a day of its, not of a date).
        days = None if info.calendar is None else BusinessDays(info.calendar)
        try:
            return parse(info.cron, info.timezone, calendar=days).explain()
        except ConfigError:  # a zone gone from this machine's tzdata: show the expression
            return info.cron
    assert info.every is not None
    return f"Every {describe_duration(info.every)}"


def checkpoint_words(step: StepInfo, now: datetime, *, asleep: bool) -> str | None:
    """What a durable sleep, a wait or a recorded ``now()`` stands for, instead of the
    epoch milliseconds stored as its result: "wakes at 2026-03-01 09:19:47 UTC (in 4
    min)" for the sleep a run is ``asleep`` in, "slept 2 s" for one that is over, "waits
    for order.paid where order_id = 404, until … (in 9 min)", "timed out", the instant a
    ``now()`` read; None for a step (and a wait's event: its JSON)."""
    if step.kind == "event":
        wait = waiting_for(step)
        if wait is not None:
            return f"waits for {wait_words(wait, now, format_utc)}"
        return "timed out" if step.status == "completed" and step.result is None else None
    ms = step.result
    if step.kind not in ("sleep", "now") or type(ms) is not int:
        return None
    at = from_ms(ms)
    if step.kind == "now":
        return format_utc(at)
    if asleep:
        return f"wakes at {format_utc(at)} ({format_relative(at, now)})"
    return f"slept {format_elapsed(at - step.started_at)}"


def pretty_json(value: Any) -> str:
    """A run's input, output or error, indented and in a stable order, for a ``<pre>``."""
    return json.dumps(value, indent=2, sort_keys=True, ensure_ascii=False, default=str)
