"""The children part of the store contract (``store.children``): child runs started by a
parent's checkpoint, and the parent's counted join (DESIGN §10). ``sql_children.py``
implements it on both backends; a child's end counts itself off in ``RunsSql.finish_run``
(and a cancel's), through ``sql_children.count_off``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from .._values.models import Outcome, RunStatus
from .._values.records import NewJoin, NewRun, StepRecord
from .claim_records import ClaimRequest, Ended

__all__ = ["ChildStore"]


class ChildStore(Protocol):
    """Child runs and the joins their parents wait on."""

    def start_child(
        self, *, run_id: str, token: str, step: StepRecord, child: NewRun, lease_ms: int
    ) -> bool:
        """Insert ``child`` (a run whose ``parent_id`` is ``run_id``; nothing when its id
        exists) and write the parent's checkpoint ``step`` that names it, in one
        transaction, if the parent is still held under ``token`` (else ``LeaseLost``,
        nothing written). True when the child was inserted now."""
        ...

    def join(
        self,
        join: NewJoin,
        *,
        children: Sequence[NewRun] = (),
        then_claim: ClaimRequest | None = None,
    ) -> Ended:
        """Suspend the held parent ``join.run_id`` until the children ``join.child_ids``
        (inserted first when ``children`` is given: a map's, the first
        ``join.released`` runnable and the rest held until released) have all ended.

        In one transaction: the children not ended yet are marked as counting off this
        join (``join.step``) and counted; with none left the parent is pending at once,
        else the join's one row holds the count and the parent is ``waiting`` until
        ``join.until_ms`` (None: until woken). The wait's checkpoint is written
        ``waiting`` with ``join.waiting_json``. A child that ends later, in its ending
        transaction, takes the count down; the last one wakes the parent, exactly once;
        each end under a map's window releases its next held child. ``LeaseLost`` when
        the parent is no longer held under ``join.token``."""
        ...

    def outcomes(self, run_ids: Sequence[str]) -> list[Outcome | None]:
        """How each run ended, in the order asked: None for one not ended (or missing)."""
        ...

    def close_join(self, *, run_id: str, token: str, step: StepRecord, lease_ms: int) -> bool:
        """Write the parent's wait checkpoint ``step`` (completed) and forget the join of
        that step, in one transaction, if the parent is still held (else ``LeaseLost``).
        Its children that still run no longer count off anything."""
        ...

    def counts(self, parent_id: str) -> dict[RunStatus, int]:
        """How many children ``parent_id`` has in each status (one read of its index)."""
        ...

    def remaining(self, parent_id: str, kind: str, step: str) -> int | None:
        """How many children the parent's wait (``kind``, ``step``) still waits for; None
        when it waits for none (ended, or not registered)."""
        ...

    def descendants(self, run_id: str) -> list[str]:
        """The unfinished runs below ``run_id``: its children, theirs, and so on."""
        ...
