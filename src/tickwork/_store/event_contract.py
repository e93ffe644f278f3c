"""The events part of the store contract: events, subscriptions and waits (DESIGN §9),
``store.events``.

Every method's rules are in its docstring; ``sql_events.py`` implements them on both
backends.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from .._values.event_flow import SubscriptionDecision
from .._values.models import Event
from .claim_records import ClaimRequest, Ended
from .event_records import Emitted, NewEvent, NewWait, SubscriptionRecord

__all__ = ["EventStore", "StoredEvent"]

#: an event as listed: the event, the ids of the runs it started and of those it woke
StoredEvent = tuple[Event, list[str], list[str]]


class EventStore(Protocol):
    """Events, the subscriptions they start runs of, and the runs waiting for them."""

    def emit(self, event: NewEvent, *, then_claim: ClaimRequest | None = None) -> Emitted:
        """Store ``event`` and, in the same transaction, insert one run for every
        subscription of its name whose ``match`` its payload matches (run id
        ``_events.event_run_id(key, event.id)``, input ``_events.map_input``) and wake
        every run waiting for it whose wait's match it matches (the wait's checkpoint
        completed with the event, the run ``pending`` at once, its waits removed).

        Idempotent by ``event.id``, however many emit it at once: when the id is stored
        already, nothing changes and the first emit's outcome is returned (``new`` False).
        A waiting run is woken by one event only, whichever commits first.

        With ``then_claim`` (a new event only), runs are claimed in the same transaction
        as by ``claim_runs`` and returned in ``Emitted.claimed``: this process's idle
        executor takes the run the emit started without a claim of its own.
        """
        ...

    def wait_run(self, wait: NewWait, *, then_claim: ClaimRequest | None) -> Ended:
        """Suspend the held run ``wait.run_id`` until an event, in one transaction with
        the look back: when an event of ``wait.names`` emitted at ``since_ms`` or later,
        not one of ``seen``, matches, the earliest is written as the wait's completed
        checkpoint and the run is ``pending`` at once; else the wait is registered, its
        checkpoint ``waiting`` and the run ``waiting`` until ``until_ms`` (then a claim
        takes it, and the workflow sees the timeout). ``LeaseLost`` for a stale token.
        An emit committed at any moment is either found by the look back or wakes the
        run: both lock the name first.
        """
        ...

    def flush_due(self, *, now_ms: int, limit: int) -> list[str]:
        """Start the run of at most ``limit`` debounce or batch buffers due at ``now_ms``
        (``_event_flow``), each exactly once across processes: the buffer is removed in
        the transaction that inserts its run. The ids of the runs started.

        Every decision about a buffer, here and in ``emit`` (an event debounced or
        batched, a run started, a buffer dropped because its subscription is gone), is
        recorded in the subscription's history in the same transaction
        (``_event_flow.decided_on_event`` / ``decided_on_flush``): exactly one entry per
        decision however many workers flush at once."""
        ...

    def subscription_history(self, key: str, *, limit: int) -> list[SubscriptionDecision]:
        """The subscription's decisions, newest first (through its index: the cost of a
        page does not grow with the history kept). Kept after an unsubscribe."""
        ...

    def next_flush_ms(self) -> int | None:
        """When the next buffer is due, or None."""
        ...

    def upsert_subscriptions(self, records: Sequence[SubscriptionRecord]) -> None:
        """Register or redefine each subscription by key (its ``created_ms`` kept)."""
        ...

    def delete_subscription(self, key: str) -> bool:
        """Remove a subscription; False when there was none under ``key``."""
        ...

    def list_subscriptions(self) -> list[SubscriptionRecord]:
        """Every subscription, by key."""
        ...

    def get_event(self, event_id: str) -> StoredEvent | None:
        """One event, with the runs it started and woke."""
        ...

    def list_events(self, *, name: str | None, limit: int) -> list[StoredEvent]:
        """The newest events (of ``name``, when given), newest first."""
        ...

    def prune_events(self, *, before_ms: int, limit: int) -> int:
        """Remove at most ``limit`` events emitted before ``before_ms``, oldest first, then
        (within the same ``limit``) subscriptions' decisions made before it, in one
        transaction; how many rows went. The counts in ``emit_counts`` stay."""
        ...

    def emit_counts(self) -> dict[str, int]:
        """Events emitted per name, ever (``tickwork_events_total``: pruning lowers none)."""
        ...
