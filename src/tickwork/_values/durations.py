"""Durations: the one way every option that takes a length of time is read, and written.

Two ways in: ``parse_duration``/``to_ms`` read what a user wrote (a bare number is refused:
people read ``every=5`` as seconds, the stores as milliseconds, and a silent misreading
started 401 runs in 2 s); code that already holds milliseconds builds
``timedelta(milliseconds=ms)`` itself. Two ways out: ``format_duration`` for machines
(``"1h30m"``, read back by ``parse_duration``), ``describe_duration`` for people
(``"1 h 30 min"``).
"""

from __future__ import annotations

import math
import re
from datetime import timedelta
from fractions import Fraction
from typing import Any

from ..errors import ConfigError
from .clock import LAST_MS

__all__ = [
    "Duration",
    "bare_number_error",
    "check_instant",
    "describe_duration",
    "format_duration",
    "instant_after",
    "parse_duration",
    "to_ms",
]

Duration = timedelta | str | dict[str, Any]

_UNIT_MS = {
    "ms": 1,
    "s": 1_000,
    "m": 60_000,
    "h": 3_600_000,
    "d": 86_400_000,
}
_DICT_KEYS_MS = {
    "milliseconds": 1,
    "seconds": 1_000,
    "minutes": 60_000,
    "hours": 3_600_000,
    "days": 86_400_000,
}
# "1h30m", "500ms", "1.5s": numbers with a unit each, units from largest to smallest.
# ASCII digits only (\d would also take Arabic-Indic or full-width digits), and at most 30
# of them each side of the point, which keeps Fraction() far from int()'s digit limit.
_PART = re.compile(r"([0-9]{1,30}(?:\.[0-9]{1,30})?)(ms|s|m|h|d)")
_ORDER = ["d", "h", "m", "s", "ms"]
# "5", "1.5", "-3": a number without its unit, written as text (a CLI flag, a query string).
_BARE = re.compile(r"[+-]?[0-9]+(?:\.[0-9]*)?|[+-]?\.[0-9]+")
_ONE_MS = timedelta(milliseconds=1)
_MAX_MS = timedelta.max // _ONE_MS


def parse_duration(value: Duration) -> timedelta:
    """Read a duration: ``timedelta``, ``"1h30m"`` or ``{"hours": 1}``.

    A bare number (``5``, ``"5"``), zero, negative and malformed durations raise
    ``ConfigError``.
    """
    return timedelta(milliseconds=to_ms(value))


def bare_number_error(value: object) -> ConfigError:
    """The refusal of a number without its unit, showing both ways it could be read."""
    text = str(value).strip()
    return ConfigError(
        f"Bad duration {value!r}: a bare number could be seconds or milliseconds; "
        f"write '{text}s' or '{text}ms'"
    )


def to_ms(value: Duration, name: str | None = None) -> int:
    """A duration a user wrote, in whole milliseconds (what the stores keep); a refusal
    starts with ``name`` (the option's) when given."""
    if name is None:
        return _read_ms(value)
    try:
        return _read_ms(value)
    except ConfigError as exc:
        raise ConfigError(f"{name}: {exc}") from None


def instant_after(now_ms: int, value: Duration, name: str) -> int:
    """``now_ms`` plus the duration a user wrote (``name``: the option's), in epoch ms;
    ``ConfigError`` past ``LAST_MS``, the last instant tickwork stores. Every instant a
    user's duration makes (a start's delay, a sleep, a wait's timeout) comes here."""
    return check_instant(now_ms + to_ms(value, name), name, value)


def check_instant(ms: int, name: str, value: object) -> int:
    """``ms`` when at or before ``LAST_MS``; else a ``ConfigError`` naming ``value``."""
    if ms > LAST_MS:
        raise ConfigError(
            f"{name}: {value!r} ends past 9999-12-31T23:59:59.999Z, the last instant "
            "tickwork can store"
        )
    return ms


def _read_ms(value: Duration) -> int:
    if isinstance(value, bool):
        raise ConfigError(f"Bad duration {value!r}: expected a duration such as '30s', not a bool")
    if isinstance(value, int | float):
        raise bare_number_error(value)
    if isinstance(value, timedelta):
        # Integer arithmetic: total_seconds() is a float and loses exactness past ~285 years.
        ms, rest = divmod(value, _ONE_MS)
        if rest:
            raise ConfigError(f"Bad duration {value!r}: finer than a millisecond")
    elif isinstance(value, str):
        ms = _parse_text(value)
    elif isinstance(value, dict):
        ms = _parse_dict(value)
    else:
        raise ConfigError(
            f"Bad duration {value!r}: expected a timedelta, a str such as '30s' or a dict "
            f"such as {{'minutes': 5}}"
        )
    if ms <= 0:
        raise ConfigError(f"Bad duration {value!r}: must be longer than zero")
    if ms > _MAX_MS:
        raise ConfigError(f"Bad duration {value!r}: longer than a timedelta can hold")
    return ms


