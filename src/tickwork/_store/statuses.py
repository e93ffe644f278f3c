"""The ended half of a run's statuses as an SQL condition, written once.

Partial indexes on ``tickwork_runs`` hold the ended runs (``completed``, ``failed``,
``cancelled``; the unfinished ones are in ``tickwork_queue``, migration 0011), and SQLite
uses a partial index only for a query that repeats its WHERE word for word: every such
index and every query meant for it takes its condition from here (migrations 0004 and
0005 write the same words).

It is a chain of ``<>``, not an ``IN`` list, for the write path: SQLite evaluates an
index's WHERE at every insert and update of a row, and an ``IN`` list there builds a
temporary table each time. Measured with callgrind on SQLite 3.40 (a run inserted,
claimed and finished, three transactions): about 160,000 instructions more per run for
each partial index written with ``IN``, about 10,000 with the chain.

A ``waiting`` run (issue 31) passes this condition too, and the indexes keep its words
rather than be rebuilt on every upgraded database: each query here also asks for what
only an ended run has (a ``finished_at`` before a cutoff, or one named status), so a
waiting run, which has neither, is never pruned nor listed as ended.
"""

from __future__ import annotations

__all__ = ["ENDED"]

#: a run that has ended for good: completed, failed or cancelled
ENDED = "status <> 'pending' AND status <> 'sleeping' AND status <> 'running'"
