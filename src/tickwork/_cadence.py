"""Cadences: the declared-schedule values ``Cron`` and ``Every``, and ``preview``.

``Cron`` and ``Every`` are what ``@engine.workflow(schedule=...)`` and
``Engine(schedules=...)`` take: frozen, validated when built, so a bad cadence fails at
import time rather than when a worker starts. ``preview`` lists upcoming occurrences of a
cadence without registering anything (``engine.preview`` and ``tickwork cron``).
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from types import MappingProxyType
from typing import Any

from ._durations import Duration, format_duration, parse_duration
from .cron import _aware_utc, load_zone, parse
from .errors import ConfigError

__all__ = ["MAX_PREVIEW", "Cron", "Every", "near_dst_transition", "preview", "utc_offset_text"]

#: the most occurrences ``preview`` lists at once
MAX_PREVIEW = 1000

# The keyword arguments of ``engine.schedule`` a declared schedule may carry besides its
# cadence and key; their values are checked when the schedule is registered.
_OPTIONS = frozenset({
    "input", "overlap", "catchup", "catchup_window", "jitter", "paused", "pool", "priority",
    "retry", "start_at", "end_at", "on_conflict",
})  # fmt: skip


def _check_key(key: object) -> None:
    if key is not None and (not isinstance(key, str) or not key.strip()):
        raise ConfigError(f"Bad schedule key {key!r}: expected a non-empty str or None")


def _check_options(options: Mapping[str, Any]) -> Mapping[str, Any]:
    unknown = sorted(set(options) - _OPTIONS)
    if unknown:
        raise ConfigError(
            f"Unknown schedule option(s) {unknown}: expected some of {sorted(_OPTIONS)}"
        )
    return MappingProxyType(dict(options))


def _repr(name: str, first: object, named: Mapping[str, object], options: Mapping[str, Any]) -> str:
    parts = [repr(first)]
    parts += [f"{key}={value!r}" for key, value in named.items()]
    parts += [f"{key}={value!r}" for key, value in options.items()]
    return f"{name}({', '.join(parts)})"


@dataclass(frozen=True, init=False, repr=False)
class Cron:
    """A cron cadence: ``Cron("0 2 * * *", timezone="America/Sao_Paulo", key=None)``.

    Further keyword arguments are ``engine.schedule`` options (``overlap="skip"``,
    ``catchup=3``, ``input={...}``...), kept in ``options``.
    """

    expr: str
    timezone: str = "UTC"
    key: str | None = None
    options: Mapping[str, Any] = field(default_factory=dict, hash=False)

    def __init__(
        self, expr: str, timezone: str = "UTC", key: str | None = None, **options: Any
    ) -> None:
        parse(expr, timezone)  # CronError / ConfigError
        _check_key(key)
        object.__setattr__(self, "expr", expr)
        object.__setattr__(self, "timezone", timezone)
        object.__setattr__(self, "key", key)
        object.__setattr__(self, "options", _check_options(options))

    def __repr__(self) -> str:
        named = {"timezone": self.timezone, "key": self.key}
        return _repr("Cron", self.expr, named, self.options)


@dataclass(frozen=True, init=False, repr=False)
class Every:
    """An interval cadence: ``Every("15m", key=None)``; ``every`` is kept as a timedelta.

    ``every`` takes any duration form (``"1h30m"``, ms, timedelta, dict). Further keyword
    arguments are ``engine.schedule`` options, kept in ``options``.
    """

    every: timedelta
    key: str | None = None
    timezone: str = "UTC"
    options: Mapping[str, Any] = field(default_factory=dict, hash=False)

    def __init__(
        self, every: Duration, key: str | None = None, timezone: str = "UTC", **options: Any
    ) -> None:
        step = parse_duration(every)  # ConfigError
        load_zone(timezone)
        _check_key(key)
        object.__setattr__(self, "every", step)
        object.__setattr__(self, "key", key)
        object.__setattr__(self, "timezone", timezone)
        object.__setattr__(self, "options", _check_options(options))

    def __repr__(self) -> str:
        named = {"key": self.key, "timezone": self.timezone}
        return _repr("Every", format_duration(self.every), named, self.options)


def preview(
    *,
    cron: str | None = None,
    every: Duration | None = None,
    timezone: str = "UTC",
    after: datetime,
    count: int = 5,
) -> list[datetime]:
    """The first ``count`` occurrences strictly after ``after``, as aware UTC datetimes.

    Exactly one of ``cron`` (an expression, read in ``timezone``) and ``every`` (a
    duration: occurrences are ``after + k * every``). ``count`` is 1 to 1000. Anything
    invalid raises ``ConfigError`` (``CronError`` for the expression).
    """
    if (cron is None) == (every is None):
        raise ConfigError("preview: pass exactly one of cron= and every=")
    if isinstance(count, bool) or not isinstance(count, int) or not 1 <= count <= MAX_PREVIEW:
        raise ConfigError(f"Bad count {count!r}: expected an int from 1 to {MAX_PREVIEW}")
    start = _aware_utc(after, "after")
    if cron is not None:
        return list(itertools.islice(parse(cron, timezone).iter(start), count))
    load_zone(timezone)
    step = parse_duration(every)  # type: ignore[arg-type]  # not None: checked above
    try:
        return [start + step * k for k in range(1, count + 1)]
    except OverflowError:
        raise ConfigError(f"Bad after {after!r}: occurrences would pass year 9999") from None


def near_dst_transition(
    instant: datetime, timezone: str, *, within: timedelta = timedelta(hours=3)
) -> bool:
    """Whether ``timezone``'s UTC offset changes within ``within`` of ``instant``.

    For marking occurrences that DST moves (a CLI note, a dashboard badge). It compares the
    offsets at ``instant - within``, ``instant`` and ``instant + within``, so a change
    and its reversal both inside the window would go unseen; no zone does that in hours.
    """
    zone = load_zone(timezone)
    middle = _aware_utc(instant, "instant")
    offsets = set()
    for shift in (-within, timedelta(0), within):
        try:
            offsets.add((middle + shift).astimezone(zone).utcoffset())
        except OverflowError:  # the window reaches past year 1 or 9999
            continue
    return len(offsets) > 1


def utc_offset_text(when: datetime, timezone: str) -> str:
    """The UTC offset of ``timezone`` at ``when`` as ``+HH:MM`` (``+HH:MM:SS`` if needed)."""
    offset = when.astimezone(load_zone(timezone)).utcoffset() or timedelta(0)
    sign = "-" if offset < timedelta(0) else "+"
    seconds = abs(int(offset.total_seconds()))
    hours, rest = divmod(seconds, 3600)
    minutes, seconds = divmod(rest, 60)
    text = f"{sign}{hours:02d}:{minutes:02d}"
    return f"{text}:{seconds:02d}" if seconds else text
