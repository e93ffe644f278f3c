"""Flow control on a subscription (DESIGN §9): debounce and batch, as pure decisions.

``On(name, debounce="5m", key="user_id", debounce_max="1h")`` starts one run per key
once no event of that key came for 5 minutes (at the latest an hour after the first);
its input is the last payload. ``On(name, batch=100, batch_window="10s")`` starts one
run with a list of up to 100 payloads, at the latest 10 s after the first. Events wait
in a *buffer* per (subscription, key value); an emit updates it (``buffered``), the
workers' firing loop starts the run once it is due (``_store/sql_events.py``), exactly
once: the buffer's row is deleted in the transaction that inserts the run. The run's id
is the subscription's key and the buffer's first event id, so it is the same on every
worker.

Every decision (a window opened or extended, an event batched, a run started and why, a
buffer dropped) is a ``Decided`` stored in the subscription's history in the same
transaction, as a schedule's decisions are: ``engine.subscription_history(key)`` answers
"why did this run start now, with this input?".
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import timedelta
from enum import StrEnum
from typing import Any

from ..errors import ConfigError
from .clock import capped
from .durations import Duration, describe_duration, to_ms
from .ids import JSON, canonical_json
from .wire_values import Instant

__all__ = [
    "MAX_BATCH",
    "Buffer",
    "Decided",
    "Flow",
    "FlowDecision",
    "SubscriptionDecision",
    "buffered",
    "decided_on_event",
    "decided_on_flush",
    "flow_run_id",
]

#: the most payloads one batch run gets
MAX_BATCH = 10_000


@dataclass(frozen=True, slots=True)
class Flow:
    """A subscription's flow control, checked: either a debounce or a batch."""

    debounce_ms: int | None = None
    debounce_max_ms: int | None = None
    batch: int | None = None
    batch_window_ms: int | None = None
    #: a dotted payload path: one buffer per value found there (None: one buffer)
    key: str | None = None

    @classmethod
    def of(
        cls,
        *,
        debounce: Duration | None,
        debounce_max: Duration | None,
        batch: int | None,
        batch_window: Duration | None,
        key: str | None,
    ) -> Flow | None:
        """The flow ``On``'s arguments ask for (None: each event starts its run)."""
        if debounce is None and batch is None:
            if debounce_max is not None or batch_window is not None or key is not None:
                raise ConfigError(
                    "debounce_max, batch_window and key need debounce= or batch= "
                    "on the same On(...)"
                )
            return None
        if debounce is not None and batch is not None:
            raise ConfigError("An On(...) debounces or batches, not both")
        if debounce is not None:
            if batch_window is not None:
                raise ConfigError("batch_window goes with batch=, not debounce=")
            wait = _positive(debounce, "debounce")
            most = None if debounce_max is None else _positive(debounce_max, "debounce_max")
            if most is not None and most < wait:
                raise ConfigError("debounce_max must be at least debounce")
            return cls(debounce_ms=wait, debounce_max_ms=most, key=key)
        if debounce_max is not None:
            raise ConfigError("debounce_max goes with debounce=, not batch=")
        if isinstance(batch, bool) or not isinstance(batch, int) or not 1 <= batch <= MAX_BATCH:
            raise ConfigError(f"batch must be an int from 1 to {MAX_BATCH}, not {batch!r}")
        if batch_window is None:
            raise ConfigError("batch= needs batch_window=: how long the first event waits")
        return cls(batch=batch, batch_window_ms=_positive(batch_window, "batch_window"), key=key)

    def to_json(self) -> str:
        return canonical_json({k: getattr(self, k) for k in self.__slots__})

    @classmethod
    def from_json(cls, value: dict[str, Any]) -> Flow:
        return cls(**value)


def _positive(value: Duration, what: str) -> int:
    ms = to_ms(value, what)
    if ms <= 0:
        raise ConfigError(f"{what} must be longer than 0, not {value!r}")
    return ms


@dataclass(frozen=True, slots=True)
class Buffer:
    """The events waiting for one run: the first's id and instant, their payloads (a
    debounce keeps the last only), and when the run is due."""

    first_event: str
    first_ms: int
    due_ms: int
    payloads: tuple[JSON, ...]
    #: how many events it holds (a debounce keeps only the last payload)
    count: int = 1


def buffered(
    flow: Flow, buffer: Buffer | None, event_id: str, payload: JSON, now_ms: int
) -> tuple[Buffer, bool]:
    """The buffer after an event, and whether its run starts now (a full batch)."""
    count = 1 if buffer is None else buffer.count + 1
    if buffer is None:
        buffer = Buffer(event_id, now_ms, now_ms, ())
    if flow.debounce_ms is not None:
        due = capped(now_ms + flow.debounce_ms)
        if flow.debounce_max_ms is not None:
            due = min(due, buffer.first_ms + flow.debounce_max_ms)
        return replace(buffer, due_ms=due, payloads=(payload,), count=count), False
    assert flow.batch is not None and flow.batch_window_ms is not None
    payloads = (*buffer.payloads, payload)
    due = capped(buffer.first_ms + flow.batch_window_ms)
    after = replace(buffer, due_ms=due, payloads=payloads, count=count)
    return after, len(payloads) >= flow.batch


