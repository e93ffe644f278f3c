"""Upcoming occurrences of a cadence without registering anything, and the DST helpers.

``preview`` serves ``engine.preview`` and ``tickwork cron``; ``near_dst_transition`` and
``utc_offset_text`` mark occurrences that daylight saving time moves (CLI, dashboard).
"""

from __future__ import annotations

import itertools
from datetime import datetime, timedelta

from ._durations import Duration, parse_duration
from .cron import _aware_utc, load_zone, parse
from .errors import ConfigError

__all__ = ["MAX_PREVIEW", "near_dst_transition", "preview", "utc_offset_text"]

#: the most occurrences ``preview`` lists at once
MAX_PREVIEW = 1000


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
