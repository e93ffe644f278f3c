"""``engine.calendar`` and friends (DESIGN §3): named business calendars stored in the
database, on both backends. A country's public holidays come from the optional
``holidays`` extra and are stored per year, so a process without the extra reads the
same dates; bad input is a ``ConfigError`` and changes nothing stored."""

from __future__ import annotations

import sys
from datetime import date
from typing import Any

import pytest

from tickwork import Calendar, Context, Cron, Engine
from tickwork.errors import ConfigError
from tickwork.testing import FakeClock


def test_a_calendar_is_stored_and_read_back(engine: Engine, clock: FakeClock) -> None:
    made = engine.calendar(
        "acme", holidays=["2026-12-24", date(2026, 12, 31), "2026-12-24"], weekend=["sun", "Sat"]
    )
    assert made.name == "acme" and made.weekend == ("SAT", "SUN")
    assert made.holidays == (date(2026, 12, 24), date(2026, 12, 31))
    assert made.country is None and made.subdivision is None
    assert made.updated_at == clock.now()
    assert engine.get_calendar("acme") == made
    assert engine.list_calendars() == [made]


def test_setting_a_calendar_again_replaces_it(engine: Engine) -> None:
    engine.calendar("acme", holidays=["2026-12-24"])
    engine.calendar("acme", weekend=("FRI", "SAT"))
    found = engine.get_calendar("acme")
    assert found is not None and found.holidays == () and found.weekend == ("FRI", "SAT")


def test_delete_says_whether_there_was_one(engine: Engine) -> None:
    engine.calendar("acme")
    assert engine.delete_calendar("acme") is True
    assert engine.delete_calendar("acme") is False
    assert engine.get_calendar("acme") is None and engine.list_calendars() == []


@pytest.mark.parametrize(
    ("kwargs", "words"),
    [
        ({"name": ""}, "Bad calendar name"),
        ({"name": "a b"}, "Bad calendar name"),
        ({"name": 7}, "Bad calendar name"),
        ({"holidays": "2026-12-24"}, "Bad holidays"),
        ({"holidays": ["24/12/2026"]}, "Bad holiday '24/12/2026'"),
        ({"holidays": [20261224]}, "Bad holiday 20261224"),
        ({"weekend": ["SAT", "Caturday"]}, "'Caturday' is not a day of the week"),
        ({"weekend": "SAT"}, "Bad weekend"),
        ({"weekend": ["MON", "TUE", "WED", "THU", "FRI", "SAT", "SUN"]}, "no business day"),
        ({"subdivision": "ENG"}, "needs a country"),
        ({"country": "XX"}, "country='XX'"),
        ({"country": "GB", "subdivision": "ZZZ"}, "subdivision ZZZ"),
    ],
)
def test_bad_input_is_refused_and_changes_nothing(
    engine: Engine, kwargs: dict[str, Any], words: str
) -> None:
    before = engine.calendar("acme", holidays=["2026-12-24"])
    kwargs = dict(kwargs)  # the table's dicts are shared by both backends' cases
    name = kwargs.pop("name", "acme")
    with pytest.raises(ConfigError, match=words):
        engine.calendar(name, **kwargs)
    assert engine.list_calendars() == [before]


def test_a_country_calendar_has_its_public_holidays(engine: Engine) -> None:
    made = engine.calendar("uk", country="GB", subdivision="ENG", holidays=["2026-12-24"])
    assert (made.country, made.subdivision) == ("GB", "ENG")
    december = [h for h in engine.calendar_holidays("uk", 2026) if h.day.month == 12]
    assert [(h.day, h.name) for h in december] == [
        (date(2026, 12, 24), ""),  # listed by hand
        (date(2026, 12, 25), "Christmas Day"),
        (date(2026, 12, 26), "Boxing Day"),  # a Saturday: observed on the Monday
        (date(2026, 12, 28), "Boxing Day (observed)"),
    ]


def test_without_the_extra_a_country_calendar_is_refused_naming_it(
    engine: Engine, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "holidays", None)  # import holidays -> ImportError
    with pytest.raises(ConfigError, match=r"pip install 'tickwork\[holidays\]'"):
        engine.calendar("uk", country="GB", subdivision="ENG")
    assert engine.list_calendars() == []
    engine.calendar("acme", holidays=["2026-12-24"])  # dates listed by hand need no extra
    assert [h.day for h in engine.calendar_holidays("acme", 2026)] == [date(2026, 12, 24)]


def test_stored_years_need_no_extra(engine: Engine, monkeypatch: pytest.MonkeyPatch) -> None:
    # Set where the extra is installed: this year and the next are resolved and stored.
    engine.calendar("uk", country="GB", subdivision="ENG")
    with_extra = {year: engine.calendar_holidays("uk", year) for year in (2026, 2027)}
    monkeypatch.setitem(sys.modules, "holidays", None)  # a worker without the extra
    assert {year: engine.calendar_holidays("uk", year) for year in (2026, 2027)} == with_extra
    with pytest.raises(ConfigError, match=r"tickwork\[holidays\]"):
        engine.calendar_holidays("uk", 2030)  # never resolved: needs the extra once


