"""``tickwork calendars list|show|set|delete``: named business calendars (DESIGN §3)."""

from __future__ import annotations

from datetime import UTC

import click

from .._edge.calendar_wire import calendar_list_to_wire, calendar_year_to_wire
from .._values import clock as _clock
from .._values.hints import not_found
from .._values.models import CalendarInfo
from .._values.wire_values import to_json
from ._options import database_option, json_option, open_engine
from ._render import echo_json, fail, print_table, printable

__all__ = ["command"]


def _source(calendar: CalendarInfo) -> str:
    if calendar.country is None:
        return "-"
    return "-".join(part for part in (calendar.country, calendar.subdivision) if part)


@click.group("calendars")
def command() -> None:
    """Set, show, list and delete named business calendars."""


@command.command("list")
@database_option
@json_option
def list_(database: str | None, as_json: bool) -> None:
    """Every calendar, by name."""
    with open_engine(database) as engine:
        calendars = engine.list_calendars()
    if as_json:
        echo_json(calendar_list_to_wire(calendars))
        return
    if not calendars:
        click.echo(
            f"No calendars in {engine.console.where}: `tickwork calendars set NAME` makes one."
        )
        return
    print_table(
        ["name", "weekend", "dates listed", "public holidays of", "updated (UTC)"],
        [
            (
                printable(c.name), ",".join(c.weekend), len(c.holidays), _source(c),
                c.updated_at.astimezone(UTC).strftime("%Y-%m-%d %H:%M:%S"),
            )
            for c in calendars
        ],
    )  # fmt: skip


@command.command("show")
@click.argument("name")
@click.option("--year", type=int, default=None, help="Whose holidays (default: this year).")
@database_option
@json_option
def show(name: str, year: int | None, database: str | None, as_json: bool) -> None:
    """A calendar and its holidays of a year (a country's resolved and stored as needed)."""
    with open_engine(database) as engine:
        calendar = engine.get_calendar(name)
        if calendar is None:
            fail(not_found("calendar", name, engine.console.where), code=3)
            return
        year = year if year is not None else _clock.SystemClock().now().year
        holidays = engine.calendar_holidays(name, year)
    if as_json:
        echo_json(calendar_year_to_wire(calendar, year, holidays))
        return
    click.echo(f"{printable(calendar.name)}: weekend {','.join(calendar.weekend) or 'none'}")
    if calendar.country is not None:
        click.echo(f"public holidays of {_source(calendar)}")
    if not holidays:
        click.echo(f"No holidays in {year}.")
        return
    print_table(
        ["date", "holiday"],
        [(f"{h.day:%a %Y-%m-%d}", printable(h.name) or "(listed)") for h in holidays],
    )


@command.command("set")
@click.argument("name")
@click.option("--holiday", "holidays", multiple=True, help="A date, YYYY-MM-DD (repeatable).")
@click.option("--weekend", default="SAT,SUN", show_default=True, help="Day names, comma-separated.")
@click.option("--country", default=None, help="Add its public holidays (ISO code, e.g. GB).")
@click.option("--subdivision", default=None, help="The country's subdivision (e.g. ENG).")
@database_option
@json_option
def set_(
    name: str,
    holidays: tuple[str, ...],
    weekend: str,
    country: str | None,
    subdivision: str | None,
    database: str | None,
    as_json: bool,
) -> None:
    """Store the calendar NAME, replacing one of that name whole."""
    days = tuple(day.strip() for day in weekend.split(",") if day.strip())
    with open_engine(database, create=True) as engine:
        calendar = engine.calendar(
            name, holidays=holidays, weekend=days, country=country, subdivision=subdivision
        )
    if as_json:
        echo_json(to_json(calendar))
        return
    click.echo(f"{printable(name)}: set")


@command.command("delete")
@click.argument("name")
@database_option
def delete(name: str, database: str | None) -> None:
    """Delete the calendar NAME."""
    with open_engine(database) as engine:
        if not engine.delete_calendar(name):
            fail(not_found("calendar", name, engine.console.where), code=3)
    click.echo(f"{printable(name)}: deleted")
