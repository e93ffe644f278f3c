"""The pruning part of the store contract (``store.pruning``): retention applied a bounded
batch at a time. ``sql_prune.py`` implements it on both backends.
"""

from __future__ import annotations

from typing import Protocol

from .._rules.retention import Cutoffs, PruneBatch, PrunePosition

__all__ = ["PruneStore"]


class PruneStore(Protocol):
    """Removes what retention no longer keeps."""

    def prune_batch(self, *, cutoffs: Cutoffs, budget: int, position: PrunePosition) -> PruneBatch:
        """Remove, in ONE short write transaction, at most ``budget`` rows (runs, steps and
        history entries together) that retention no longer keeps, going on from
        ``position``; return how many went and where the next batch starts.

        Removed: ended runs (``completed``, ``failed``, ``cancelled``) whose ``finished_at``
        is before ``cutoffs.for_workflow(workflow)``, with their steps; history entries
        whose ``decided_at`` is before ``cutoffs.history_ms``. Never removed: unfinished
        runs, a run its schedule names as its latest (``last_run_id``), the run of a
        schedule's latest occurrence that got one (``last_occurrence_at``), a schedule's
        ``KEEP_HISTORY`` newest entries (by id), anything whose cutoff is None. A run goes
        with all its steps in one batch, except a run heavier than a batch: its steps go
        first, ``budget`` at a time. Several stores pruning at once never wait for each
        other nor remove a row twice (rows another transaction holds are skipped, left to
        it); the schedules' positions are on their rows, so nothing fires again.
        A pass starts at ``PrunePosition()`` and ends when ``position.done``.
        """
        ...
