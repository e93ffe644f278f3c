"""The deadlines part of the store contract (``store.deadlines``): missed deadlines,
checked once each. ``sql_deadlines.py`` implements it on both backends.
"""

from __future__ import annotations

from typing import Protocol

from .._values.models import (
    DeadlineMissed,
    HistoryEntry,
)

__all__ = ["DeadlineStore"]


class DeadlineStore(Protocol):
    """Runs' deadlines, checked and recorded."""

    def record_missed_deadlines(self, *, now_ms: int, limit: int) -> list[DeadlineMissed]:
        """Check up to ``limit`` runs whose deadline (``NewRun.deadline_ms``) is at or
        before ``now_ms``, earliest first: each that had not completed by it (still
        unfinished, failed, cancelled, or completed late) is recorded once as
        ``deadline_missed`` in its schedule's history and counted, in the transaction that
        marks it checked; what it returns is what was recorded. A run that completed by
        its deadline was cleared by ``finish_run`` and is never seen; a run whose schedule
        was removed is marked checked and recorded nowhere. Runs another worker's pass
        holds are skipped, never waited for."""
        ...

    def next_deadline_ms(self) -> int | None:
        """The earliest deadline still to check, or None."""
        ...

    def recent_deadline_misses(self, *, since_ms: int, limit: int) -> list[HistoryEntry]:
        """The ``deadline_missed`` entries of every schedule decided at or after
        ``since_ms``, newest first, at most ``limit`` (an index of those entries only)."""
        ...
