"""Retry policies and their exponential back-off."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from ..errors import ConfigError
from .durations import Duration, to_ms

__all__ = ["MAX_ATTEMPTS", "NO_RETRY", "Retry"]

_MAX_FACTOR = 1000
#: the most attempts a policy allows: past that, retrying is a loop, not a policy
MAX_ATTEMPTS = 10_000


@dataclass(frozen=True, init=False)
class Retry:
    """Try up to ``max_attempts`` times; wait ``backoff * factor**(n-1)`` after failure n.

    The wait is capped at ``max_backoff``. Used on workflows (a failed attempt is retried
    with its completed steps kept) and on steps (the step alone is tried again).
    """

    max_attempts: int
    backoff: timedelta
    factor: float
    max_backoff: timedelta

    def __init__(
        self,
        max_attempts: int = 3,
        backoff: Duration = "1s",
        factor: float = 2.0,
        max_backoff: Duration = "5m",
    ) -> None:
        if (
            isinstance(max_attempts, bool)
            or not isinstance(max_attempts, int)
            or not 1 <= max_attempts <= MAX_ATTEMPTS
        ):
            raise ConfigError(
                f"Retry.max_attempts must be an int from 1 to {MAX_ATTEMPTS}, not {max_attempts!r}"
            )
        if (
            isinstance(factor, bool)
            or not isinstance(factor, int | float)
            or not 1 <= factor <= _MAX_FACTOR
        ):
            raise ConfigError(
                f"Retry.factor must be a number from 1 to {_MAX_FACTOR}, not {factor!r}"
            )
        object.__setattr__(self, "max_attempts", max_attempts)
        object.__setattr__(self, "backoff", timedelta(milliseconds=to_ms(backoff, "Retry.backoff")))
        object.__setattr__(self, "factor", float(factor))
        object.__setattr__(
            self, "max_backoff", timedelta(milliseconds=to_ms(max_backoff, "Retry.max_backoff"))
        )

    def delay_ms(self, failed_attempt: int) -> int:
        """Milliseconds to wait after the ``failed_attempt``-th attempt (1-based) failed."""
        base = self.backoff.total_seconds() * 1000
        cap = self.max_backoff.total_seconds() * 1000
        # Bound the exponent so a huge attempt count cannot overflow a float.
        exponent = min(failed_attempt - 1, 64)
        try:
            return int(min(base * self.factor**exponent, cap))
        except OverflowError:  # the uncapped wait is beyond any float: the cap applies
            return int(cap)

    def to_json(self) -> dict[str, float]:
        """The policy as stored with a schedule's runs."""
        return {
            "max_attempts": self.max_attempts,
            "backoff_ms": self.backoff // timedelta(milliseconds=1),
            "factor": self.factor,
            "max_backoff_ms": self.max_backoff // timedelta(milliseconds=1),
        }

    @classmethod
    def from_json(cls, value: dict[str, Any]) -> Retry:
        """The policy ``to_json`` stored."""
        return cls(
            max_attempts=int(value["max_attempts"]),
            backoff=timedelta(milliseconds=int(value["backoff_ms"])),
            factor=float(value["factor"]),
            max_backoff=timedelta(milliseconds=int(value["max_backoff_ms"])),
        )

    def allows_another(self, failed_attempt: int) -> bool:
        """Whether an attempt may follow the ``failed_attempt``-th failure."""
        return failed_attempt < self.max_attempts


NO_RETRY = Retry(max_attempts=1)
