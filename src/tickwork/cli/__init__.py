"""The ``tickwork`` command: one module per command group, added to ``main`` here."""

from __future__ import annotations

from typing import Any

import click

from ..errors import TickworkError
from . import apikey, calendars, cron, db, events, runs, schedules, serve, worker, workers
from ._exit import fail_with

__all__ = ["main"]


class _Tickwork(click.Group):
    """The command group whose commands never end in a traceback for a tickwork error:
    whatever a command did not catch is said on one line with its exit code (``_exit``)."""

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except TickworkError as exc:
            fail_with(exc)


@click.group(cls=_Tickwork, context_settings={"help_option_names": ["-h", "--help"]})
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
main.add_command(workers.command)
main.add_command(events.command)
main.add_command(calendars.command)
