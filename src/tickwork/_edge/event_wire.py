"""JSON forms of events and subscriptions, both ways: what the API answers, the Client
reads back and ``tickwork events ... --json`` prints (DESIGN §9)."""

from __future__ import annotations

from typing import Any

from .._values.durations import describe_duration
from .._values.event_flow import SubscriptionDecision
from .._values.models import EventInfo, SubscriptionInfo
from .._values.wire_values import form, from_json, to_json

__all__ = [
    "decision_list_from_wire",
    "decision_list_to_wire",
    "emitted_from_wire",
    "emitted_text",
    "emitted_to_wire",
    "event_list_from_wire",
    "event_list_to_wire",
    "flow_text",
    "subscription_list_to_wire",
]


def event_list_to_wire(events: list[EventInfo]) -> dict[str, Any]:
    return {"events": [to_json(e) for e in events]}


def event_list_from_wire(data: dict[str, Any]) -> list[EventInfo]:
    return [from_json(EventInfo, e) for e in data["events"]]


def emitted_to_wire(event: EventInfo) -> dict[str, Any]:
    """An emit's answer: the event's id (also one the engine made), the runs it started
    (``runs``, the same again for an id) and the waiting runs it woke (``woke``)."""
    return {
        "name": event.name,
        "id": event.id,
        "runs": list(event.started),
        "woke": list(event.woke),
    }


def emitted_from_wire(data: dict[str, Any]) -> list[str]:
    return list(data["runs"])


def emitted_text(event: EventInfo) -> str:
    """An emit in one line, for people: how many runs it started and woke (which woke)."""
    started = len(event.started)
    line = f"Event {event.id}: started {started} run{'' if started == 1 else 's'}, "
    line += f"woke {len(event.woke)}"
    return line + (f" ({', '.join(event.woke)})." if event.woke else ".")


def flow_text(sub: SubscriptionInfo) -> str | None:
    """A subscription's flow control for people (the CLI's table, the dashboard):
    ``debounce 5 min (at most 1 h) by user_id``, ``batch of 100 within 10 s``; None
    for a run per event."""
    by = "" if sub.group_key is None else f" by {sub.group_key}"
    if sub.debounce is not None:
        most = sub.debounce_max
        cap = "" if most is None else f" (at most {describe_duration(most)})"
        return f"debounce {describe_duration(sub.debounce)}{cap}{by}"
    if sub.batch is not None and sub.batch_window is not None:
        return f"batch of {sub.batch} within {describe_duration(sub.batch_window)}{by}"
    return None


def subscription_list_to_wire(subs: list[SubscriptionInfo]) -> dict[str, Any]:
    return {"subscriptions": [to_json(s) for s in subs]}


def decision_list_to_wire(entries: list[SubscriptionDecision]) -> dict[str, Any]:
    """``GET /subscriptions/{key}/history``'s answer (and ``events history --json``'s)."""
    return {"history": [to_json(e) for e in entries]}


def decision_list_from_wire(data: dict[str, Any]) -> list[SubscriptionDecision]:
    return [form(SubscriptionDecision).validate_python(e) for e in data["history"]]
