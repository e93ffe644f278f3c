"""The pure rules of ``pause_after_failures`` and of notes (``_policy``, ``_registry``)."""

from __future__ import annotations

import pytest

from tickwork._rules.policy import auto_pause_note, auto_pauses
from tickwork._values.checks import MAX_NOTE, check_note
from tickwork._values.models import ScheduleState
from tickwork.errors import ConfigError


@pytest.mark.parametrize(
    ("state", "failed", "option", "pauses"),
    [
        (ScheduleState.ACTIVE, 3, 3, True),
        (ScheduleState.ACTIVE, 4, 3, True),  # the option lowered below a running count
        (ScheduleState.ACTIVE, 2, 3, False),
        (ScheduleState.ACTIVE, 100, None, False),
        (ScheduleState.PAUSED, 3, 3, False),
        (ScheduleState.INACTIVE, 3, 3, False),
    ],
)
def test_only_an_active_schedule_pauses_once_its_count_is_reached(
    state: ScheduleState, failed: int, option: int | None, pauses: bool
) -> None:
    assert auto_pauses(state, failed, option) is pauses


def test_the_note_names_the_count_the_run_and_its_error_on_one_line() -> None:
    note = auto_pause_note(3, "k@2026-03-01T12:30:00.000Z", "KeyError: 'day'\n  more")
    assert note == (
        "paused after 3 failed runs in a row; the last, k@2026-03-01T12:30:00.000Z, "
        "failed: KeyError: 'day' more"
    )
    assert auto_pause_note(1, "r", None).startswith("paused after 1 failed run; the last, r,")


def test_a_long_error_is_cut_to_fit_a_note_that_check_note_accepts() -> None:
    note = auto_pause_note(2, "r", "E" * 5000)
    assert len(note) == MAX_NOTE and note.endswith("...")
    assert check_note(note) == note


@pytest.mark.parametrize("bad", ["x" * (MAX_NOTE + 1), "a\tb", "\x7f", b"bytes", "\udfff"])
def test_check_note_refuses_what_cannot_be_stored_or_printed(bad: object) -> None:
    with pytest.raises(ConfigError, match="note"):
        check_note(bad)


def test_check_note_strips_and_takes_blank_as_none() -> None:
    assert check_note("  why  ") == "why"
    assert check_note(" \u3000 ") is None
    assert check_note(None) is None
