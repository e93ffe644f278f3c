"""``tickwork cron EXPR``: a cron expression in English and its next occurrences.

Nothing is registered and no database is opened; it answers "when would this run?"
before a schedule is written, in the schedule's zone and in UTC, with DST changes marked:
an occurrence DST moved, skipped (``--dst-gap skip``) or doubled says so in its note (with
``--json``, in its ``dst`` field, and ``dst_skipped``: the API's preview answer).
"""

from __future__ import annotations

from datetime import datetime

import click

from .. import _clock
from .._cron_walk import DstGap, DstRepeat
from .._preview import (
    DstMark,
    MarkedOccurrence,
    dst_marks,
    near_dst_transition,
    preview,
    utc_offset_text,
)
from .._wire import preview_to_wire
from ..cron import CronExpr, load_zone, parse
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


def _mark_text(entry: MarkedOccurrence, clock: str) -> str:
    asked = f"{entry.wall:{clock}}"
    if entry.mark is DstMark.MOVED:
        return f"moved from {asked}"
    if entry.mark is DstMark.SKIPPED:
        return f"skipped {asked}: no run"
    if entry.mark is DstMark.DOUBLED:
        return f"doubled: {asked} runs twice"
    return ""


def _occurrences(
    expr: CronExpr, after: datetime, count: int, clock: str
) -> list[tuple[datetime, datetime | None, str, str]]:
    """(local, utc, utc_offset, note) of each occurrence, and of each one DST skipped
    (utc None); the note marks DST changes and what DST did to the occurrence."""
    timezone = expr.timezone
    zone = load_zone(timezone)
    rows: list[tuple[datetime, datetime | None, str, str]] = []
    previous = utc_offset_text(after, timezone)
    found = preview(
        cron=expr.expr,
        timezone=timezone,
        after=after,
        count=count,
        dst_gap=expr.dst_gap,
        dst_repeat=expr.dst_repeat,
    )
    for entry in dst_marks(expr, after, found):
        when, mark = entry.at, _mark_text(entry, clock)
        if entry.mark is DstMark.SKIPPED:
            rows.append((entry.wall.replace(tzinfo=zone), None, "", f"DST: {mark}"))
            continue
        offset = utc_offset_text(when, timezone)
        note = _note(offset, previous, near_dst_transition(when, timezone))
        if mark:
            note = f"{note}; {mark}" if note else f"DST: {mark}"
        rows.append((when.astimezone(zone), when, offset, note))
        previous = offset
    return rows


@click.command("cron")
@click.argument("expr", nargs=-1, required=True)
@click.option(
    "--tz", "timezone", default="UTC", show_default=True, help="IANA zone to read EXPR in."
)
@click.option("-n", "--count", default="5", show_default=True, help="How many, 1 to 1000.")
@click.option("--after", default=None, help="Start after this ISO 8601 time (default: now).")
@click.option(
    "--dst-gap",
    type=click.Choice([gap.value for gap in DstGap]),
    default=DstGap.SHIFT.value,
    show_default=True,
    help="A fixed time a DST gap skips: run at the gap's end, or not that day.",
)
@click.option(
    "--dst-repeat",
    type=click.Choice([repeat.value for repeat in DstRepeat]),
    default=DstRepeat.FIRST.value,
    show_default=True,
    help="A fixed time a DST fall-back repeats: run at the first, the last or both.",
)
@click.option("--json", "as_json", is_flag=True, help="Print JSON for scripts.")
def command(
    expr: tuple[str, ...],
    timezone: str,
    count: str,
    after: str | None,
    dst_gap: str,
    dst_repeat: str,
    as_json: bool,
) -> None:
    """Explain the cron expression EXPR and list its next occurrences.

    EXPR is one quoted argument ("0 9 * * 1-5") or its fields as separate arguments.
    """
    text = " ".join(expr)
    seconds = len(text.split()) == 6
    clock = "%H:%M:%S" if seconds else "%H:%M"
    try:
        parsed = parse(text, timezone, dst_gap=dst_gap, dst_repeat=dst_repeat)
        start = _after(after, timezone)
        rows = _occurrences(parsed, start, _count(count), clock)
    except ConfigError as exc:
        fail(str(exc), code=2)
        return
    if as_json:  # the API's answer to GET /cron/preview, DST marks included
        occurrences = [utc for _, utc, _, _ in rows if utc is not None]
        echo_json(
            preview_to_wire(
                cron=text,
                every=None,
                timezone=timezone,
                occurrences=occurrences,
                after=start,
                dst_gap=dst_gap,
                dst_repeat=dst_repeat,
            )
        )
        return
    click.echo(parsed.explain())
    table: list[tuple[int | str, str, str, str]] = []
    index = 0
    for local, utc, offset, note in rows:
        if utc is None:  # skipped by DST: listed in its place, not counted
            table.append(("-", f"{local:%a %Y-%m-%d {clock}}", "-", note))
            continue
        index += 1
        in_zone = f"{local:%a %Y-%m-%d {clock}} {offset}"
        table.append((index, in_zone, f"{utc:%Y-%m-%d {clock}}", note))
    if timezone == "UTC":  # one column says it all; UTC has no DST
        print_table(["#", "UTC"], [(index, f"{utc} UTC") for index, _, utc, _ in table])
    else:
        print_table(["#", timezone, "UTC", "note"], table)
