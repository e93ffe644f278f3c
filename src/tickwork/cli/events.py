"""``tickwork events emit|list|show|subscriptions|history``: emit an event, what was
emitted, the subscriptions (with their debounce or batch), and what a debounced or
batched subscription decided (DESIGN §9).

No app is needed: subscriptions are stored in the database, so an event emitted here
starts the same runs as one emitted by the app or over HTTP.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any

import click

from .._edge.event_wire import (
    decision_list_to_wire,
    emitted_text,
    emitted_to_wire,
    event_list_to_wire,
    flow_text,
    subscription_list_to_wire,
)
from .._values.hints import not_found
from .._values.ids import MAX_JSON_DEPTH, canonical_json
from .._values.wire_values import to_json
from ..errors import ConfigError
from ._options import database_option, json_option, open_engine
from ._render import echo_json, fail, field_rows, print_table

__all__ = ["command"]


def _when(value: datetime) -> str:
    return value.astimezone(UTC).strftime("%Y-%m-%d %H:%M:%S.%f")[:-3]


def _payload(text: str | None) -> Any:
    if text is None:
        return None
    try:
        return json.loads(text)
    except ValueError as exc:
        raise click.BadParameter(f"not JSON: {exc}", param_hint="--data") from exc
    except RecursionError:  # deeper than json reads: far past what a payload may be
        raise ConfigError(f"An event's payload nests deeper than {MAX_JSON_DEPTH} levels") from None


@click.group("events")
def command() -> None:
    """Emit events and look at the events emitted."""


@command.command("emit")
@click.argument("name")
@click.option("--data", "data", default=None, help="The event's payload, as JSON.")
@click.option(
    "--id", "event_id", default=None, help="The event's id (emitting it again starts nothing new)."
)
@database_option
@json_option
def emit(
    name: str, data: str | None, event_id: str | None, database: str | None, as_json: bool
) -> None:
    """Emit event NAME: one run of every subscribed workflow starts, waiting runs it
    matches wake. Prints the ids of the runs it started, one a line, then (on stderr) how
    many it started and woke: ``Event ID: started 0 runs, woke 1 (RUN).``"""
    payload = _payload(data)
    with open_engine(database) as engine:
        event = engine.emit_event(name, payload, id=event_id)
    if as_json:  # the API's answer to POST /events
        echo_json(emitted_to_wire(event))
        return
    for run_id in event.started:
        click.echo(run_id)
    click.echo(emitted_text(event), err=True)


@command.command("list")
@click.option("--name", default=None, help="Only events of this name.")
@click.option("--limit", default=100, show_default=True, type=int, help="How many, newest first.")
@database_option
@json_option
def list_events(name: str | None, limit: int, database: str | None, as_json: bool) -> None:
    """The newest events, with how many runs each started and woke (``show`` gives one
    event's payload and runs)."""
    with open_engine(database) as engine:
        events = engine.list_events(name=name, limit=limit)
    if as_json:
        echo_json(event_list_to_wire(events))
        return
    if not events:
        click.echo(f"No events in {engine.console.where}.")
        return
    print_table(
        ["emitted (UTC)", "name", "id", "runs started", "runs woken"],
        [(_when(e.emitted_at), e.name, e.id, len(e.started), len(e.woke)) for e in events],
    )


@command.command("show")
@click.argument("event_id")
@database_option
@json_option
def show(event_id: str, database: str | None, as_json: bool) -> None:
    """One event: its payload, the runs it started and the waiting runs it woke."""
    with open_engine(database) as engine:
        event = engine.get_event(event_id)
    if event is None:
        fail(not_found("event", event_id, engine.console.where), code=3)
    wire = to_json(event)
    if as_json:
        echo_json(wire)
        return
    print_table(["field", "value"], field_rows(wire), title=f"event {event.id}")


@command.command("subscriptions")
@database_option
@json_option
def subscriptions(database: str | None, as_json: bool) -> None:
    """Every subscription, by key: the event it takes, its workflow, its match and its
    flow control (debounce or batch)."""
    with open_engine(database) as engine:
        subs = engine.list_subscriptions()
    if as_json:  # the API's answer to GET /subscriptions
        echo_json(subscription_list_to_wire(subs))
        return
    if not subs:
        click.echo(f"No subscriptions in {engine.console.where}.")
        return
    print_table(
        ["key", "event", "workflow", "match", "flow", "made by"],
        [
            (s.key, s.name, s.workflow, "-" if s.match is None else canonical_json(s.match),
             flow_text(s) or "a run per event", "on=" if s.declared else "subscribe()")
            for s in subs
        ],
        whole=(0,),
    )  # fmt: skip


@command.command("history")
@click.argument("key")
@click.option("--limit", default=100, show_default=True, type=int, help="How many, newest first.")
@database_option
@json_option
def history(key: str, limit: int, database: str | None, as_json: bool) -> None:
    """What the debounced or batched subscription KEY decided, newest first: each event
    debounced or batched, each run started and why, each buffer dropped."""
    with open_engine(database) as engine:
        entries = engine.subscription_history(key, limit=limit)
    if as_json:
        echo_json(decision_list_to_wire(entries))
        return
    if not entries:
        click.echo(f"No decisions for subscription {key!r} in {engine.console.where}.")
        return
    print_table(
        ["decided (UTC)", "decision", "group", "event", "events", "run", "reason"],
        [
            (_when(e.decided_at), e.decision.value, canonical_json(e.group), e.event_id,
             e.count, e.run_id, e.reason)
            for e in entries
        ],
        whole=(0, 5),
    )  # fmt: skip
