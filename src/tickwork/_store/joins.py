"""A child's end counted off its parent's join, in the transaction that ends the child
(``RunsSql.finish_run``, a cancel): ``sql_children.py`` says how a join is counted. And
the waking of a waiting run, which an event's delivery does too (``sql_events.py``).
"""

from __future__ import annotations

from .transaction import Database, Transaction

__all__ = ["SELECT_DESCENDANTS", "WAKE_QUEUED", "WAKE_RUN", "count_off", "forget_joins"]

# Wake a waiting run: in the queue (only if it still waits) and in its row.
WAKE_QUEUED = """
UPDATE tickwork_queue SET status = 'pending', available_at = ? WHERE id = ? AND status = 'waiting'
"""
WAKE_RUN = "UPDATE tickwork_runs SET status = 'pending' WHERE id = ?"
# A child's end: its parent's join one fewer (the join the child's row names).
COUNT_OFF = """
UPDATE tickwork_joins SET remaining = remaining - 1
WHERE parent_id = ? AND step = (SELECT joined FROM tickwork_runs WHERE id = ?)
RETURNING remaining, released, total, prefix, step
"""
# A map's window moved on: one more of its children made runnable (held ones wait with
# available_at at the end of time).
RELEASE_NEXT = """
UPDATE tickwork_joins SET released = released + 1 WHERE parent_id = ? AND step = ?
"""
RELEASE_CHILD = """
UPDATE tickwork_queue SET available_at = ? WHERE id = ? AND status = 'pending'
"""
DELETE_JOINS = "DELETE FROM tickwork_joins WHERE parent_id = ?"
# The unfinished runs below one: its children, theirs... (tickwork_runs_parent).
SELECT_DESCENDANTS = """
WITH RECURSIVE below(id) AS (
    SELECT id FROM tickwork_runs WHERE parent_id = ?
    UNION ALL
    SELECT r.id FROM tickwork_runs r JOIN below b ON r.parent_id = b.id
)
SELECT b.id FROM below b JOIN tickwork_queue q ON q.id = b.id
"""


def count_off(db: Database, tx: Transaction, child_id: str, parent_id: str, now_ms: int) -> None:
    """The child ``child_id`` ended in ``tx``: count it off its parent's join, release a
    map's next held child, and wake the parent when it was the last."""
    row = tx.execute(COUNT_OFF, parent_id, child_id).fetchone()
    if row is None:  # not waited for (yet, or any more): the parent reads it when it does
        return
    remaining, released, total, prefix, step = row
    if prefix is not None and released < total:
        tx.execute(RELEASE_NEXT, parent_id, step)
        tx.execute(RELEASE_CHILD, now_ms, f"{prefix}{released}")
        db.notify(tx, "runs")
    if remaining <= 0:
        tx.execute(WAKE_QUEUED, now_ms, parent_id)
        if tx.rowcount == 1:
            tx.execute(WAKE_RUN, parent_id)
            db.notify(tx, "runs")


def forget_joins(tx: Transaction, parent_id: str) -> None:
    """A parent that ends while it waits (a cancel) leaves no join behind."""
    tx.execute(DELETE_JOINS, parent_id)
