"""A stepped wall clock (``date``, an NTP step, a VM resumed with a stale clock) moves
neither tickwork's system clock (for ten minutes) nor its reference clock (ever).

The machine's clocks are simulated: ``Clocks`` stands in for the wall clock that
``tickwork._values.clock`` reads (``time.time_ns``) and for its steady clock (``_steady_ns``).
"""

from __future__ import annotations

import logging
from types import SimpleNamespace

import pytest

from tickwork._values import clock as _clock
from tickwork._values.clock import STEP_GRACE_NS, ReferenceClock, SystemClock

SECOND = 1_000_000_000
HOUR = 3600 * SECOND
START = 1_800_000_000 * SECOND  # 2027-01-15, as wall-clock nanoseconds


class Clocks:
    """A wall clock and a steady clock that advance together until the wall one steps."""

    def __init__(self) -> None:
        self.steady = 5 * SECOND
        self.wall = START

    def advance(self, ns: int) -> None:
        self.steady += ns
        self.wall += ns

    def step_wall(self, ns: int) -> None:
        self.wall += ns


@pytest.fixture
def clocks(monkeypatch: pytest.MonkeyPatch) -> Clocks:
    machine = Clocks()
    monkeypatch.setattr(_clock, "_steady_ns", lambda: machine.steady)
    monkeypatch.setattr(_clock, "time", SimpleNamespace(time_ns=lambda: machine.wall))
    return machine


def ms(ns: int) -> int:
    return ns // 1_000_000


