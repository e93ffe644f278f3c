"""Options shared by command groups."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

import click
from click.core import ParameterSource

from .._engine import Engine
from ..errors import TickworkError
from ._app import load_engine
from ._exit import fail_with

__all__ = ["app_engine", "database_option", "json_option", "open_engine"]

database_option = click.option(
    "--database",
    envvar="TICKWORK_DATABASE_URL",
    default=None,
    help="Database URL (default: $TICKWORK_DATABASE_URL, else sqlite:///tickwork.db).",
)
json_option = click.option("--json", "as_json", is_flag=True, help="Print JSON for scripts.")


@contextlib.contextmanager
def open_engine(database: str | None) -> Iterator[Engine]:
    """An engine on ``database``; tickwork errors become ``error: ...`` and their exit code
    (``_exit``)."""
    try:
        with Engine(database) as engine:
            yield engine
    except TickworkError as exc:
        fail_with(exc)


@contextlib.contextmanager
def app_engine(app: str, database: str | None) -> Iterator[Engine]:
    """APP's engine (``module:engine`` or ``path/to/app.py:engine``), closed afterwards.

    ``--database`` given on the command line is the app's database (see ``_app``); from
    ``$TICKWORK_DATABASE_URL`` alone it is what the app's ``Engine()`` reads anyway, and an
    app that names its own database keeps it. Tickwork errors become ``error: ...`` and
    their exit code, as with ``open_engine``.
    """
    source = click.get_current_context().get_parameter_source("database")
    engine = load_engine(app, database if source is ParameterSource.COMMANDLINE else None)
    try:
        with engine:
            yield engine
    except TickworkError as exc:
        fail_with(exc)
