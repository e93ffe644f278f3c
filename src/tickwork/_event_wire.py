"""JSON forms of events and subscriptions, both ways: what the API answers, the Client
reads back and ``tickwork events ... --json`` prints (DESIGN §9)."""

from __future__ import annotations

from typing import Any

from ._durations import describe_duration
from ._event_flow import SubscriptionDecision
from ._models import EventInfo, SubscriptionInfo
from ._wire_values import form, to_json

__all__ = [
    "decision_list_from_wire",
    "decision_list_to_wire",
    "emitted_from_wire",
    "emitted_text",
    "emitted_to_wire",
    "event_from_wire",
    "event_list_from_wire",
    "event_list_to_wire",
    "event_to_wire",
    "flow_text",
    "subscription_from_wire",
    "subscription_list_to_wire",
    "subscription_to_wire",
]


def event_to_wire(event: EventInfo) -> dict[str, Any]:
    return to_json(event)


def event_from_wire(data: dict[str, Any]) -> EventInfo:
    event: EventInfo = form(EventInfo).validate_python(data)
    return event


def event_list_to_wire(events: list[EventInfo]) -> dict[str, Any]:
    return {"events": [event_to_wire(e) for e in events]}


def event_list_from_wire(data: dict[str, Any]) -> list[EventInfo]:
    return [event_from_wire(e) for e in data["events"]]


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


def subscription_to_wire(sub: SubscriptionInfo) -> dict[str, Any]:
    return to_json(sub)


def subscription_from_wire(data: dict[str, Any]) -> SubscriptionInfo:
    sub: SubscriptionInfo = form(SubscriptionInfo).validate_python(data)
    return sub


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
    return {"subscriptions": [subscription_to_wire(s) for s in subs]}


def decision_list_to_wire(entries: list[SubscriptionDecision]) -> dict[str, Any]:
    """``GET /subscriptions/{key}/history``'s answer (and ``events history --json``'s)."""
    return {"history": [to_json(e) for e in entries]}


def decision_list_from_wire(data: dict[str, Any]) -> list[SubscriptionDecision]:
    return [form(SubscriptionDecision).validate_python(e) for e in data["history"]]
