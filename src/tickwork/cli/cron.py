"""``tickwork cron EXPR``: a cron expression in English and its next occurrences.

Nothing is registered; it answers "when would this run?" before a schedule is written,
in the schedule's zone and in UTC, with DST changes marked: an occurrence DST moved,
skipped (``--dst-gap skip``) or doubled says so in its note (with ``--json``, in its
``dst`` field, and ``dst_skipped``: the API's preview answer). No database is opened
unless ``--calendar NAME`` names a stored business calendar: then ``nBD`` / ``LBD`` count
its business days, and an occurrence on its day off is marked skipped, or moved with
where its run starts (``--on-holiday``; ``holiday`` and ``runs_at`` in the JSON).
"""

from __future__ import annotations

from datetime import datetime, tzinfo

import click

from .._edge.wire import preview_to_wire
from .._rules.calendars import days_for_preview
from .._rules.preview import (
    DstMark,
    HolidayMark,
    MarkedOccurrence,
    dst_marks,
    holiday_marks,
    near_dst_transition,
    preview,
    utc_offset_text,
)
from .._values import clock as _clock
from .._values.business_days import BusinessDays
from .._values.models import DstGap, DstRepeat, OnHoliday
from ..cron import CronExpr, load_zone, parse
from ..errors import ConfigError, CronError
from ._options import database_option, open_engine
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


def _holiday_text(mark: HolidayMark, zone: tzinfo, clock: str) -> str:
    """An occurrence on the calendar's day off, said as the DST marks are."""
    if mark.runs_at is None:
        return f"holiday: skipped, no run ({mark.reason})"
    return f"holiday: runs {mark.runs_at.astimezone(zone):%a %Y-%m-%d {clock}} ({mark.reason})"


def _occurrences(
    expr: CronExpr, after: datetime, count: int, clock: str, on_holiday: str = "skip"
) -> tuple[list[datetime], list[tuple[datetime, datetime | None, str, str]]]:
    """The occurrences, and (local, utc, utc_offset, note) of each and of each one DST
    skipped (utc None); the note marks DST changes, what DST did to the occurrence and
    what the expression's calendar (if any) does with it under ``on_holiday``."""
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
        calendar=expr.calendar,
    )
    holidays = {}
    if expr.calendar is not None:
        holidays = holiday_marks(expr.calendar, on_holiday, timezone, found)
    for entry in dst_marks(expr, after, found):
        when, mark = entry.at, _mark_text(entry, clock)
        if entry.mark is DstMark.SKIPPED:
            rows.append((entry.wall.replace(tzinfo=zone), None, "", f"DST: {mark}"))
            continue
        offset = utc_offset_text(when, timezone)
        note = _note(offset, previous, near_dst_transition(when, timezone))
        if mark:
            note = f"{note}; {mark}" if note else f"DST: {mark}"
        if when in holidays:
            said = _holiday_text(holidays[when], zone, clock)
            note = f"{note}; {said}" if note else said
        rows.append((when.astimezone(zone), when, offset, note))
        previous = offset
    return found, rows


def _calendar(name: str | None, database: str | None, after: datetime) -> BusinessDays | None:
    """The stored calendar ``name``'s days (None without one), read from ``database``:
    opened only then, and never created."""
    if name is None:
        return None
    with open_engine(database) as engine:
        found = engine.get_calendar(name)
        if found is None:
            fail(
                f"No calendar {name!r} in {engine.console.where}: see `tickwork calendars list`", 2
            )
        return days_for_preview(name, found, engine.calendar_holidays, after)


def _needs_calendar(exc: ConfigError, calendar: str | None) -> str:
    """``exc``'s message, saying how to preview business-day words without a calendar."""
    if calendar is None and isinstance(exc, CronError) and "need a calendar" in exc.reason:
        return (
            f"{exc}; to preview it, name a stored calendar: tickwork cron {exc.expr!r} "
            "--calendar NAME [--database URL]"
        )
    return str(exc)


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
@click.option(
    "--calendar",
    default=None,
    help="A stored business calendar: nBD/LBD count its business days; days off marked.",
)
@click.option(
    "--on-holiday",
    type=click.Choice([policy.value for policy in OnHoliday]),
    default=OnHoliday.SKIP.value,
    show_default=True,
    help="With --calendar: an occurrence on a day off is skipped, or its run moved.",
)
@database_option
@click.option("--json", "as_json", is_flag=True, help="Print JSON for scripts.")
def command(
    expr: tuple[str, ...],
    timezone: str,
    count: str,
    after: str | None,
    dst_gap: str,
    dst_repeat: str,
    calendar: str | None,
    on_holiday: str,
    database: str | None,
    as_json: bool,
) -> None:
    """Explain the cron expression EXPR and list its next occurrences.

    EXPR is one quoted argument ("0 9 * * 1-5") or its fields as separate arguments.
    """
    text = " ".join(expr)
    seconds = len(text.split()) == 6
    clock = "%H:%M:%S" if seconds else "%H:%M"
    try:
        start = _after(after, timezone)
        days = _calendar(calendar, database, start)
        parsed = parse(text, timezone, dst_gap=dst_gap, dst_repeat=dst_repeat, calendar=days)
        found, rows = _occurrences(parsed, start, _count(count), clock, on_holiday)
    except ConfigError as exc:
        fail(_needs_calendar(exc, calendar), code=2)
    if as_json:  # the API's answer to GET /cron/preview, DST and holiday marks included
        echo_json(
            preview_to_wire(
                cron=text,
                every=None,
                timezone=timezone,
                occurrences=found,
                after=start,
                dst_gap=dst_gap,
                dst_repeat=dst_repeat,
                calendar=days,
                on_holiday=on_holiday,
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
    if timezone == "UTC" and not any(note for *_, note in table):  # UTC has no DST
        print_table(["#", "UTC"], [(index, f"{utc} UTC") for index, _, utc, _ in table])
    elif timezone == "UTC":  # a calendar's notes
        rows_utc = [(index, f"{utc} UTC", note) for index, _, utc, note in table]
        print_table(["#", "UTC", "note"], rows_utc)
    else:
        print_table(["#", timezone, "UTC", "note"], table)
