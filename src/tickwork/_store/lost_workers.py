"""Whose step lost the worker: a take-over's loss counts against its run only when the
run was the lost worker's only run in flight (``max_recoveries``, DESIGN §1 Durability;
migration 0014).

A worker that dies with several runs in flight says nothing of which step killed it:
counting the loss against each would fail innocent runs that merely shared the process
with a step that kills it. So a loss shared with other runs counts against none, and every
run taken over becomes a *suspect* that runs alone (on a worker with nothing else in
flight) until that execution ends; a step that kills its worker again then does so alone,
and that loss is its own.

Whether the lost worker had other runs in flight is seen at the first take-over of one of
them: the others are still under its leases (a lease token begins with its worker's id).
That take-over records their tokens in ``tickwork_lost_leases``, for their own take-overs,
which no longer see the first run under the lost worker's lease. Two claims taking over
runs of the same worker at once each see the other's run still under its lease (a
statement reads what was committed before it began), or the one that committed first
recorded the other's token; either way both know.
"""

from __future__ import annotations

from collections.abc import Sequence

from .run_rows import lease_worker
from .transaction import Transaction, marks

__all__ = ["LOST_LEASE_KEPT_MS", "lost_with_others"]

#: how long a lost lease is remembered: the runs of a lost worker are taken over once their
#: leases expire, minutes later, unless no worker serves them for that long
LOST_LEASE_KEPT_MS = 24 * 3600 * 1000

# The runs still under leases of the worker (tokens: its id, a dot, 12 hex digits; the
# expression is migration 0014's index), but those this claim took ({marks}: one
# placeholder each), whose new tokens begin with the same id when a worker takes over its
# own runs (it froze past its leases; one engine's run_until_idle calls).
_UNDER_LEASES_OF = """
FROM tickwork_queue
WHERE substr(lease_token, 1, length(lease_token) - 13) = ? AND lease_token IS NOT NULL
    AND id NOT IN ({marks})
"""
COUNT_COMPANIONS = "SELECT COUNT(*)" + _UNDER_LEASES_OF
# Remember their leases as lost with others (in token order: two claims recording the
# same tokens wait for each other in one order, never in a cycle).
RECORD_COMPANIONS = f"""
INSERT INTO tickwork_lost_leases (token, lost_at)
SELECT lease_token, ? {_UNDER_LEASES_OF}
ORDER BY lease_token
ON CONFLICT (token) DO NOTHING
"""
# Whether a lease was recorded as lost with others.
WAS_SHARED = "SELECT 1 FROM tickwork_lost_leases WHERE token = ?"
# Forget lost leases whose runs have long been taken over.
FORGET_LOST = "DELETE FROM tickwork_lost_leases WHERE lost_at < ?"


def lost_with_others(
    tx: Transaction, token: str, now_ms: int, taken: Sequence[str], *, taken_with: int = 0
) -> bool:
    """Whether the worker of the expired lease ``token`` had other runs in flight than
    those ``taken`` by this claim when it was lost; ``taken_with``: how many of them this
    claim took over (PostgreSQL's one-statement claim has given them new tokens already).
    Their leases are recorded for the take-overs still to come."""
    worker, exclude = lease_worker(token), marks(len(taken))
    (others,) = tx.execute(COUNT_COMPANIONS.format(marks=exclude), worker, *taken).fetchone()
    if others:
        tx.execute(RECORD_COMPANIONS.format(marks=exclude), now_ms, worker, *taken)
    recorded = tx.execute(WAS_SHARED, token).fetchone() is not None
    tx.execute(FORGET_LOST, now_ms - LOST_LEASE_KEPT_MS)
    return others > 0 or taken_with > 0 or recorded
