"""``tickwork db upgrade|prune|stats``: schema migrations, retention, what the database holds."""

from __future__ import annotations

import dataclasses
from contextlib import AbstractContextManager

import click

from .._engine import Engine
from .._values.durations import describe_duration
from .._values.models import Pruned, StorageStats
from ..errors import TickworkError
from ._exit import fail_with
from ._options import app_engine, database_option, json_option, open_engine
from ._render import echo_json, print_table

__all__ = ["command"]


@click.group("db")
def command() -> None:
    """Database maintenance."""


@command.command("upgrade")
@database_option
def upgrade(database: str | None) -> None:
    """Apply pending schema migrations."""
    try:
        with Engine(database) as engine:
            version = engine.migrate()
    except TickworkError as exc:
        fail_with(exc)
    click.echo(f"database at schema version {version}")


def _engine_of(app: str | None, database: str | None) -> AbstractContextManager[Engine]:
    """The app's engine (its retentions; its database, or --database), else one on
    ``database`` with the default retention; on a database that exists (none is created)."""
    return open_engine(database) if app is None else app_engine(app, database, create=False)


@command.command("prune")
@click.option(
    "--older-than",
    default=None,
    help="Remove ended runs and history older than this (e.g. 7d), whatever the retention.",
)
@click.option(
    "--app",
    default=None,
    help="module:engine or path/to/app.py:engine whose retentions apply (its workflows').",
)
@database_option
@json_option
def prune(older_than: str | None, app: str | None, database: str | None, as_json: bool) -> None:
    """Remove what retention no longer keeps, now (workers also do it in the background).

    Without --older-than: the retention of --app's engine and workflows, else the
    default 30 days. A schedule's latest run, its 100 newest history entries and every
    unfinished run are always kept.
    """
    with _engine_of(app, database) as engine:
        removed = engine.console.prune_by_table(older_than=older_than)
    if as_json:
        echo_json({"removed": removed.total, "by_table": _by_table(removed)})
        return
    events = f", {removed.events} event(s)" if removed.events else ""
    click.echo(
        f"pruned {removed.total} row(s): {removed.runs} run(s), {removed.steps} step(s), "
        f"{_entries(removed.history)}{events}"
    )


def _entries(count: int) -> str:
    """``1 history entry``, ``3 history entries``: "entr(ies)" read as a typo."""
    return f"{count} history {'entry' if count == 1 else 'entries'}"


def _by_table(removed: Pruned) -> dict[str, int]:
    """What went, by table (the names ``db stats`` shows)."""
    tables = {
        "tickwork_runs": removed.runs,
        "tickwork_steps": removed.steps,
        "tickwork_schedule_history": removed.history,
    }
    if removed.events:  # events are pruned under the runs' retention (DESIGN §9)
        tables["tickwork_events"] = removed.events
    return tables


@command.command("stats")
@click.option("--app", default=None, help="module:engine whose retentions apply.")
@database_option
@json_option
def stats(app: str | None, database: str | None, as_json: bool) -> None:
    """Rows and bytes per table, the oldest ended run, and what waits to be pruned."""
    with _engine_of(app, database) as engine:
        found = engine.console.storage_stats()
    if as_json:
        echo_json(dataclasses.asdict(found))
        return
    _print_stats(found)


def _print_stats(found: StorageStats) -> None:
    print_table(
        ["table", "rows", "size"],
        [(t.name, t.rows, None if t.bytes is None else _size(t.bytes)) for t in found.tables],
    )
    free = "" if found.free_bytes is None else f" ({_size(found.free_bytes)} free for reuse)"
    oldest = found.oldest_ended_at
    kept = found.retention
    retention = "none (everything is kept)" if kept is None else describe_duration(kept)
    click.echo(f"total: {_size(found.total_bytes)}{free}")
    ended = "none" if oldest is None else f"{oldest:%Y-%m-%d %H:%M:%S} UTC"
    click.echo(f"oldest ended run: {ended}")
    click.echo(f"retention: {retention}")
    click.echo(
        f"waiting to be pruned: {found.prunable_runs} run(s) with their steps, "
        f"{_entries(found.prunable_history)}"
    )


def _size(count: int) -> str:
    """Bytes for people: 512 B, 3.4 MB."""
    if count < 1000:
        return f"{count} B"
    amount, unit = float(count), "B"
    for unit in ("kB", "MB", "GB"):  # noqa: B007 (the unit reached is the one printed)
        amount /= 1000
        if amount < 1000:
            break
    return f"{amount:.1f} {unit}"
