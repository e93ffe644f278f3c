"""Events as values: ``On`` and ``Event``, and the pure rules of routing one (DESIGN §9).

An event is a name and a JSON payload. A subscription's ``match`` and a wait's ``match``
are data, not code: a dict of dotted payload paths to values, all of which must be
equal, so that an event emitted over HTTP by a process without the code is routed the
same way. A subscription's ``input`` maps the run's input keys to dotted payload paths.
The ids derived here (a subscription's key, the run an event starts) are the same on
every machine, so the store's unique run id makes "one run per (event, subscription)"
hold however many processes emit the same event at once.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..errors import ConfigError
from .checks import CONTROL_SAID, clip, has_control
from .clock import from_ms
from .durations import Duration
from .event_flow import Flow
from .ids import JSON, canonical_json
from .models import Event

__all__ = [
    "MAX_PATH",
    "MAX_PAYLOAD_BYTES",
    "On",
    "check_event_id",
    "check_event_name",
    "check_match",
    "event_from_json",
    "event_run_id",
    "event_to_json",
    "map_input",
    "match_key",
    "match_paths",
    "matches",
    "payload_json",
    "subscription_key",
    "subscriptions",
]

#: the longest event name or id (characters), as a run id's
MAX_EVENT_NAME = 200
#: the longest payload path (``match=`` keys, ``On(key=)``, ``input=``'s paths), as a name
MAX_PATH = 200
#: the largest payload stored (bytes of canonical JSON): an event is a message, not a file
MAX_PAYLOAD_BYTES = 1_000_000
#: a dotted path: names of object keys joined by dots, none empty
_PATH = re.compile(r"[^.\s]+(\.[^.\s]+)*")
_MISSING = object()


@dataclass(frozen=True, slots=True)
class On:
    """``@engine.workflow(on=On(name, match=None, input=None))``: start a run of the
    workflow for every event ``name`` whose payload matches ``match``. The run's input is
    the payload, or, with ``input``, a dict of the run's input keys to payload paths.

    Flow control (``_event_flow``): ``debounce="5m"`` (with ``key``, ``debounce_max``)
    starts one run per key once no event of it came for 5 minutes, with the last
    payload; ``batch=100, batch_window="10s"`` one run with a list of payloads."""

    name: str
    match: Mapping[str, JSON] | None = field(default=None)
    input: Mapping[str, str] | None = field(default=None)
    debounce: Duration | None = None
    key: str | None = None
    debounce_max: Duration | None = None
    batch: int | None = None
    batch_window: Duration | None = None

    def __post_init__(self) -> None:
        check_event_name(self.name)
        check_match(self.match)
        _check_input_map(self.input)
        if self.key is not None:
            _check_path(self.key, "key")
        self.flow()

    def flow(self) -> Flow | None:
        """Its flow control, checked (None: every event starts its run at once)."""
        return Flow.of(
            debounce=self.debounce, debounce_max=self.debounce_max, batch=self.batch,
            batch_window=self.batch_window, key=self.key,
        )  # fmt: skip


def subscriptions(on: object) -> tuple[On, ...]:
    """``@engine.workflow(on=...)``: one ``On``, a list of them, or None."""
    if on is None:
        return ()
    items = [on] if isinstance(on, On) else on
    if not isinstance(items, list | tuple) or not all(isinstance(i, On) for i in items):
        raise ConfigError(f"on must be a tickwork.On or a list of them, not {on!r}")
    return tuple(items)


def check_event_name(name: object, what: str = "An event name") -> str:
    """An event name (or id): 1 to 200 characters, none a control one (NUL included)."""
    if not isinstance(name, str) or not name or len(name) > MAX_EVENT_NAME or has_control(name):
        raise ConfigError(
            f"{what} must be 1 to {MAX_EVENT_NAME} characters without {CONTROL_SAID}, not {name!r}"
        )
    return name


def check_event_id(event_id: object) -> str:
    return check_event_name(event_id, "An event id")


def _check_path(path: object, what: str) -> str:
    if (
        not isinstance(path, str)
        or len(path) > MAX_PATH
        or not _PATH.fullmatch(path)
        or has_control(path)
    ):
        raise ConfigError(
            f"{what} must be a dotted payload path such as 'order.id' of at most {MAX_PATH} "
            f"characters, without {CONTROL_SAID}, not {clip(path)}"
        )
    return path


def check_match(match: object) -> dict[str, JSON] | None:
    """``match`` as a plain dict of dotted paths to JSON values (None: every event).

    Equality only: a ``$name`` in a path or as a key of an object value (Mongo's and
    Inngest's ``{"$gt": 5}``, ``{"$or": ...}``) is refused by name rather than compared
    as a literal that would never match what was meant."""
    if match is None:
        return None
    if not isinstance(match, Mapping):
        raise ConfigError(f"match must be a dict of dotted payload paths to values, not {match!r}")
    checked = {_check_path(path, "A match key"): value for path, value in match.items()}
    canonical_json(checked, what="match", error=ConfigError)
    for path, value in checked.items():
        operator = _operator_in(path.split(".")) or _operator_in_value(value)
        if operator is not None:
            raise ConfigError(
                f"match compares payload values for equality only: {operator!r} in "
                f"{path!r} is no match syntax tickwork knows (no operators)"
            )
    return checked


def _operator_in(names: Sequence[object]) -> str | None:
    return next((n for n in names if isinstance(n, str) and n.startswith("$")), None)


def _operator_in_value(value: object) -> str | None:
    """The first ``$name`` key of an object anywhere in a match value, or None."""
    if isinstance(value, Mapping):
        found = _operator_in(list(value))
        return found or next(
            (f for f in map(_operator_in_value, value.values()) if f is not None), None
        )
    if isinstance(value, list):
        return next((f for f in map(_operator_in_value, value) if f is not None), None)
    return None


def _check_input_map(mapping: object) -> None:
    if mapping is None:
        return
    if not isinstance(mapping, Mapping) or not mapping:
        raise ConfigError(
            f"input must be a non-empty dict of input keys to payload paths, not {mapping!r}"
        )
    for key, path in mapping.items():
        if not isinstance(key, str) or not key or len(key) > MAX_PATH or has_control(key):
            raise ConfigError(
                f"An input key must be 1 to {MAX_PATH} characters without {CONTROL_SAID}, "
                f"not {clip(key)}"
            )
        _check_path(path, f"The payload path of input {key!r}")


def payload_json(payload: object) -> str:
    """The payload's canonical JSON; ``ConfigError`` when it is no JSON value or larger
    than ``MAX_PAYLOAD_BYTES``."""
    text = canonical_json(payload, what="An event's payload", error=ConfigError)
    if len(text.encode("utf-8", "surrogatepass")) > MAX_PAYLOAD_BYTES:
        raise ConfigError(f"An event's payload must be at most {MAX_PAYLOAD_BYTES:,} bytes of JSON")
    return text


def _lookup(payload: JSON, path: str) -> Any:
    value = payload
    for part in path.split("."):
        if not isinstance(value, dict) or part not in value:
            return _MISSING
        value = value[part]
    return value


def matches(payload: JSON, match: Mapping[str, JSON] | None) -> bool:
    """Whether every path of ``match`` is in ``payload`` with an equal value: equal as
    canonical JSON, the same test the index of waits makes (``1`` is not ``1.0``, nor
    ``true``)."""
    if not match:
        return True
    return all(_same(_lookup(payload, path), expected) for path, expected in match.items())


def _same(found: Any, expected: JSON) -> bool:
    if found is _MISSING:
        return False
    return bool(canonical_json(found) == canonical_json(expected))


def map_input(payload: JSON, mapping: Mapping[str, str] | None) -> JSON:
    """A run's input from the event's payload: the payload itself, or ``mapping``'s keys
    bound to the values at their paths (a path the payload lacks gives None)."""
    if mapping is None:
        return payload
    values = {key: _lookup(payload, path) for key, path in mapping.items()}
    return {key: None if value is _MISSING else value for key, value in values.items()}


def match_paths(match: Mapping[str, JSON] | None) -> str:
    """The shape of a wait's match: its paths, sorted, as canonical JSON."""
    return canonical_json(sorted(match or {}))


def match_key(payload_or_match: JSON, paths: Sequence[str], *, of_match: bool) -> str | None:
    """The values at ``paths`` as canonical JSON: what a wait is indexed by, computed the
    same from a wait's match (``of_match``) and from an event's payload (None when the
    payload lacks a path: no wait of that shape can match it)."""
    if of_match:
        return canonical_json([payload_or_match[path] for path in paths])
    values = [_lookup(payload_or_match, path) for path in paths]
    if any(value is _MISSING for value in values):
        return None
    return canonical_json(values)


def event_to_json(event_id: str, name: str, payload: JSON, emitted_ms: int) -> str:
    """An event as a wait's checkpoint keeps it."""
    return canonical_json(
        {"id": event_id, "name": name, "payload": payload, "emitted_at": emitted_ms}
    )


def event_from_json(value: JSON) -> Event:
    """The ``Event`` a checkpoint kept (``event_to_json``), as the wait returns it."""
    return Event(
        name=value["name"],
        id=value["id"],
        payload=value["payload"],
        emitted_at=from_ms(int(value["emitted_at"])),
    )


def subscription_key(
    workflow: str,
    name: str,
    match: Mapping[str, JSON] | None,
    input: Mapping[str, str] | None = None,
) -> str:
    """The key a subscription gets when none is given: derived from what it is, so that
    every worker declaring it names the same stored row."""
    digest = hashlib.sha256(canonical_json([workflow, name, match, input]).encode()).hexdigest()
    readable = re.sub(r"[\s/\x00-\x1f]", "-", workflow)[:100]
    return f"{readable}-on-{digest[:12]}"


def event_run_id(subscription: str, event_id: str) -> str:
    """The run an event starts for a subscription: the same on every emitter, so a
    second emit of the same event id inserts nothing (like an occurrence's run id)."""
    return f"{subscription}@event:{event_id}"
