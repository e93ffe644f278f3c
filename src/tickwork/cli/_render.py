"""One renderer for every listing: rich tables for people, ``--json`` for scripts."""

from __future__ import annotations

import json
from collections.abc import Sequence
from datetime import datetime, timedelta
from typing import Any

import click
from rich.console import Console
from rich.table import Table

__all__ = ["echo_json", "fail", "print_table"]


def _default(value: object) -> object:
    if isinstance(value, datetime):
        return value.isoformat()
    if isinstance(value, timedelta):
        return value.total_seconds()
    return str(value)


def echo_json(value: Any) -> None:
    """Print ``value`` as JSON (datetimes as ISO 8601, timedeltas as seconds)."""
    click.echo(json.dumps(value, default=_default, indent=2, sort_keys=True))


def print_table(columns: Sequence[str], rows: Sequence[Sequence[object]], title: str = "") -> None:
    """Print a table for people; ``None`` shows as an empty cell."""
    table = Table(title=title or None)
    for column in columns:
        table.add_column(column)
    for row in rows:
        table.add_row(*("" if cell is None else str(cell) for cell in row))
    Console().print(table)


def fail(message: str, code: int = 1) -> None:
    """Print ``message`` to stderr and exit with ``code``."""
    click.echo(f"error: {message}", err=True)
    raise SystemExit(code)
