"""``tickwork schedules ...``: inspect and operate stored schedules (no app needed)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import click

from .._edge.wire import (
    backfill_text,
    backfilled_to_wire,
    history_list_to_wire,
    schedule_list_to_wire,
    state_change_text,
    triggered_to_wire,
)
from .._rules.liveness import held_back_schedules, held_back_text
from .._values.durations import describe_duration
from .._values.models import Overlap, ScheduleAction, ScheduleInfo
from .._values.wire_values import to_json
from ._options import database_option, json_option, missing_schedule, open_engine
from ._render import echo_json, fail, field_rows, print_table, printable

__all__ = ["command"]


def _when(value: datetime | None) -> str:
    if value is None:
        return ""
    return value.astimezone(UTC).strftime("%Y-%m-%d %H:%M:%S")


def _timing_text(info: ScheduleInfo) -> str:
    """When the schedule fires, for the table: ``cron 0 9 * * * (UTC)``, ``every 15 min``."""
    if info.cron is not None:
        return f"cron {info.cron} ({info.timezone})"
    assert info.every is not None
    return f"every {describe_duration(info.every)}"


def _overdue_text(late: timedelta | None) -> str | None:
    """How late an overdue schedule is: ``OVERDUE 4 min 5 s``."""
    if late is None:
        return None
    return f"OVERDUE {describe_duration(late, rounded=True)}"


@click.group("schedules")
def command() -> None:
    """List, inspect and operate schedules."""


@command.command("list")
@database_option
@json_option
def list_(database: str | None, as_json: bool) -> None:
    """All schedules, by key; then the declared schedules a live worker does not register
    because their calendar is not stored, each with why and how to fix it (``--json``:
    under ``not_registered``)."""
    with open_engine(database) as engine:
        schedules = engine.list_schedules()
        held = held_back_schedules(engine.list_workers(), stored={s.key for s in schedules})
    if as_json:
        echo_json(schedule_list_to_wire(schedules, held))
        return
    if not schedules:
        click.echo(f"No schedules in {engine.console.where}.")
    else:
        _print_schedules(schedules)
    if held:
        click.echo(f"{len(held)} declared schedule(s) not registered, so they do not fire:")
        for h in held:
            click.echo(printable(f"  {h.key}: {held_back_text(h)}"))


def _print_schedules(schedules: list[ScheduleInfo]) -> None:
    """The stored schedules' table, then how many are overdue."""
    columns = [
        "key", "workflow", "cadence", "state", "next fire (UTC)", "overdue", "last fire (UTC)",
        "last run",
    ]  # fmt: skip
    rows: list[tuple[object, ...]] = [
        (
            s.key,
            s.workflow,
            _timing_text(s),
            s.state.value,
            _when(s.next_fire_at),
            _overdue_text(s.overdue_by),
            _when(s.last_fire_at),
            s.last_run_status and s.last_run_status.value,
        )
        for s in schedules
    ]
    if any(s.max_runs is not None for s in schedules):  # a limit: how much of it is left
        columns.append("runs left")
        rows = [(*row, _runs_left(s)) for row, s in zip(rows, schedules, strict=True)]
    if any(s.note for s in schedules):  # why a schedule is paused, when someone said
        columns.append("note")
        rows = [(*row, s.note) for row, s in zip(rows, schedules, strict=True)]
    print_table(columns, rows)
    overdue = sum(s.overdue_by is not None for s in schedules)
    if overdue:
        click.echo(
            f"{overdue} schedule(s) OVERDUE: their next occurrence passed and no worker "
            "fired it; see `tickwork workers`"
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
            held = held_back_schedules(engine.list_workers())
            why = next((held_back_text(h) for h in held if h.key == key), None)
            if why is not None:  # declared, held back by a worker: not stored, but why
                fail(f"schedule {key!r} is {why}", code=3)
            fail(missing_schedule(engine, key), code=3)
    if as_json:
        echo_json(to_json(info))
        return
    print_table(["field", "value"], field_rows(to_json(info)), title=f"schedule {info.key}")


def _state_command(action: ScheduleAction) -> None:
    @command.command(action)
    @click.argument("key")
    @click.option(
        "--note", default=None, help="Why (an incident, a migration): kept on the schedule "
        "and in its history.",
    )  # fmt: skip
    @database_option
    def change(key: str, note: str | None, database: str | None) -> None:
        with open_engine(database) as engine:
            changed = engine.console.change_state(key, action, note)
            info = None if changed is None else engine.get_schedule(key)
            if changed is None or info is None:
                fail(missing_schedule(engine, key), code=3)
        click.echo(printable(state_change_text(info, action, changed)))

    change.help = (
        f"{action.capitalize()} a schedule, with a note saying why. A schedule already in "
        "that state stays as it is, its own note kept (said so; exit code 0)."
    )


for _action in ScheduleAction:
    _state_command(_action)


@command.command("delete")
@click.argument("key")
@database_option
def delete(key: str, database: str | None) -> None:
    """Remove a schedule for the whole fleet (its runs stay)."""
    with open_engine(database) as engine:
        if not engine.unschedule(key):
            fail(missing_schedule(engine, key), code=3)
    click.echo(f"{printable(key)}: deleted")


@command.command("trigger")
@click.argument("key")
@click.option(
    "--new-run", is_flag=True, help="Start a new run now, even if the occurrence already ran."
)
@database_option
@json_option
def trigger(key: str, new_run: bool, database: str | None, as_json: bool) -> None:
    """Start the schedule's current occurrence now (idempotent) and say which run."""
    with open_engine(database) as engine:
        triggered = engine.run_now(key, new_run)
        if triggered is None:
            fail(missing_schedule(engine, key), code=3)
    if as_json:
        echo_json(triggered_to_wire(key, triggered))
    elif triggered.started:
        click.echo(f"started run {printable(triggered.run_id)}")
    else:
        click.echo(
            f"occurrence already ran: run {printable(triggered.run_id)} "
            f"({triggered.status.value}); --new-run starts a new one"
        )


class _Instant(click.ParamType[datetime]):
    """An instant in ISO 8601 (``2026-03-01``, ``2026-03-01T09:00+01:00``); UTC when it
    names no offset."""

    name = "TIME"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        if isinstance(value, datetime):
            return value
        try:
            parsed = datetime.fromisoformat(str(value).replace("Z", "+00:00"))
        except ValueError:
            self.fail(f"{value!r} is not ISO 8601, e.g. 2026-03-01T09:00Z", param, ctx)
        return parsed if parsed.tzinfo is not None else parsed.replace(tzinfo=UTC)


@command.command("backfill")
@click.argument("key")
@click.option("--from", "start", type=_Instant(), required=True, help="First instant (included).")
@click.option("--to", "end", type=_Instant(), required=True, help="Last instant (excluded).")
@click.option(
    "--overlap",
    type=click.Choice([o.value for o in Overlap]),
    help="Instead of the schedule's own: buffer_all runs them one by one, allow all at once.",
)
@database_option
@json_option
def backfill(
    key: str, start: datetime, end: datetime, overlap: str | None, database: str | None,
    as_json: bool,
) -> None:  # fmt: skip
    """Start a run for every occurrence in [--from, --to), oldest first (at most 100,000;
    an occurrence that already has a run is not started again)."""
    with open_engine(database) as engine:
        if engine.get_schedule(key) is None:
            fail(missing_schedule(engine, key), code=3)
        done = engine.console.backfill_counted(key, start, end, overlap=overlap)
    if as_json:
        echo_json(backfilled_to_wire(key, done))
        return
    click.echo(printable(backfill_text(key, done)))
    run_ids = done.run_ids
    shown = run_ids if len(run_ids) <= 20 else [*run_ids[:10], "...", *run_ids[-10:]]
    for run_id in shown:
        click.echo(f"  {printable(run_id)}")


@command.command("history")
@click.argument("key")
@click.option("-n", "--limit", default=50, show_default=True, help="How many entries.")
@database_option
@json_option
def history(key: str, limit: int, database: str | None, as_json: bool) -> None:
    """Every decision about the schedule's occurrences, newest first."""
    with open_engine(database) as engine:
        if engine.get_schedule(key) is None:
            fail(missing_schedule(engine, key), code=3)
        entries = engine.schedule_history(key, limit=limit)
    if as_json:
        echo_json(history_list_to_wire(entries))
        return
    if not entries:
        click.echo(f"No history for {key!r} in {engine.console.where}.")
        return
    print_table(
        ["occurrence (UTC)", "decision", "count", "run", "reason"],
        [(_when(e.occurrence), e.decision.value, e.count, e.run_id, e.reason) for e in entries],
        whole=(0, 3),
    )


def _runs_left(info: ScheduleInfo) -> str:
    """``2 of 3`` under ``max_runs``; empty without it."""
    return "" if info.max_runs is None else f"{info.runs_left} of {info.max_runs}"
