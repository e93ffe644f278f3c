"""``tickwork worker APP``: run a worker until SIGINT or SIGTERM."""

from __future__ import annotations

import click

from ._logging import configure as configure_logging
from ._logging import log_format_option, log_level_option
from ._options import app_engine, database_option

__all__ = ["command"]


@click.command("worker")
@click.argument("app")
@click.option("--threads", default=8, show_default=True, help="Runs executed at once.")
@click.option(
    "--drain-timeout",
    default="30s",
    show_default=True,
    help="How long to let in-flight runs finish at shutdown.",
)
@log_level_option
@log_format_option
@database_option
def command(
    app: str,
    threads: int,
    drain_timeout: str,
    log_level: str,
    log_format: str,
    database: str | None,
) -> None:
    """Fire schedules and execute runs of APP (module:engine or path/to/app.py:engine)."""
    configure_logging(log_level, log_format)
    with app_engine(app, database) as engine:
        engine.run_worker(threads=threads, drain_timeout=drain_timeout)


@click.command("tick")
@click.argument("app")
@database_option
def tick_command(app: str, database: str | None) -> None:
    """One scheduler pass for APP, then exit (for hosts driven by an outside timer).

    Registers the app's declared schedules, fires every due occurrence and prints the ids
    of the runs it started, one per line. Runs are executed by workers.
    """
    with app_engine(app, database) as engine:
        engine.sync_schedules()
        started = engine.tick()
    for run_id in started:
        click.echo(run_id)
