"""One renderer for every listing: rich tables for people, ``--json`` for scripts."""

from __future__ import annotations

import json
import unicodedata
from collections.abc import Mapping, Sequence
from datetime import datetime, timedelta
from typing import Any, NoReturn

import click
from rich.console import Console
from rich.table import Table
from rich.text import Text

from .._values.durations import describe_duration, format_duration, parse_duration
from ..errors import ConfigError

__all__ = ["echo_json", "fail", "field_rows", "json_text", "print_table", "printable"]


def _default(value: object) -> object:
    if isinstance(value, datetime):
        return value.isoformat()
    if isinstance(value, timedelta):
        return format_duration(value)
    return str(value)


def echo_json(value: Any) -> None:
    """Print ``value`` as JSON (datetimes as ISO 8601, timedeltas as ``"1h30m"``)."""
    click.echo(json.dumps(value, default=_default, indent=2, sort_keys=True))


def printable(value: object) -> str:
    """``value`` as text that cannot drive a terminal: control characters (an ESC that
    starts a terminal sequence, say) shown escaped, as Python writes them."""
    text = str(value)
    if not any(unicodedata.category(c) == "Cc" for c in text):
        return text
    return "".join(repr(c)[1:-1] if unicodedata.category(c) == "Cc" else c for c in text)


def json_text(value: Any) -> str:
    """A JSON value as JSON text, on one line (``{"day": "2026-11-30"}``, ``"done"``)."""
    return json.dumps(value, ensure_ascii=False, default=_default)


#: the fields of the JSON forms that hold a user's JSON value: shown as JSON ("done" quoted)
_JSON_FIELDS = frozenset({"input", "result"})
#: the fields of the JSON forms that hold a duration ("1h30m"): shown for people ("1 h 30 min")
_DURATION_FIELDS = frozenset({"every", "jitter", "catchup_window", "timeout", "overdue_by"})
#: the duration fields that are timings (how late), not settings: shown to two units
_TIMING_FIELDS = frozenset({"overdue_by"})


def _duration_text(value: str | None, *, rounded: bool) -> str:
    """A duration of a JSON form (``"1h30m"``) for people (``1 h 30 min``); ``none`` when
    unset."""
    if value is None:
        return "none"
    try:
        return describe_duration(parse_duration(value), rounded=rounded)
    except ConfigError:  # "0ms": nothing to read back, but nothing to hide either
        return value


def field_rows(wire: Mapping[str, Any]) -> list[tuple[str, str | None]]:
    """A run's or a schedule's JSON form (``--json``'s) as rows for people: a user's JSON
    values as JSON, other objects (a retry policy) as JSON, durations for people
    (``1 h 30 min``, ``none``), the rest as they are (instants as ISO 8601); null as an
    empty cell."""
    rows: list[tuple[str, str | None]] = []
    for name, value in wire.items():
        if name in _DURATION_FIELDS:
            rows.append((name, _duration_text(value, rounded=name in _TIMING_FIELDS)))
        elif value is None:
            rows.append((name, None))
        elif name in _JSON_FIELDS or isinstance(value, dict | list | bool):
            rows.append((name, json_text(value)))
        else:
            rows.append((name, str(value)))
    return rows


#: the narrowest a folding column of a table may become before rows are printed as records
_MIN_FOLDED = 10


def print_table(
    columns: Sequence[str],
    rows: Sequence[Sequence[object]],
    title: str = "",
    *,
    whole: Sequence[int] = (0,),
) -> None:
    """Print a table for people; ``None`` shows as an empty cell. Cells are plain text
    (no rich markup: a run id holding "[red]" prints as it is) with control characters
    escaped.

    Nothing is ever cut. The ``whole`` columns (ids, keys: what people paste into the next
    command) keep their full width while the others fold; when the terminal is too narrow
    for that, each row is printed as a record instead: its ``whole`` cells on a line of
    their own, then its other cells as ``column: value``.
    """
    console = Console()
    cells = [["" if cell is None else printable(cell) for cell in row] for row in rows]
    if title:
        console.print(Text(printable(title)), soft_wrap=True)
    natural = [
        max([len(column), *(len(row[i]) for row in cells)]) for i, column in enumerate(columns)
    ]
    widths = {i: natural[i] for i in whole}
    folded = sum(min(n, _MIN_FOLDED) for i, n in enumerate(natural) if i not in widths)
    needed = sum(widths.values()) + folded + 3 * len(columns) + 1  # + borders and padding
    if needed > console.width:
        _print_records(console, columns, cells, whole)
        return
    table = Table()
    for i, column in enumerate(columns):
        table.add_column(column, overflow="fold", width=widths.get(i))
    for row in cells:
        table.add_row(*(Text(cell) for cell in row))
    console.print(table)


def _print_records(
    console: Console, columns: Sequence[str], cells: Sequence[Sequence[str]], whole: Sequence[int]
) -> None:
    for row in cells:
        head = "  ".join(row[i] for i in whole if row[i])
        rest = "  ".join(
            f"{column}: {cell}"
            for i, (column, cell) in enumerate(zip(columns, row, strict=True))
            if i not in whole and cell
        )
        console.print(Text(head), soft_wrap=True)
        if rest:
            console.print(Text("  " + rest), soft_wrap=True)


def fail(message: str, code: int = 1) -> NoReturn:
    """Print ``message`` to stderr and exit with ``code``."""
    lines = message.split("\n")  # line breaks kept; other control characters escaped
    click.echo("error: " + "\n".join(printable(line) for line in lines), err=True)
    raise SystemExit(code)
