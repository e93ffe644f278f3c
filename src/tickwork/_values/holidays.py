"""Public holidays from the well-kept ``holidays`` package, an optional extra
(``pip install 'tickwork[holidays]'``), for business calendars with a ``country``.

Only the process that resolves a year's holidays needs the extra: a calendar's dates are
stored per year (DESIGN §3), so workers without it decide the same way. Without the
extra, asking for a country's holidays is a ``ConfigError`` that names the extra.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from datetime import date
from types import ModuleType

from ..errors import ConfigError

__all__ = ["EXTRA", "Holiday", "check_source", "check_year", "public_holidays"]

#: how to install what this module needs
EXTRA = "pip install 'tickwork[holidays]'"


@dataclass(frozen=True, order=True)
class Holiday:
    """One public holiday: its date and its name as the ``holidays`` package gives it."""

    day: date
    name: str


def check_source(country: object, subdivision: object = None) -> None:
    """Refuse a ``country`` / ``subdivision`` the ``holidays`` package does not know
    (``ConfigError``, naming the extra when it is not installed)."""
    _country_holidays(country, subdivision, years=())


def check_year(year: object) -> None:
    """Refuse a year that is not an int from 1 to 9999 (``ConfigError``)."""
    if isinstance(year, bool) or not isinstance(year, int) or not 1 <= year <= 9999:
        raise ConfigError(f"Bad year {year!r}: expected an int from 1 to 9999")


def public_holidays(country: str, subdivision: str | None, year: int) -> tuple[Holiday, ...]:
    """The public holidays of ``country`` (ISO 3166-1 alpha-2, e.g. ``"GB"``) and its
    ``subdivision`` (e.g. ``"ENG"``) in ``year``, in date order. Raises ``ConfigError``
    for an unknown country, subdivision or year, or when the extra is missing."""
    check_year(year)
    found = _country_holidays(country, subdivision, years=(year,))
    # Two holidays on one day come joined ("Christmas Day; Sunday"): keep the package's text.
    return tuple(sorted(Holiday(day, str(name)) for day, name in found.items()))


def _country_holidays(
    country: object, subdivision: object, years: tuple[int, ...]
) -> dict[date, str]:
    if not isinstance(country, str) or not country:
        raise ConfigError(f"Bad country {country!r}: expected an ISO 3166 code such as 'GB'")
    if subdivision is not None and (not isinstance(subdivision, str) or not subdivision):
        raise ConfigError(
            f"Bad subdivision {subdivision!r}: expected a code such as 'ENG', or None"
        )
    package = _package(country)
    try:
        found = package.country_holidays(country, subdiv=subdivision, years=years)
    except NotImplementedError as exc:  # the package's "not available" / "no subdivision"
        raise ConfigError(f"Unknown holidays for country={country!r}: {exc}") from None
    return dict(found.items())


def _package(country: str) -> ModuleType:
    try:
        return importlib.import_module("holidays")
    except ImportError:
        raise ConfigError(
            f"The public holidays of country={country!r} come from the optional 'holidays' "
            f"package, which is not installed: {EXTRA} (or list the dates in holidays=)"
        ) from None