def _whole_ms(ms: Fraction, original: object) -> int:
    # Exact fractions, not floats: 2.002 * 60_000 as floats is 120119.99999999999.
    if ms.denominator != 1:
        raise ConfigError(f"Bad duration {original!r}: finer than a millisecond")
    return int(ms)


def _parse_text(text: str) -> int:
    compact = text.strip().replace(" ", "")
    if not compact:
        raise ConfigError(f"Bad duration {text!r}: empty")
    if _BARE.fullmatch(compact):
        raise bare_number_error(compact)
    total = Fraction(0)
    position = 0
    last_rank = -1
    for match in _PART.finditer(compact):
        if match.start() != position:
            break
        rank = _ORDER.index(match.group(2))
        if rank <= last_rank:
            raise ConfigError(
                f"Bad duration {text!r}: units must go from largest to smallest, each once"
            )
        last_rank = rank
        total += Fraction(match.group(1)) * _UNIT_MS[match.group(2)]
        position = match.end()
    if position != len(compact):
        raise ConfigError(
            f"Bad duration {text!r}: expected numbers with units ms, s, m, h, d (e.g. '1h30m')"
        )
    return _whole_ms(total, text)


def _parse_dict(parts: dict[str, Any]) -> int:
    if not parts:
        raise ConfigError("Bad duration {}: empty")
    total = Fraction(0)
    for key, amount in parts.items():
        if key not in _DICT_KEYS_MS:
            raise ConfigError(
                f"Bad duration {parts!r}: unknown key {key!r} (expected {', '.join(_DICT_KEYS_MS)})"
            )
        if isinstance(amount, bool) or not isinstance(amount, int | float):
            raise ConfigError(f"Bad duration {parts!r}: {key} must be a number")
        if not math.isfinite(amount):
            raise ConfigError(f"Bad duration {parts!r}: {key} must be a finite number")
        if amount < 0:
            raise ConfigError(f"Bad duration {parts!r}: {key} must not be negative")
        # A float is read as the decimal it prints as, so {"hours": 0.1} is 6 minutes.
        exact = Fraction(repr(amount)) if isinstance(amount, float) else Fraction(amount)
        total += exact * _DICT_KEYS_MS[key]
    return _whole_ms(total, parts)


def format_duration(value: timedelta) -> str:
    """A duration the way ``parse_duration`` reads it back: ``1h30m``, ``500ms``."""
    ms = value // timedelta(milliseconds=1)
    parts = []
    for unit in _ORDER:
        amount, ms = divmod(ms, _UNIT_MS[unit])
        if amount:
            parts.append(f"{amount}{unit}")
    return "".join(parts) or "0ms"


#: the units people read, largest first, with their length in milliseconds
_SAID = (("d", 86_400_000), ("h", 3_600_000), ("min", 60_000))


def describe_duration(value: timedelta, *, rounded: bool = False) -> str:
    """A duration for people: ``500 ms``, ``1.5 s``, ``15 min``, ``1 h 30 min``, ``7 d``.

    Exact by default (a cadence, a timeout: what was set). ``rounded`` is for timings
    (how long a run took, how late it is): at most two units, tenths of a second under a
    minute (``2.4 s``, ``2 s``), whole seconds above, nothing below zero: "4 min 5 s"
    reads at a glance.
    """
    ms = value // _ONE_MS
    if rounded:
        ms = max(0, ms)
        if 1000 <= ms < 60_000:
            return f"{ms / 1000:.1f}".removesuffix(".0") + " s"
        if ms >= 60_000:
            ms -= ms % 1000
    sign, ms = ("-", -ms) if ms < 0 else ("", ms)
    if ms < 1000:
        return f"{sign}{ms} ms"
    parts = []
    for unit, length in _SAID:
        amount, ms = divmod(ms, length)
        if amount:
            parts.append(f"{amount} {unit}")
    if ms:
        seconds = f"{ms // 1000}.{ms % 1000:03d}".rstrip("0").rstrip(".")
        parts.append(f"{seconds} s")
    return sign + " ".join(parts[:2] if rounded else parts)
