"""``tickwork cron EXPR``: a cron expression in English and its next occurrences.

Nothing is registered and no database is opened; it answers "when would this run?"
before a schedule is written, in the schedule's zone and in UTC, with DST changes marked.
"""

from __future__ import annotations

from datetime import datetime

import click

from .. import _clock
from .._preview import near_dst_transition, preview, utc_offset_text
from .._wire import preview_to_wire
from ..cron import load_zone, parse
from ..errors import ConfigError
from ._render import echo_json, fail, print_table

__all__ = ["command"]


def _after(text: str | None, timezone: str) -> datetime:
    """``--after`` as an aware datetime: ISO 8601, read in ``timezone`` when it has no
    offset; now when not given."""
    if text is None:
        return _clock.SystemClock().now()
    try:
        when = datetime.fromisoformat(text)
    except ValueError:
        raise ConfigError(
            f"Bad --after {text!r}: expected ISO 8601, e.g. 2024-03-31T09:00Z"
        ) from None
    return when if when.tzinfo is not None else when.replace(tzinfo=load_zone(timezone))


def _count(text: str) -> int:
    try:
        return int(text)
    except ValueError:
        raise ConfigError(f"Bad count {text!r}: expected an int from 1 to 1000") from None


def _note(offset: str, previous: str, near: bool) -> str:
    if offset != previous:
        return f"DST: was {previous}"
    return "near a DST change" if near else ""


def _occurrences(
    expr: str, timezone: str, after: datetime, count: int
) -> list[tuple[datetime, datetime, str, str]]:
    """(local, utc, utc_offset, note) of each occurrence; the note marks DST changes."""
    zone = load_zone(timezone)
    rows = []
    previous = utc_offset_text(after, timezone)
    for when in preview(cron=expr, timezone=timezone, after=after, count=count):
        offset = utc_offset_text(when, timezone)
        near = near_dst_transition(when, timezone)
        rows.append((when.astimezone(zone), when, offset, _note(offset, previous, near)))
        previous = offset
    return rows


@click.command("cron")
@click.argument("expr", nargs=-1, required=True)
@click.option(
    "--tz", "timezone", default="UTC", show_default=True, help="IANA zone to read EXPR in."
)
@click.option("-n", "--count", default="5", show_default=True, help="How many, 1 to 1000.")
@click.option("--after", default=None, help="Start after this ISO 8601 time (default: now).")
@click.option("--json", "as_json", is_flag=True, help="Print JSON for scripts.")
def command(
    expr: tuple[str, ...], timezone: str, count: str, after: str | None, as_json: bool
) -> None:
    """Explain the cron expression EXPR and list its next occurrences.

    EXPR is one quoted argument ("0 9 * * 1-5") or its fields as separate arguments.
    """
    text = " ".join(expr)
    try:
        parsed = parse(text, timezone)
        rows = _occurrences(text, timezone, _after(after, timezone), _count(count))
    except ConfigError as exc:
        fail(str(exc), code=2)
        return
    if as_json:  # the API's answer to GET /cron/preview
        occurrences = [utc for _, utc, _, _ in rows]
        echo_json(
            preview_to_wire(cron=text, every=None, timezone=timezone, occurrences=occurrences)
        )
        return
    click.echo(parsed.explain())
    seconds = len(text.split()) == 6
    clock = "%H:%M:%S" if seconds else "%H:%M"
    table = []
    for index, (local, utc, offset, note) in enumerate(rows, start=1):
        in_zone = f"{local:%a %Y-%m-%d {clock}} {offset}"
        table.append((index, in_zone, f"{utc:%Y-%m-%d {clock}}", note))
    if timezone == "UTC":  # one column says it all
        print_table(["#", "UTC"], [(index, f"{utc} UTC") for index, _, utc, _ in table])
    else:
        print_table(["#", timezone, "UTC", "note"], table)
