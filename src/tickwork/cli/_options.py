"""Options shared by command groups."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

import click
from click.core import ParameterSource

from .._engine import Engine
from .._values.hints import not_found
from ..errors import StoreUnreachable, TickworkError
from ._app import load_engine
from ._exit import EXIT_UNREACHABLE, fail_with
from ._render import fail

__all__ = ["app_engine", "database_option", "json_option", "missing_schedule", "open_engine"]

database_option = click.option(
    "--database",
    envvar="TICKWORK_DATABASE_URL",
    default=None,
    help="Database URL (default: $TICKWORK_DATABASE_URL, else sqlite:///tickwork.db).",
)
json_option = click.option("--json", "as_json", is_flag=True, help="Print JSON for scripts.")


@contextlib.contextmanager
def open_engine(database: str | None, *, create: bool = False) -> Iterator[Engine]:
    """An engine on ``database``; tickwork errors become ``error: ...`` and their exit code
    (``_exit``).

    Only a command that sets a store up (``create``) may create a SQLite file: the others
    look at, or act on, what exists, and a missing file is an error naming its path (a
    command run in the wrong folder must not leave an empty ``tickwork.db`` there).
    """
    try:
        with Engine(database) as engine:
            if not create:
                _require_database(engine)
            yield engine
    except TickworkError as exc:
        fail_with(exc)


def _require_database(engine: Engine) -> None:
    """A missing SQLite file: said with what to do, exit code 4 (as unreachable)."""
    try:
        engine.console.require_database()
    except StoreUnreachable as exc:
        fail(
            f"{exc}; this command creates none: run it where the database is, give "
            "--database (or $TICKWORK_DATABASE_URL), or create one with `tickwork db upgrade`",
            code=EXIT_UNREACHABLE,
        )


@contextlib.contextmanager
def app_engine(app: str, database: str | None, *, create: bool = True) -> Iterator[Engine]:
    """APP's engine (``module:engine`` or ``path/to/app.py:engine``), closed afterwards.

    ``--database`` given on the command line is the app's database (see ``_app``); from
    ``$TICKWORK_DATABASE_URL`` alone it is what the app's ``Engine()`` reads anyway, and an
    app that names its own database keeps it. Tickwork errors become ``error: ...`` and
    their exit code, as with ``open_engine`` (``create``: as there).
    """
    source = click.get_current_context().get_parameter_source("database")
    engine = load_engine(app, database if source is ParameterSource.COMMANDLINE else None)
    try:
        with engine:
            if not create:
                _require_database(engine)
            yield engine
    except TickworkError as exc:
        fail_with(exc)


def missing_schedule(engine: Engine, key: str) -> str:
    """``no schedule 'x' in sqlite:///tickwork.db; did you mean 'y'?`` (exit code 3)."""
    return not_found("schedule", key, engine.console.where, engine.console.schedule_keys_like(key))
