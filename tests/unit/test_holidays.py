"""Public holidays from the optional ``holidays`` extra (DESIGN §3): a country's and a
subdivision's holidays for a year, and a clear ``ConfigError`` naming the extra when it is
not installed, or when the country or subdivision is unknown."""

from __future__ import annotations

import sys
from datetime import date

import pytest

from tickwork._values.holidays import Holiday, check_source, public_holidays
from tickwork.errors import ConfigError


def test_englands_holidays_for_a_year() -> None:
    found = public_holidays("GB", "ENG", 2025)
    assert [holiday.day for holiday in found] == [
        date(2025, 1, 1),
        date(2025, 4, 18),
        date(2025, 4, 21),
        date(2025, 5, 5),
        date(2025, 5, 26),
        date(2025, 8, 25),
        date(2025, 12, 25),
        date(2025, 12, 26),
    ]
    assert Holiday(date(2025, 12, 25), "Christmas Day") in found


def test_a_subdivision_has_holidays_of_its_own() -> None:
    scotland = {holiday.day for holiday in public_holidays("GB", "SCT", 2025)}
    england = {holiday.day for holiday in public_holidays("GB", "ENG", 2025)}
    assert date(2025, 1, 2) in scotland - england  # the 2nd of January
    assert date(2025, 4, 21) in england - scotland  # Easter Monday


@pytest.mark.parametrize(
    ("country", "subdivision", "words"),
    [
        ("XX", None, "country='XX'"),
        ("GB", "ZZZ", "subdivision ZZZ"),
        ("", None, "Bad country ''"),
        (44, None, "Bad country 44"),
        ("GB", 3, "Bad subdivision 3"),
    ],
)
def test_an_unknown_source_is_a_config_error(
    country: object, subdivision: object, words: str
) -> None:
    with pytest.raises(ConfigError, match=words):
        check_source(country, subdivision)


@pytest.mark.parametrize("year", [0, 10_000, True, "2025"])
def test_a_bad_year_is_a_config_error(year: object) -> None:
    with pytest.raises(ConfigError, match="Bad year"):
        public_holidays("GB", None, year)  # type: ignore[arg-type]


def test_without_the_extra_the_error_names_it(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "holidays", None)  # import holidays -> ImportError
    with pytest.raises(ConfigError) as caught:
        public_holidays("GB", "ENG", 2025)
    assert "pip install 'tickwork[holidays]'" in str(caught.value)
    assert "country='GB'" in str(caught.value)
    with pytest.raises(ConfigError, match=r"tickwork\[holidays\]"):
        check_source("GB", "ENG")
