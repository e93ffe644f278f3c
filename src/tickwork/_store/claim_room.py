"""Concurrency limits at a claim: which workflows it may take runs of, and how many.

A workflow with ``concurrency=N`` runs at most N runs under a live lease. A claim counts
them under the workflow's lock (``Database.serialize``: two claims at once cannot both see
room for the last slot) and leaves out the full workflows in SQL, so that they cannot
crowd out the others.
"""

from __future__ import annotations

from .claim_records import ClaimRequest
from .transaction import Database, Transaction, marks

__all__ = ["COUNT_LIVE", "can_claim", "open_workflows"]

# Runs of each limited workflow under a live lease (for concurrency limits), sought in
# tickwork_queue_running (migration 0013); {marks}: one placeholder per workflow.
COUNT_LIVE = """
SELECT workflow, COUNT(*) FROM tickwork_queue
WHERE status = 'running' AND available_at > ? AND workflow IN ({marks})
GROUP BY workflow
"""


def can_claim(request: ClaimRequest) -> bool:
    """Whether ``request`` may take any run at all."""
    return request.limit > 0 and bool(request.limits) and bool(request.pools)


def open_workflows(
    db: Database, tx: Transaction, request: ClaimRequest | None
) -> tuple[list[str], dict[str, int]] | None:
    """The workflows ``request`` may take runs of, and the room each concurrency-limited
    one has, counted under its lock (``Database.serialize``); None if it may take none."""
    if request is None or not can_claim(request):
        return None
    limits = request.limits
    live: dict[str, int] = {}
    limited = [name for name, cap in limits.items() if cap is not None]
    if limited:
        db.serialize(tx, limited)
        count_live = COUNT_LIVE.format(marks=marks(len(limited)))
        live = dict(tx.execute(count_live, request.now_ms, *limited).fetchall())
    # Full workflows are left out in SQL so they cannot crowd out the others.
    opened = [name for name, cap in limits.items() if cap is None or live.get(name, 0) < cap]
    if not opened:
        return None
    room = {name: cap - live.get(name, 0) for name, cap in limits.items() if cap is not None}
    return opened, room
