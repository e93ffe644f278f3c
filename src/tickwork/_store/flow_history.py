"""A debounced or batched subscription's history (migration 0019): its decisions, each
written in the transaction of the change it describes (``sql_events.py``), read newest
first by the subscription's key, pruned under the retention with the events."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from .._values.clock import from_ms
from .._values.event_flow import Decided, FlowDecision, SubscriptionDecision
from .transaction import Transaction

__all__ = ["PRUNE_DECISIONS", "SELECT_DECISIONS", "decision_from_row", "record_decision"]

# One decision.
INSERT_DECISION = """
INSERT INTO tickwork_subscription_history (key, decision, reason, grp, event_id, run_id,
    count, due_at, decided_at)
VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
"""
# A subscription's decisions, newest first (tickwork_subscription_history_key).
SELECT_DECISIONS = """
SELECT key, decision, reason, grp, event_id, run_id, count, due_at, decided_at
FROM tickwork_subscription_history WHERE key = ? ORDER BY id DESC LIMIT ?
"""
# Retention: the oldest decisions made before the cutoff, a batch at a time.
PRUNE_DECISIONS = """
DELETE FROM tickwork_subscription_history WHERE id IN (
    SELECT id FROM tickwork_subscription_history WHERE decided_at < ?
    ORDER BY decided_at, id LIMIT ?)
"""


def record_decision(
    tx: Transaction, subscription: str, group: str, decided: Decided, at_ms: int
) -> None:
    """Store ``decided`` about the buffer ``group`` (its canonical JSON) of ``subscription``."""
    tx.execute(
        INSERT_DECISION, subscription, str(decided.decision), decided.reason, group,
        decided.event_id, decided.run_id, decided.count, decided.due_ms, at_ms,
    )  # fmt: skip


def decision_from_row(row: Sequence[Any]) -> SubscriptionDecision:
    return SubscriptionDecision(
        key=row[0], decision=FlowDecision(row[1]), reason=row[2], group=_group_value(row[3]),
        event_id=row[4], run_id=row[5], count=int(row[6]),
        due_at=None if row[7] is None else from_ms(int(row[7])), decided_at=from_ms(int(row[8])),
    )  # fmt: skip


def _group_value(text: str) -> Any:
    """The value a buffer is for: its group is ``null`` (no key, or none in the payload)
    or the one-element list of the value at the key's path (``_events.match_key``)."""
    value = json.loads(text)
    return value[0] if isinstance(value, list) else None
