"""Whose step lost the worker: a take-over's loss counts against its run only when the
run was the lost worker's only run in flight (``max_recoveries``, DESIGN §1 Durability;
migration 0014).

A worker that dies with several runs in flight says nothing of which step killed it:
counting the loss against each would fail innocent runs that merely shared the process
with a step that kills it. So a loss shared with other runs counts against none, and every
run taken over becomes a *suspect* that runs alone (on a worker with nothing else in
flight) until that execution ends; a step that kills its worker again then does so alone,
and that loss is its own.

Whether the lost worker had other runs in flight is decided at its first take-over: they
are still under its leases then (a lease token begins with its worker's id). The answer is
kept per worker in ``tickwork_lost_workers`` for the take-overs of the others, whose
companions' leases are gone by then. Two claims taking over runs of the same worker at
once both see each other's run still under its lease (their snapshots precede the other's
commit), or the one that commits first recorded the answer: the upsert waits on it.
"""

from __future__ import annotations

from .run_rows import lease_worker
from .transaction import Transaction

__all__ = ["LOST_WORKER_KEPT_MS", "lost_with_others"]

#: how long a lost worker's answer is kept: its runs are taken over once their leases
#: expire, which is minutes later, unless no worker runs for that long
LOST_WORKER_KEPT_MS = 24 * 3600 * 1000

# The other runs still under leases of the worker (tokens: the id, a dot, 12 hex digits;
# the expression is migration 0014's index).
COUNT_COMPANIONS = """
SELECT COUNT(*) FROM tickwork_queue
WHERE substr(lease_token, 1, length(lease_token) - 13) = ? AND lease_token IS NOT NULL
    AND id <> ?
"""
# Record the lost worker, or read what its first take-over recorded; shared only grows.
RECORD_LOSS = """
INSERT INTO tickwork_lost_workers (worker, shared, lost_at) VALUES (?, ?, ?)
ON CONFLICT (worker) DO UPDATE SET shared = CASE
    WHEN excluded.shared = 1 THEN 1 ELSE tickwork_lost_workers.shared END
RETURNING shared
"""
# Forget lost workers whose runs have long been taken over.
FORGET_LOST = "DELETE FROM tickwork_lost_workers WHERE lost_at < ?"


def lost_with_others(
    tx: Transaction, token: str, run_id: str, now_ms: int, *, taken_with: int = 0
) -> bool:
    """Whether the worker of the expired lease ``token``, which held ``run_id``, had other
    runs in flight when it was lost. ``taken_with``: how many other runs of that worker
    this same claim took over already under new tokens (PostgreSQL's one-statement claim)."""
    worker = lease_worker(token)
    (others,) = tx.execute(COUNT_COMPANIONS, worker, run_id).fetchone()
    (shared,) = tx.execute(RECORD_LOSS, worker, int(others + taken_with > 0), now_ms).fetchone()
    tx.execute(FORGET_LOST, now_ms - LOST_WORKER_KEPT_MS)
    return bool(shared)
