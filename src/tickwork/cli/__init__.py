"""The ``tickwork`` command: one module per command group, added to ``main`` here."""

from __future__ import annotations

import click

from . import apikey, cron, db, runs, schedules, serve, worker

__all__ = ["main"]


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="tickwork")
def main() -> None:
    """tickwork: durable workflows that run on a schedule."""


main.add_command(worker.command)
main.add_command(worker.tick_command)
main.add_command(db.command)
main.add_command(schedules.command)
main.add_command(runs.command)
main.add_command(cron.command)
main.add_command(serve.command)
main.add_command(apikey.command)
