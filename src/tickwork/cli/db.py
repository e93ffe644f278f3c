"""``tickwork db upgrade``: apply schema migrations."""

from __future__ import annotations

import click

from .._engine import Engine
from ..errors import TickworkError
from ._options import database_option
from ._render import fail

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
        fail(str(exc), code=2)
    click.echo(f"database at schema version {version}")
