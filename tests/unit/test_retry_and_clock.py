"""Retry back-off arithmetic and the FakeClock."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from tickwork import ConfigError, Retry
from tickwork.testing import FakeClock


def test_backoff_grows_by_factor_and_is_capped() -> None:
    retry = Retry(max_attempts=10, backoff="1s", factor=2, max_backoff="5s")
    assert [retry.delay_ms(n) for n in range(1, 6)] == [1000, 2000, 4000, 5000, 5000]
    assert retry.delay_ms(10_000) == 5000


def test_retry_defaults_are_documented_ones() -> None:
    retry = Retry()
    assert (retry.max_attempts, retry.backoff, retry.factor, retry.max_backoff) == (
        3,
        timedelta(seconds=1),
        2.0,
        timedelta(minutes=5),
    )
    assert retry.allows_another(2) and not retry.allows_another(3)


def test_fake_clock_moves_only_when_told() -> None:
    start = datetime(2026, 1, 1, tzinfo=UTC)
    clock = FakeClock(start)
    moved: list[int] = []
    clock.add_listener(lambda: moved.append(1))
    assert clock.now() == start
    assert clock.advance("90s") == start + timedelta(seconds=90)
    assert clock.advance(timedelta(hours=1)) == start + timedelta(hours=1, seconds=90)
    assert clock.set(start) == start == clock.now()
    assert moved == [1, 1, 1]


def test_fake_clock_refuses_naive_datetimes_and_bad_durations() -> None:
    with pytest.raises(ValueError):
        FakeClock(datetime(2026, 1, 1))
    clock = FakeClock(datetime(2026, 1, 1, tzinfo=UTC))
    with pytest.raises(ConfigError):
        clock.advance("-1s")


def test_huge_factor_and_attempt_count_stay_at_the_cap() -> None:
    retry = Retry(max_attempts=10_000, backoff="1s", factor=1000, max_backoff="5m")
    assert retry.delay_ms(5_000) == 300_000
    with pytest.raises(ConfigError):
        Retry(factor=1e300)
