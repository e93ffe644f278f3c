"""One renderer for every listing: rich tables for people, ``--json`` for scripts."""

from __future__ import annotations

import json
import unicodedata
from collections.abc import Sequence
from datetime import datetime, timedelta
from typing import Any

import click
from rich.console import Console
from rich.table import Table
from rich.text import Text

__all__ = ["echo_json", "fail", "print_table", "printable"]


def _default(value: object) -> object:
    if isinstance(value, datetime):
        return value.isoformat()
    if isinstance(value, timedelta):
        return value.total_seconds()
    return str(value)


def echo_json(value: Any) -> None:
    """Print ``value`` as JSON (datetimes as ISO 8601, timedeltas as seconds)."""
    click.echo(json.dumps(value, default=_default, indent=2, sort_keys=True))


def printable(value: object) -> str:
    """``value`` as text that cannot drive a terminal: control characters (an ESC that
    starts a terminal sequence, say) shown escaped, as Python writes them."""
    text = str(value)
    if not any(unicodedata.category(c) == "Cc" for c in text):
        return text
    return "".join(repr(c)[1:-1] if unicodedata.category(c) == "Cc" else c for c in text)


def print_table(columns: Sequence[str], rows: Sequence[Sequence[object]], title: str = "") -> None:
    """Print a table for people; ``None`` shows as an empty cell. Cells are plain text
    (no rich markup: a run id holding "[red]" prints as it is) with control characters
    escaped."""
    table = Table(title=Text(printable(title)) if title else None)
    for column in columns:
        table.add_column(column)
    for row in rows:
        table.add_row(*(Text("" if cell is None else printable(cell)) for cell in row))
    Console().print(table)


def fail(message: str, code: int = 1) -> None:
    """Print ``message`` to stderr and exit with ``code``."""
    lines = message.split("\n")  # line breaks kept; other control characters escaped
    click.echo("error: " + "\n".join(printable(line) for line in lines), err=True)
    raise SystemExit(code)
