"""``tickwork schedules ...``: inspect and operate stored schedules (no app needed)."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import click

from .._durations import format_duration
from .._models import HistoryEntry, ScheduleInfo
from .._wire import history_to_wire, schedule_to_wire
from ._options import database_option, json_option, open_engine
from ._render import echo_json, fail, field_rows, print_table, printable

__all__ = ["command", "to_json"]


def to_json(value: ScheduleInfo | HistoryEntry) -> dict[str, Any]:
    """A schedule or history entry as the HTTP API sends it (durations as "1h30m")."""
    if isinstance(value, ScheduleInfo):
        return schedule_to_wire(value)
    return history_to_wire(value)


def _when(value: datetime | None) -> str:
    if value is None:
        return ""
    return value.astimezone(UTC).strftime("%Y-%m-%d %H:%M:%S")


def _timing_text(info: ScheduleInfo) -> str:
    """When the schedule fires, for the table: ``cron 0 9 * * * (UTC)``, ``every 15m``."""
    if info.cron is not None:
        return f"cron {info.cron} ({info.timezone})"
    assert info.every is not None
    return f"every {format_duration(info.every)}"


@click.group("schedules")
def command() -> None:
    """List, inspect and operate schedules."""


@command.command("list")
@database_option
@json_option
def list_(database: str | None, as_json: bool) -> None:
    """All schedules, by key."""
    with open_engine(database) as engine:
        schedules = engine.list_schedules()
    if as_json:
        echo_json([to_json(s) for s in schedules])
        return
    print_table(
        ["key", "workflow", "cadence", "state", "next fire (UTC)", "last fire (UTC)", "last run"],
        [
            (
                s.key,
                s.workflow,
                _timing_text(s),
                s.state.value,
                _when(s.next_fire_at),
                _when(s.last_fire_at),
                s.last_run_status and s.last_run_status.value,
            )
            for s in schedules
        ],
    )


@command.command("show")
@click.argument("key")
@database_option
@json_option
def show(key: str, database: str | None, as_json: bool) -> None:
    """One schedule."""
    with open_engine(database) as engine:
        info = engine.get_schedule(key)
    if info is None:
        fail(f"no schedule {key!r}", code=3)
        return
    if as_json:
        echo_json(to_json(info))
        return
    print_table(["field", "value"], field_rows(to_json(info)), title=f"schedule {info.key}")


def _state_command(action: str, done: str) -> None:
    @command.command(action)
    @click.argument("key")
    @database_option
    def change(key: str, database: str | None) -> None:
        with open_engine(database) as engine:
            changed = getattr(engine, action)(key)
        if not changed:
            fail(f"no schedule {key!r}", code=3)
        click.echo(f"{printable(key)}: {done}")

    change.help = f"{action.capitalize()} a schedule."


_state_command("pause", "paused")
_state_command("resume", "resumed")
_state_command("activate", "activated")
_state_command("deactivate", "deactivated")


@command.command("delete")
@click.argument("key")
@database_option
def delete(key: str, database: str | None) -> None:
    """Remove a schedule for the whole fleet (its runs stay)."""
    with open_engine(database) as engine:
        if not engine.unschedule(key):
            fail(f"no schedule {key!r}", code=3)
    click.echo(f"{printable(key)}: deleted")


@command.command("trigger")
@click.argument("key")
@database_option
@json_option
def trigger(key: str, database: str | None, as_json: bool) -> None:
    """Start the schedule's current occurrence now (idempotent); print the run id."""
    with open_engine(database) as engine:
        run_id = engine.trigger(key)
    if run_id is None:
        fail(f"no schedule {key!r}", code=3)
    if as_json:
        echo_json({"run_id": run_id})
    else:
        click.echo(run_id)


@command.command("history")
@click.argument("key")
@click.option("-n", "--limit", default=50, show_default=True, help="How many entries.")
@database_option
@json_option
def history(key: str, limit: int, database: str | None, as_json: bool) -> None:
    """Every decision about the schedule's occurrences, newest first."""
    with open_engine(database) as engine:
        if engine.get_schedule(key) is None:
            fail(f"no schedule {key!r}", code=3)
        entries = engine.schedule_history(key, limit=limit)
    if as_json:
        echo_json([to_json(e) for e in entries])
        return
    print_table(
        ["occurrence (UTC)", "decision", "count", "run", "reason"],
        [(_when(e.occurrence), e.decision.value, e.count, e.run_id, e.reason) for e in entries],
        whole=(0, 3),
    )
