"""The firing loop's one question to the store (``store.firing``): when it is next due.

``firing_due.py`` implements it on both backends.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

__all__ = ["FiringStore"]


class FiringStore(Protocol):
    """When the firing loop (schedules, deadlines, event buffers) next has work."""

    def next_firing_due_ms(
        self, *, pools: Sequence[str], workflows: Sequence[str], ahead_ms: int = 0
    ) -> int | None:
        """When the firing loop next has something to do, or None: the earliest of
        ``next_schedule_due_ms``, ``next_deadline_ms`` and ``next_flush_ms``, read in one
        statement (a worker reads it at every poll)."""
        ...
