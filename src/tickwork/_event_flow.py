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
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from ._durations import Duration, to_ms
from ._ids import JSON, canonical_json
from .errors import ConfigError

__all__ = ["MAX_BATCH", "Buffer", "Flow", "buffered", "flow_run_id"]

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


def buffered(
    flow: Flow, buffer: Buffer | None, event_id: str, payload: JSON, now_ms: int
) -> tuple[Buffer, bool]:
    """The buffer after an event, and whether its run starts now (a full batch)."""
    if buffer is None:
        buffer = Buffer(event_id, now_ms, now_ms, ())
    if flow.debounce_ms is not None:
        due = now_ms + flow.debounce_ms
        if flow.debounce_max_ms is not None:
            due = min(due, buffer.first_ms + flow.debounce_max_ms)
        return replace(buffer, due_ms=due, payloads=(payload,)), False
    assert flow.batch is not None and flow.batch_window_ms is not None
    payloads = (*buffer.payloads, payload)
    due = buffer.first_ms + flow.batch_window_ms
    return replace(buffer, due_ms=due, payloads=payloads), len(payloads) >= flow.batch


def flow_run_id(subscription: str, flow: Flow, first_event: str) -> str:
    """The run a buffer starts: its subscription and first event (unique, and the same
    on every worker)."""
    kind = "debounce" if flow.debounce_ms is not None else "batch"
    return f"{subscription}@{kind}:{first_event}"