@pytest.mark.parametrize("step", [HOUR, -HOUR])
def test_system_clock_does_not_follow_a_step_of_the_wall_clock_and_warns(
    clocks: Clocks, step: int, caplog: pytest.LogCaptureFixture
) -> None:
    clock = SystemClock()
    clocks.advance(10 * SECOND)
    assert _clock.now_ms(clock) == ms(START + 10 * SECOND)
    clocks.step_wall(step)
    clocks.advance(SECOND)
    with caplog.at_level(logging.WARNING, logger="tickwork"):
        assert _clock.now_ms(clock) == ms(START + 11 * SECOND)
    assert "wall clock stepped" in caplog.text
    clocks.advance(STEP_GRACE_NS // 2)
    assert _clock.now_ms(clock) == ms(START + 11 * SECOND + STEP_GRACE_NS // 2)


def test_system_clock_adopts_a_step_that_lasts_past_the_grace(
    clocks: Clocks, caplog: pytest.LogCaptureFixture
) -> None:
    clock = SystemClock()
    clocks.step_wall(HOUR)
    assert _clock.now_ms(clock) == ms(START)
    clocks.advance(STEP_GRACE_NS + SECOND)
    with caplog.at_level(logging.WARNING, logger="tickwork"):
        assert _clock.now_ms(clock) == ms(clocks.wall)
    assert "adopting it" in caplog.text
    clocks.advance(SECOND)
    assert _clock.now_ms(clock) == ms(clocks.wall)


def test_system_clock_follows_the_wall_clock_when_a_step_is_undone(clocks: Clocks) -> None:
    clock = SystemClock()
    clocks.step_wall(HOUR)
    clocks.advance(SECOND)
    assert _clock.now_ms(clock) == ms(START + SECOND)
    clocks.step_wall(-HOUR)  # NTP puts it right
    clocks.advance(SECOND)
    assert _clock.now_ms(clock) == ms(clocks.wall) == ms(START + 2 * SECOND)


def test_system_clock_follows_small_drift_as_ntp_slews_the_wall_clock(clocks: Clocks) -> None:
    clock = SystemClock()
    for _ in range(20):
        clocks.advance(SECOND)
        clocks.step_wall(SECOND // 10)  # 2 s in all, but never more than 1 s at once
        assert _clock.now_ms(clock) == ms(clocks.wall)


@pytest.mark.parametrize("step", [HOUR, -HOUR])
def test_reference_clock_ignores_the_wall_clock_between_syncs(clocks: Clocks, step: int) -> None:
    database = {"ms": ms(START) + 250}  # the database runs 250 ms ahead of this machine
    clock = ReferenceClock(lambda: database["ms"], refresh=30.0)
    assert _clock.to_ms(clock.now()) == ms(START) + 250
    clocks.step_wall(step)
    clocks.advance(10 * SECOND)
    database["ms"] += 10_000
    assert _clock.to_ms(clock.now()) == ms(START) + 250 + 10_000


def test_reference_clock_resyncs_and_keeps_the_last_sync_while_unreachable(
    clocks: Clocks,
) -> None:
    answers: list[int | Exception] = [ms(START), OSError("unreachable"), ms(START) + 60_000]
    asked: list[int] = []

    def reference() -> int:
        asked.append(1)
        answer = answers.pop(0)
        if isinstance(answer, Exception):
            raise answer
        return answer

    clock = ReferenceClock(reference, refresh=30.0)
    assert _clock.to_ms(clock.now()) == ms(START)
    clocks.advance(31 * SECOND)
    assert _clock.to_ms(clock.now()) == ms(START) + 31_000  # unreachable: last sync kept
    clocks.advance(31 * SECOND)
    assert _clock.to_ms(clock.now()) == ms(START) + 60_000  # the reference's own answer
    assert len(asked) == 3


class Reference:
    """A database whose clock is this machine's steady one, offset; each reading waits
    ``wait`` ns for a connection, then takes ``round_trip`` ns, reading its clock
    ``read_at`` of the way through (0: as the query arrives, 1: just before it answers)."""

    def __init__(self, clocks: Clocks, *, offset: int = 250 * 1_000_000) -> None:
        self.clocks = clocks
        self.offset = offset
        self.wait = 0
        self.round_trip = 0
        self.read_at = 0.5

    def truth_ms(self) -> int:
        return ms(START + self.offset + self.clocks.steady)

    def __call__(self) -> _clock.Reading:
        self.clocks.advance(self.wait)
        sent = _clock.steady_ns()
        self.clocks.advance(int(self.round_trip * self.read_at))
        answer = self.truth_ms()
        self.clocks.advance(self.round_trip - int(self.round_trip * self.read_at))
        return _clock.Reading(answer, sent, _clock.steady_ns())


def test_reference_clock_does_not_count_the_wait_for_a_connection(clocks: Clocks) -> None:
    """A sync that waited 8 s for a connection (the database coming back from an outage)
    and whose query took 1 ms: the clock reads the database's time, not 4 s ahead of it
    as when the wait counted in the round trip."""
    database = Reference(clocks)
    clock = ReferenceClock(database, refresh=30.0)
    database.wait, database.round_trip = 8 * SECOND, 1_000_000
    now = _clock.to_ms(clock.now())
    assert database.truth_ms() - 1 <= now <= database.truth_ms()


@pytest.mark.parametrize("read_at", [0.0, 0.5, 1.0])
@pytest.mark.parametrize("round_trip_ms", [0, 3, 200])
def test_reference_clock_is_never_ahead_of_its_reference(
    clocks: Clocks, read_at: float, round_trip_ms: int
) -> None:
    """Wherever in the round trip the reference read its clock, this clock is not ahead
    of it, and behind by at most the round trip (and a millisecond of rounding)."""
    database = Reference(clocks)
    database.round_trip, database.read_at = round_trip_ms * 1_000_000, read_at
    clock = ReferenceClock(database, refresh=30.0)
    for _ in range(3):
        now = _clock.to_ms(clock.now())
        assert database.truth_ms() - round_trip_ms - 1 <= now <= database.truth_ms()
        clocks.advance(31 * SECOND)


def test_reference_clock_keeps_its_sync_over_a_slow_reading_and_retries_soon(
    clocks: Clocks,
) -> None:
    """A reading whose round trip is longer than ``MAX_ROUND_TRIP_NS`` (here 3 s, the
    reference's answer from its start) replaces no sync: the clock keeps counting from
    the last one, and tries again a second later rather than at the next refresh."""
    database = Reference(clocks)
    clock = ReferenceClock(database, refresh=30.0)
    first = _clock.to_ms(clock.now())
    clocks.advance(31 * SECOND)
    database.round_trip, database.read_at = 3 * SECOND, 0.0
    database.offset -= 2 * SECOND  # were it used, the clock would go back 2 s
    assert _clock.to_ms(clock.now()) == first + 34_000  # the last sync, counted on
    database.round_trip = 1_000_000
    clocks.advance(SECOND)
    now = _clock.to_ms(clock.now())  # synced again, 1 s later: 2 s back, as the reference
    assert database.truth_ms() - 1 <= now <= database.truth_ms()


def test_reference_clock_takes_a_slow_first_reading_rather_than_none(clocks: Clocks) -> None:
    """With no sync yet, a slow reading is still better than this machine's clock: it is
    late by its round trip at most, never ahead."""
    clocks.step_wall(HOUR)  # this machine's clock is an hour ahead
    database = Reference(clocks)
    database.round_trip, database.read_at = 2 * SECOND, 0.0
    clock = ReferenceClock(database, refresh=30.0)
    now = _clock.to_ms(clock.now())
    assert database.truth_ms() - 2_000 <= now <= database.truth_ms()
