"""Options shared by command groups."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

import click

from .._engine import Engine
from ..errors import TickworkError
from ._render import fail

__all__ = ["database_option", "json_option", "open_engine"]

database_option = click.option(
    "--database",
    envvar="TICKWORK_DATABASE_URL",
    default=None,
    help="Database URL (default: $TICKWORK_DATABASE_URL, else sqlite:///tickwork.db).",
)
json_option = click.option("--json", "as_json", is_flag=True, help="Print JSON for scripts.")


@contextlib.contextmanager
def open_engine(database: str | None) -> Iterator[Engine]:
    """An engine on ``database``; tickwork errors become ``error: ...`` and exit code 2."""
    try:
        with Engine(database) as engine:
            yield engine
    except TickworkError as exc:
        fail(str(exc), code=2)
