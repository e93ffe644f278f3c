"""Rows of events, subscriptions and waits as they cross the store boundary (DESIGN §9).

Instants are UTC epoch milliseconds; JSON values are canonical JSON text.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from .._values.ids import JSON
from .claim_records import ClaimedRun

__all__ = ["Emitted", "NewEvent", "NewWait", "SubscriptionRecord"]


@dataclass(frozen=True, slots=True)
class NewEvent:
    """An event to emit: its payload as canonical JSON."""

    id: str
    name: str
    payload_json: str
    emitted_ms: int


@dataclass(frozen=True, slots=True)
class Emitted:
    """What an emit did (or, ``new`` False, what the first emit of its id did); ``name``
    is the stored event's name (a second emit may have named another)."""

    name: str
    started: tuple[str, ...]
    woke: tuple[str, ...]
    new: bool
    #: it opened a debounce or batch buffer (or brought one's due time forward): the
    #: firing loops must look again at when the next buffer is due
    buffered: bool = False
    #: runs claimed in the emit's transaction for this process's idle executor
    #: (``emit``'s ``then_claim``)
    claimed: Sequence[ClaimedRun] = ()


@dataclass(frozen=True, slots=True)
class SubscriptionRecord:
    """A subscription as stored: what a run it starts needs, JSON as canonical text."""

    key: str
    event_name: str
    workflow: str
    version: str
    match_json: str | None
    input_json: str | None
    pool: str
    priority: int
    retry_json: str | None
    declared: bool
    created_ms: int
    #: debounce or batch (``_event_flow.Flow.to_json``); None: a run per event
    flow_json: str | None = None


@dataclass(frozen=True, slots=True)
class NewWait:
    """A run about to wait: for the first event of ``names`` matching ``match`` (none of
    ``seen``, the events it was already handed), until ``until_ms`` (None: no timeout).
    ``step`` and ``seq`` name its checkpoint.

    Which events its look back takes is decided by the store's order of inserts, never by
    milliseconds (migration 0022): those stored after ``after`` when given (a wait taken
    up again: the mark its checkpoint kept), else after the run's insert
    (``since_run``, ``since="run"``) or after this wait began (``since="wait"``: the look
    back finds none). A run stored before 0022 has no mark: its look back keeps the rule
    it had, events emitted at ``since_ms`` or later."""

    run_id: str
    token: str
    names: tuple[str, ...]
    match: dict[str, JSON] | None
    since_ms: int
    until_ms: int | None
    step: str
    seq: int
    seen: frozenset[str]
    now_ms: int
    attempt: int
    since_run: bool = True
    after: int | None = None