def test_a_year_resolved_once_is_stored(engine: Engine, monkeypatch: pytest.MonkeyPatch) -> None:
    engine.calendar("uk", country="GB", subdivision="ENG")
    first = engine.calendar_holidays("uk", 2031)
    monkeypatch.setitem(sys.modules, "holidays", None)
    assert engine.calendar_holidays("uk", 2031) == first


def test_holidays_of_an_unknown_calendar_is_a_config_error(engine: Engine) -> None:
    with pytest.raises(ConfigError, match="No calendar 'nope'"):
        engine.calendar_holidays("nope", 2026)


# -- declared in code: Engine(calendars=[Calendar(...)]) (issue 47) ----------------------


def test_declared_calendars_are_stored_before_the_schedules_that_use_them(
    db_url: str, clock: FakeClock
) -> None:
    """``sync_schedules`` (what a worker runs at start-up) stores the declared calendars
    first, so a declared schedule naming one registers; nothing is stored before."""
    office = Calendar("office", holidays=["2026-12-24"], weekend=["FRI", "SAT"])
    with Engine(db_url, clock=clock, calendars=[office]) as engine:

        @engine.workflow(schedule=Cron("0 9 * * *", calendar="office", on_holiday="next"))
        def report(ctx: Context) -> None:
            return None

        assert engine.list_calendars() == []
        assert engine.sync_schedules() == ["report"]
        [stored] = engine.list_calendars()
        assert (stored.name, stored.holidays, stored.weekend) == (
            "office", (date(2026, 12, 24),), ("FRI", "SAT"),
        )  # fmt: skip
        info = engine.get_schedule("report")
        assert info is not None and info.calendar == "office"


def test_sync_calendars_leaves_a_calendar_stored_as_declared_alone(
    db_url: str, clock: FakeClock
) -> None:
    """Every start syncs: an unchanged declaration writes nothing (its ``updated_at`` and
    so the firing loops' copies stay); a changed one replaces the stored calendar."""
    with Engine(db_url, clock=clock, calendars=[Calendar("office")]) as engine:
        assert engine.sync_calendars() == ["office"]
        first = engine.get_calendar("office")
        clock.advance("1h")
        assert engine.sync_calendars() == ["office"]
        assert engine.get_calendar("office") == first
    changed = Calendar("office", holidays=["2026-12-31"])
    with Engine(db_url, clock=clock, calendars=[changed]) as engine:
        engine.sync_calendars()
        stored = engine.get_calendar("office")
        assert stored is not None and stored.holidays == (date(2026, 12, 31),)
        assert first is not None and stored.updated_at > first.updated_at


def test_a_schedule_names_a_declared_calendar_without_a_sync_first(
    db_url: str, clock: FakeClock
) -> None:
    with Engine(db_url, clock=clock, calendars=[Calendar("office")]) as engine:
        engine.workflow("report")(lambda ctx: None)
        key = engine.schedule("report", cron="0 9 * * *", calendar="office")
        info = engine.get_schedule(key)
        assert info is not None and info.calendar == "office"


@pytest.mark.parametrize(
    ("build", "message"),
    [
        (lambda: Calendar("no spaces"), "Bad calendar name 'no spaces'"),
        (lambda: Calendar("uk", holidays=["2026-13-01"]), "Bad holiday '2026-13-01'"),
        (lambda: Calendar("uk", weekend=["SUNDAY", "FUNDAY"]), "'FUNDAY' is not a day"),
        (lambda: Calendar("uk", subdivision="ENG"), "subdivision='ENG' needs a country"),
        (lambda: Calendar("uk", country="XX"), "Unknown holidays for country='XX'"),
        (lambda: Engine("sqlite://", calendars=["uk"]), r"calendars= takes tickwork\.Calendar"),
        (
            lambda: Engine("sqlite://", calendars=[Calendar("uk"), Calendar("uk")]),
            "declares the calendar 'uk' twice",
        ),
    ],
)
def test_a_declared_calendar_is_checked_when_it_is_built(build: Any, message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        build()


def test_without_the_extra_a_declared_country_calendar_is_refused_when_declared(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Decided at declaration, as a bad ``Cron`` is: an app that declares a country's
    holidays needs the extra wherever it is imported; the error names it."""
    monkeypatch.setitem(sys.modules, "holidays", None)
    with pytest.raises(ConfigError, match=r"pip install 'tickwork\[holidays\]'"):
        Calendar("uk", country="GB")
    assert Calendar("acme", holidays=["2026-12-24"]).holidays == (date(2026, 12, 24),)
