"""Waiting for a background thread's effect: poll a condition until it holds, with a
bound that only a broken test reaches (never a timing expectation: machines are noisy)."""

from __future__ import annotations

import time
from collections.abc import Callable

#: seconds: a bound on waiting for a background thread, never an expectation
WAIT_S = 30.0


def wait_until(condition: Callable[[], bool], what: str, timeout_s: float = WAIT_S) -> None:
    """Return once ``condition()`` holds; fail saying ``what`` did not happen."""
    deadline = time.monotonic() + timeout_s
    while not condition():
        assert time.monotonic() < deadline, f"waited {timeout_s:.0f} s, yet not {what}"
        time.sleep(0.005)
