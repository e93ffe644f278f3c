"""``tickwork workers``: the workers that recorded themselves, live and gone (no app needed)."""

from __future__ import annotations

from datetime import UTC, datetime

import click

from .._edge.wire import worker_list_to_wire
from .._values.models import WorkerInfo
from ._options import database_option, json_option, open_engine
from ._render import echo_json, print_table

__all__ = ["command"]


def _when(value: datetime) -> str:
    return value.astimezone(UTC).strftime("%Y-%m-%d %H:%M:%S")


def _alive_text(worker: WorkerInfo) -> str:
    """``yes``; ``no`` once it missed three renewals; ``stopped`` after a graceful stop."""
    if worker.alive:
        return "yes"
    return "stopped" if worker.stopped_at is not None else "no"


@click.command("workers")
@database_option
@json_option
def command(database: str | None, as_json: bool) -> None:
    """Workers seen within the last day, gone ones included, oldest start first.

    A worker renews its record every few seconds; it is not alive once it missed three
    renewals (killed, frozen, cut off from the database) or stopped. A worker holding back
    declared schedules for a calendar not stored says which (``not registered``).
    """
    with open_engine(database) as engine:
        workers = engine.list_workers()
    if as_json:
        echo_json(worker_list_to_wire(workers))
        return
    if not workers:
        click.echo(f"No workers in {engine.console.where}.")
    else:
        _print(workers)
    if not any(w.alive for w in workers):
        click.echo("No live worker: nothing fires schedules or executes runs.")


def _held_back_text(worker: WorkerInfo) -> str:
    """``report (no calendar 'uk')``, one per declared schedule it holds back."""
    return ", ".join(f"{key} (no calendar {name!r})" for key, name in worker.waiting_for_calendars)


def _print(workers: list[WorkerInfo]) -> None:
    columns = [
        "id", "host", "pid", "pools", "workflows", "version", "started (UTC)",
        "last seen (UTC)", "alive",
    ]  # fmt: skip
    rows: list[tuple[object, ...]] = [
        (
            w.id, w.host, w.pid, ", ".join(w.pools), ", ".join(w.workflows), w.version,
            _when(w.started_at), _when(w.last_seen), _alive_text(w),
        )
        for w in workers
    ]  # fmt: skip
    if any(w.waiting_for_calendars for w in workers):  # declared, held back: why
        columns.append("not registered")
        rows = [(*row, _held_back_text(w)) for row, w in zip(rows, workers, strict=True)]
    print_table(columns, rows)
