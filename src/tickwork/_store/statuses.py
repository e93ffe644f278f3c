"""The two halves of a run's statuses as SQL conditions, written once.

Partial indexes on ``tickwork_runs`` hold either the unfinished runs (``pending``,
``sleeping``, ``running``) or the ended ones, and SQLite uses a partial index only for a
query that repeats its WHERE word for word: every such index and every query meant for it
takes its condition from here (migrations 0004 and 0005 write the same words).

They are chains of ``<>``, not ``IN`` lists, for the write path: SQLite evaluates an
index's WHERE at every insert and update of a row, and an ``IN`` list there builds a
temporary table each time. Measured with callgrind on SQLite 3.40 (a run inserted,
claimed and finished, three transactions): about 160,000 instructions more per run for
each partial index written with ``IN``, about 10,000 with the chain.
"""

from __future__ import annotations

__all__ = ["ENDED", "UNFINISHED"]

#: a run that may still execute: pending, sleeping or running
UNFINISHED = "status <> 'completed' AND status <> 'failed' AND status <> 'cancelled'"
#: a run that has ended for good: completed, failed or cancelled
ENDED = "status <> 'pending' AND status <> 'sleeping' AND status <> 'running'"
