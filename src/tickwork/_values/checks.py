"""The checks every face and service applies to what a user names: names, ids, notes,
pools, priorities and page sizes. Each refuses with a ``ConfigError`` saying what is
allowed; the checks of one kind of value (an event's name, a schedule's options) stay
with it and build on these.
"""

from __future__ import annotations

import re

from ..errors import ConfigError

__all__ = [
    "CONTROL_SAID",
    "MAX_LIMIT",
    "MAX_NAME",
    "MAX_NOTE",
    "check_limit",
    "check_name",
    "check_note",
    "check_pool",
    "check_priority",
    "clip",
    "has_control",
]

#: the longest workflow name or run id
MAX_NAME = 200
#: the longest note a schedule's state change keeps (characters)
MAX_NOTE = 1000
#: the most runs or history entries one call lists
MAX_LIMIT = 10_000
#: priorities are stored as 64-bit integers
_INT64 = range(-(2**63), 2**63)

#: what no name, id, key or note may hold: Unicode's control characters (category Cc: C0,
#: DEL, C1), the line and paragraph separators, the bidi embeddings, overrides and
#: isolates (U+202A-U+202E, U+2066-U+2069: "abc\u202egpj.exe" shows as "abcexe.jpg" in
#: the CLI and the dashboard), and lone surrogates (no UTF-8 text: a database refuses it)
_CONTROL = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069\ud800-\udfff]")
#: how refusals name what ``has_control`` finds
CONTROL_SAID = "control characters (bidi controls, line separators and lone surrogates included)"


def has_control(text: str) -> bool:
    """Whether ``text`` holds a character ``_CONTROL`` names (NUL, ESC, U+202E...): such a
    name or id could not be stored on PostgreSQL (NUL), encoded (a lone surrogate) or shown
    as what it is (a terminal sequence, a bidi override). One regex search: an emit checks
    its name and id on every call."""
    return _CONTROL.search(text) is not None


def check_name(value: object, what: str) -> str:
    """A workflow name, run id or pool: 1 to ``MAX_NAME`` characters, none a control one."""
    if not isinstance(value, str) or not value or len(value) > MAX_NAME or has_control(value):
        raise ConfigError(
            f"{what} must be 1 to {MAX_NAME} characters without {CONTROL_SAID}, not {value!r}"
        )
    return value


def check_note(note: object) -> str | None:
    """A state change's note: None, or text of at most ``MAX_NOTE`` characters without
    control characters, bidi controls or lone surrogates (it is printed by the CLI and
    kept in the history). Blank text is
    no note."""
    if note is None:
        return None
    if not isinstance(note, str) or len(note) > MAX_NOTE or has_control(note):
        raise ConfigError(
            f"A note must be text of at most {MAX_NOTE} characters without {CONTROL_SAID} "
            f"(newlines included), not {clip(note)}"
        )
    return note.strip() or None


def clip(value: object) -> str:
    """``repr(value)``, cut short: a refused note or path may be long."""
    text = repr(value)
    return text if len(text) <= 80 else f"{text[:77]}..."


def check_pool(pool: object) -> str:
    return check_name(pool, "A pool name")


def check_priority(priority: object) -> int:
    if isinstance(priority, bool) or not isinstance(priority, int) or priority not in _INT64:
        raise ConfigError(f"priority must be a 64-bit int, not {priority!r}")
    return priority


def check_limit(limit: object) -> None:
    """A page size: an int from 1 to ``MAX_LIMIT``."""
    if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= MAX_LIMIT:
        raise ConfigError(f"limit must be an int from 1 to {MAX_LIMIT}, not {limit!r}")