def flow_run_id(subscription: str, flow: Flow, first_event: str) -> str:
    """The run a buffer starts: its subscription and first event (unique, and the same
    on every worker)."""
    kind = "debounce" if flow.debounce_ms is not None else "batch"
    return f"{subscription}@{kind}:{first_event}"


class FlowDecision(StrEnum):
    """What the firing side decided for a debounced or batched subscription."""

    #: an event opened or extended a debounce window (``due_at``: when its run starts)
    DEBOUNCED = "debounced"
    #: an event joined a batch (``due_at``: when the batch starts at the latest)
    BATCHED = "batched"
    #: a buffer's run started: quiet for the debounce, debounce_max reached, batch full,
    #: or batch_window ended (the reason says which)
    STARTED = "started"
    #: a buffer's run id existed already (its run was started before): nothing new
    ALREADY_STARTED = "already_started"
    #: a buffer came due after its subscription was removed: its events start nothing
    DROPPED = "dropped"


@dataclass(frozen=True, slots=True)
class SubscriptionDecision:
    """One decision in a subscription's history (``engine.subscription_history``).

    ``group`` is the value at the flow's ``key`` path the buffer is for (None without a
    key); ``event_id`` the event decided on (for a run started, the buffer's first);
    ``run_id`` the run started, or the one the buffer will start; ``count`` the events in
    the buffer; ``due_at`` when its run starts at the latest (None once decided).
    """

    key: str
    decision: FlowDecision
    reason: str
    group: Any
    event_id: str | None
    run_id: str | None
    count: int
    due_at: Instant | None
    decided_at: Instant


@dataclass(frozen=True, slots=True)
class Decided:
    """A decision as the store records it, beside the change it describes."""

    decision: FlowDecision
    reason: str
    event_id: str | None
    run_id: str | None
    count: int
    due_ms: int | None


def _said(ms: int) -> str:
    return describe_duration(timedelta(milliseconds=ms))


def _events(n: int) -> str:
    return "1 event" if n == 1 else f"{n} events"


def decided_on_event(
    flow: Flow, subscription: str, before: Buffer | None, after: Buffer, full: bool,
    event_id: str,
) -> Decided:  # fmt: skip
    """Why an event did what it did to its buffer (``buffered``'s outcome)."""
    run_id = flow_run_id(subscription, flow, after.first_event)
    if flow.debounce_ms is not None:
        verb = "opened" if before is None else "extended"
        most = flow.debounce_max_ms
        if most is not None and after.due_ms == after.first_ms + most:
            until = f"up to debounce_max ({_said(most)} after the first event)"
        else:
            until = f"the run starts after {_said(flow.debounce_ms)} without an event"
        reason = f"{verb} the debounce window: {until}"
        reason += f", with the last of {_events(after.count)}"
        return Decided(FlowDecision.DEBOUNCED, reason, event_id, run_id, after.count, after.due_ms)
    assert flow.batch is not None and flow.batch_window_ms is not None
    if full:
        reason = f"batch full: {_events(after.count)} (batch={flow.batch})"
        return Decided(FlowDecision.STARTED, reason, event_id, run_id, after.count, None)
    reason = (
        f"joined the batch: {after.count} of {flow.batch}; it starts at the latest "
        f"{_said(flow.batch_window_ms)} after its first event"
    )
    return Decided(FlowDecision.BATCHED, reason, event_id, run_id, after.count, after.due_ms)


def decided_on_flush(
    flow: Flow | None, subscription: str, buffer: Buffer, *, started: bool
) -> Decided:
    """Why a due buffer's run started (or not: ``flow`` None, its subscription removed;
    ``started`` False, its run existed already)."""
    if flow is None:
        reason = (
            f"the subscription was removed before its run was due: {_events(buffer.count)} dropped"
        )
        return Decided(FlowDecision.DROPPED, reason, buffer.first_event, None, buffer.count, None)
    run_id = flow_run_id(subscription, flow, buffer.first_event)
    if not started:
        reason = "the buffer's run existed already: nothing started"
        return Decided(
            FlowDecision.ALREADY_STARTED, reason, buffer.first_event, run_id, buffer.count, None
        )
    if flow.debounce_ms is not None:
        capped = flow.debounce_max_ms is not None and (
            buffer.due_ms == buffer.first_ms + flow.debounce_max_ms
        )
        why = (
            f"debounce_max reached ({_said(flow.debounce_max_ms or 0)} after the first event)"
            if capped
            else f"no event for {_said(flow.debounce_ms)}"
        )
        reason = f"{why}: started with the last of {_events(buffer.count)}"
    else:
        reason = (
            f"batch_window ended ({_said(flow.batch_window_ms or 0)} after the first event): "
            f"started with {_events(buffer.count)}"
        )
    return Decided(FlowDecision.STARTED, reason, buffer.first_event, run_id, buffer.count, None)
