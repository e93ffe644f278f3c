"""A stepped wall clock (``date``, an NTP step, a VM resumed with a stale clock) moves
neither tickwork's system clock (for ten minutes) nor its reference clock (ever).

The machine's clocks are simulated: ``Clocks`` stands in for the wall clock that
``tickwork._clock`` reads (``time.time_ns``) and for its steady clock (``_steady_ns``).
"""

from __future__ import annotations

import logging
from types import SimpleNamespace

import pytest

from tickwork import _clock
from tickwork._clock import STEP_GRACE_NS, ReferenceClock, SystemClock

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
