"""Hints for a name that was not found: the known name closest to it (a typo's fix).

Pure: the callers pass the names they know (a bounded list: ``difflib`` compares each).
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable

__all__ = ["close_names", "did_you_mean", "not_found"]


def close_names(name: str, known: Iterable[str], n: int = 1) -> tuple[str, ...]:
    """The ``n`` names of ``known`` closest to ``name`` (case aside), closest first; none
    when nothing is close."""
    by_folded = {each.casefold(): each for each in known if each != name}
    close = difflib.get_close_matches(name.casefold(), list(by_folded), n=n)
    return tuple(by_folded[each] for each in close)


def did_you_mean(suggestions: Iterable[str]) -> str:
    """``"did you mean 'nightly-report'?"`` (or ``"'a' or 'b'"``); empty without any."""
    names = " or ".join(repr(each) for each in suggestions)
    return f"did you mean {names}?" if names else ""


def not_found(what: str, name: str, where: str, suggestions: Iterable[str] = ()) -> str:
    """``no schedule 'nightly' in sqlite:///tickwork.db; did you mean 'nightly-report'?``:
    what was looked for, in which database, and the closest known name if any."""
    hint = did_you_mean(suggestions)
    return f"no {what} {name!r} in {where}" + (f"; {hint}" if hint else "")
