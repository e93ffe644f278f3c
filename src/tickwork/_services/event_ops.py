"""Events at the API level: emit, subscriptions, and what was emitted (DESIGN §9).

``Engine``'s event methods hand their work here, as its run methods do to ``Runs``. Every
argument is checked before anything is stored; the store does each emit in one
transaction (``_store/sql_events.py``).
"""

from __future__ import annotations

import threading
from collections.abc import Mapping, Sequence
from datetime import timedelta

from .._rules.registry import WorkflowDef
from .._runtime.core import Runtime
from .._store.event_records import NewEvent, SubscriptionRecord
from .._values.checks import check_limit, check_name
from .._values.clock import from_ms
from .._values.event_flow import Flow, SubscriptionDecision
from .._values.events import (
    On,
    check_event_id,
    check_event_name,
    check_match,
    payload_json,
    subscription_key,
)
from .._values.ids import JSON, canonical_json, from_json, new_run_id
from .._values.models import Event, EventInfo, SubscriptionInfo
from ..errors import ConfigError

__all__ = ["Events"]


class Events:
    """The event operations ``Engine`` exposes."""

    def __init__(self, runtime: Runtime) -> None:
        self._runtime = runtime
        self._declared: set[str] = set()  # workflows whose On(...) are stored
        self._lock = threading.Lock()

    def emit(self, name: str, payload: JSON, *, event_id: str | None) -> list[str]:
        """Store the event, start its subscribed runs and wake its waiting runs; the ids
        of the runs it started (the same again for an id emitted before)."""
        return list(self.emit_event(name, payload, event_id=event_id).started)

    def emit_event(self, name: str, payload: JSON, *, event_id: str | None) -> EventInfo:
        """``emit``, answering the event as stored: its id (also one given here), the runs
        it started and those it woke (for an id emitted before: what is stored for it)."""
        check_event_name(name)
        if event_id is not None:
            check_event_id(event_id)
        text = payload_json(payload)
        now = self._runtime.now_ms()
        event = NewEvent(event_id or new_run_id(now), name, text, now)
        emitted = self._runtime.emit_event(event)
        if emitted.name != name:
            raise ConfigError(
                f"event id {event.id!r} is already an event named {emitted.name!r}, "
                f"not {name!r}: choose another id"
            )
        self._runtime.emitted(event.id, emitted)
        stored = None if emitted.new else self.get(event.id)
        if stored is not None:
            return stored
        # new (or emitted before and pruned since): what this emit stored
        emitted_event = Event(
            name=name, id=event.id, payload=from_json(text), emitted_at=from_ms(now)
        )
        return _info(emitted_event, list(emitted.started), list(emitted.woke))

    def subscribe(
        self,
        definition: WorkflowDef,
        name: str,
        *,
        match: Mapping[str, JSON] | None,
        key: str | None,
    ) -> str:
        """Store a subscription (idempotent by key, the key derived when not given)."""
        on = On(name, match=match)
        if key is not None:
            check_name(key, "A subscription key")
        record = self._record(definition, on, key=key, declared=False)
        self._runtime.store.events.upsert_subscriptions([record])
        return record.key

    def sync_declared(self, definitions: Sequence[WorkflowDef]) -> list[str]:
        """Store the declared subscriptions of workflows not stored yet by this engine."""
        with self._lock:
            fresh = [d for d in definitions if d.on and d.name not in self._declared]
            records = [self._record(d, on, key=None, declared=True) for d in fresh for on in d.on]
            if records:
                self._runtime.store.events.upsert_subscriptions(records)
            self._declared.update(d.name for d in fresh)
        return [r.key for r in records]

    def unsubscribe(self, key: str) -> bool:
        check_name(key, "A subscription key")
        return self._runtime.store.events.delete_subscription(key)

    def subscriptions(self) -> list[SubscriptionInfo]:
        return [_subscription(r) for r in self._runtime.store.events.list_subscriptions()]

    def history(self, key: str, limit: int) -> list[SubscriptionDecision]:
        """A debounced or batched subscription's decisions, newest first."""
        check_name(key, "A subscription key")
        check_limit(limit)
        return self._runtime.store.events.subscription_history(key, limit=limit)

    def get(self, event_id: str) -> EventInfo | None:
        check_event_id(event_id)
        stored = self._runtime.store.events.get_event(event_id)
        return None if stored is None else _info(*stored)

    def query(self, *, name: str | None, limit: int) -> list[EventInfo]:
        check_limit(limit)
        if name is not None:
            check_event_name(name)
        return [
            _info(*row) for row in self._runtime.store.events.list_events(name=name, limit=limit)
        ]

    def counts(self) -> dict[str, int]:
        return self._runtime.store.events.emit_counts()

    def _record(
        self, definition: WorkflowDef, on: On, *, key: str | None, declared: bool
    ) -> SubscriptionRecord:
        match = check_match(on.match)
        return SubscriptionRecord(
            key=key or subscription_key(definition.name, on.name, match, on.input),
            event_name=on.name,
            workflow=definition.name,
            version=definition.version,
            match_json=None if match is None else canonical_json(match),
            input_json=None if on.input is None else canonical_json(dict(on.input)),
            pool=definition.pool,
            priority=definition.priority,
            retry_json=None,  # the workflow's own, when the run executes
            declared=declared,
            created_ms=self._runtime.now_ms(),
            flow_json=None if (flow := on.flow()) is None else flow.to_json(),
        )


def _subscription(r: SubscriptionRecord) -> SubscriptionInfo:
    flow = None if r.flow_json is None else Flow.from_json(from_json(r.flow_json))
    return SubscriptionInfo(
        key=r.key,
        workflow=r.workflow,
        name=r.event_name,
        match=None if r.match_json is None else from_json(r.match_json),
        input=None if r.input_json is None else from_json(r.input_json),
        declared=r.declared,
        created_at=from_ms(r.created_ms),
        debounce=None if flow is None else _span(flow.debounce_ms),
        debounce_max=None if flow is None else _span(flow.debounce_max_ms),
        group_key=None if flow is None else flow.key,
        batch=None if flow is None else flow.batch,
        batch_window=None if flow is None else _span(flow.batch_window_ms),
    )


def _span(ms: int | None) -> timedelta | None:
    return None if ms is None else timedelta(milliseconds=ms)


def _info(event: Event, started: list[str], woke: list[str]) -> EventInfo:
    return EventInfo(
        name=event.name,
        id=event.id,
        payload=event.payload,
        emitted_at=event.emitted_at,
        started=tuple(started),
        woke=tuple(woke),
    )
