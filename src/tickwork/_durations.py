"""Durations: the one way every option that takes a length of time is read."""

from __future__ import annotations

import math
import re
from datetime import timedelta
from fractions import Fraction
from typing import Any

from .errors import ConfigError

__all__ = ["Duration", "format_duration", "parse_duration", "to_ms"]

Duration = int | timedelta | str | dict[str, Any]

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
_ONE_MS = timedelta(milliseconds=1)
_MAX_MS = timedelta.max // _ONE_MS


def parse_duration(value: Duration) -> timedelta:
    """Read a duration: int milliseconds, ``timedelta``, ``"1h30m"`` or ``{"hours": 1}``.

    Zero, negative and malformed durations raise ``ConfigError``.
    """
    return timedelta(milliseconds=to_ms(value))


def to_ms(value: Duration) -> int:
    """The duration in whole milliseconds (what the stores keep)."""
    if isinstance(value, bool):
        raise ConfigError(f"Bad duration {value!r}: expected milliseconds, not a bool")
    if isinstance(value, int):
        ms = value
    elif isinstance(value, timedelta):
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
            f"Bad duration {value!r}: expected int milliseconds, timedelta, str such as "
            f"'30s' or a dict such as {{'minutes': 5}}"
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
