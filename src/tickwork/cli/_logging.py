"""How ``tickwork worker`` and ``tickwork serve`` print logs: readable lines or JSON lines.

Readable (the default), one line per record::

    2026-12-01 14:03:05 INFO tickwork.runs run nightly@... completed in 2.1 s

JSON (``--log-format json``), one object per line, for a log shipper: ``time`` (UTC, ISO
8601), ``level``, ``logger``, ``message``, then the record's own fields (``run_id``,
``workflow``, ``attempt``, ``key``...) and ``exception`` with the traceback when there is
one. stdlib ``logging`` only; uvicorn's records (``serve``) go through the same handler.
"""

from __future__ import annotations

import json
import logging
import time
from datetime import UTC, datetime
from typing import Any

import click

from .._tracebacks import fold_traceback

__all__ = [
    "FORMATS",
    "JsonFormatter",
    "ReadableFormatter",
    "configure",
    "log_format_option",
    "log_level_option",
]

FORMATS = ("text", "json")
READABLE = "%(asctime)s %(levelname)s %(name)s %(message)s"

log_level_option = click.option(
    "--log-level",
    default="INFO",
    show_default=True,
    type=click.Choice(["DEBUG", "INFO", "WARNING", "ERROR"], case_sensitive=False),
)
log_format_option = click.option(
    "--log-format",
    default="text",
    show_default=True,
    type=click.Choice(FORMATS, case_sensitive=False),
    help="Readable lines, or one JSON object per line.",
)

# What every record has: the rest are a line's own fields (``extra=``).
_STANDARD = set(vars(logging.LogRecord("", 0, "", 0, "", None, None))) | {
    "message",
    "asctime",
    "color_message",  # uvicorn's coloured copy of the message
}


class JsonFormatter(logging.Formatter):
    """One JSON object per record, on one line."""

    def format(self, record: logging.LogRecord) -> str:
        when = datetime.fromtimestamp(record.created, UTC)
        line: dict[str, Any] = {
            "time": when.isoformat(timespec="milliseconds").replace("+00:00", "Z"),
            "level": record.levelname,
            "logger": record.name,
            "message": record.getMessage(),
        }
        for name, value in vars(record).items():
            if name not in _STANDARD and name not in line:
                line[name] = value
        if record.exc_info:
            line["exception"] = self.formatException(record.exc_info)
        elif record.exc_text:
            line["exception"] = record.exc_text
        if record.stack_info:
            line["stack"] = self.formatStack(record.stack_info)
        # default=str: a field that is no JSON value is still said, never lost; ASCII
        # escapes keep every line break (U+2028 too) inside its one line.
        return json.dumps(line, default=str)


class ReadableFormatter(logging.Formatter):
    """``READABLE`` lines, in UTC; a traceback follows on its own lines, tickwork's
    frames folded (the JSON lines keep it whole, for a log shipper)."""

    def __init__(self) -> None:
        super().__init__(READABLE, datefmt="%Y-%m-%d %H:%M:%SZ")
        self.converter = time.gmtime  # UTC, like every instant in the messages

    def formatException(self, ei: Any) -> str:
        return fold_traceback(super().formatException(ei))


def configure(level: str, log_format: str) -> None:
    """Send every record at ``level`` or above to stderr in ``log_format``."""
    handler = logging.StreamHandler()
    if log_format.lower() == "json":
        handler.setFormatter(JsonFormatter())
    else:
        handler.setFormatter(ReadableFormatter())
    # Like basicConfig: a process whose root logger is already set up keeps its setup.
    logging.basicConfig(level=level.upper(), handlers=[handler])
