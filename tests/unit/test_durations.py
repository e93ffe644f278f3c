"""Durations: every accepted form and every rejection, in tables."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tickwork import parse_duration
from tickwork._values.clock import LAST_MS, capped, from_ms
from tickwork._values.clock import to_ms as to_instant_ms
from tickwork._values.durations import describe_duration, format_duration, instant_after, to_ms
from tickwork._values.event_flow import Flow, buffered
from tickwork.errors import ConfigError

ACCEPTED: list[tuple[Any, timedelta]] = [
    (timedelta(minutes=5), timedelta(minutes=5)),
    (timedelta(milliseconds=1), timedelta(milliseconds=1)),
    (timedelta(days=999_999_999), timedelta(days=999_999_999)),
    ("500ms", timedelta(milliseconds=500)),
    ("30s", timedelta(seconds=30)),
    ("15m", timedelta(minutes=15)),
    ("24h", timedelta(hours=24)),
    ("7d", timedelta(days=7)),
    ("1h30m", timedelta(hours=1, minutes=30)),
    ("1d2h3m4s5ms", timedelta(days=1, hours=2, minutes=3, seconds=4, milliseconds=5)),
    (" 1h 30m ", timedelta(hours=1, minutes=30)),
    ("1.5s", timedelta(milliseconds=1500)),
    ("0.5h", timedelta(minutes=30)),
    ("2.002m", timedelta(milliseconds=120_120)),
    ("0.07h", timedelta(milliseconds=252_000)),
    ("0.001s", timedelta(milliseconds=1)),
    ("0s1ms", timedelta(milliseconds=1)),
    ("90m", timedelta(minutes=90)),
    ({"milliseconds": 250}, timedelta(milliseconds=250)),
    ({"seconds": 30}, timedelta(seconds=30)),
    ({"minutes": 5}, timedelta(minutes=5)),
    ({"hours": 1, "minutes": 30}, timedelta(hours=1, minutes=30)),
    ({"days": 2}, timedelta(days=2)),
    ({"hours": 0.1}, timedelta(minutes=6)),
    ({"seconds": 1.5}, timedelta(milliseconds=1500)),
    ({"hours": 0, "minutes": 1}, timedelta(minutes=1)),
]


@pytest.mark.parametrize(("value", "expected"), ACCEPTED, ids=repr)
def test_duration_form_is_read_exactly(value: Any, expected: timedelta) -> None:
    assert parse_duration(value) == expected
    assert to_ms(value) == expected // timedelta(milliseconds=1)


BARE = "a bare number could be seconds or milliseconds"
REJECTED: list[tuple[Any, str]] = [
    (0, BARE),
    (-1, BARE),
    (True, "not a bool"),
    (False, "not a bool"),
    (1.5, BARE),
    (None, "expected a timedelta"),
    ([1], "expected a timedelta"),
    (b"30s", "expected a timedelta"),
    (10**20, BARE),
    (timedelta(0), "longer than zero"),
    (timedelta(seconds=-1), "longer than zero"),
    (timedelta(microseconds=1500), "finer than a millisecond"),
    ("", "empty"),
    ("   ", "empty"),
    ("0s", "longer than zero"),
    ("0ms", "longer than zero"),
    ("-5s", "expected numbers with units"),
    ("5", BARE),
    (" 2.5 ", BARE),
    ("s", "expected numbers with units"),
    ("5x", "expected numbers with units"),
    ("5 seconds", "expected numbers with units"),
    ("5S", "expected numbers with units"),
    ("1h30", "expected numbers with units"),
    ("1e3s", "expected numbers with units"),
    (".5s", "expected numbers with units"),
    ("5.s", "expected numbers with units"),
    ("1,5s", "expected numbers with units"),
    ("\u0661s", "expected numbers with units"),  # Arabic-Indic digit one
    ("\uff15m", "expected numbers with units"),  # full-width digit five
    ("30m1h", "from largest to smallest"),
    ("1m1m", "from largest to smallest"),
    ("0.0001s", "finer than a millisecond"),
    ("1.0005s", "finer than a millisecond"),
    ("9" * 31 + "s", "expected numbers with units"),
    ("9" * 5000 + "s", "expected numbers with units"),
    ("99999999999999d", "longer than a timedelta can hold"),
    ({}, "empty"),
    ({"seconds": 0}, "longer than zero"),
    ({"weeks": 1}, "unknown key 'weeks'"),
    ({"second": 1}, "unknown key 'second'"),
    ({1: 1}, "unknown key 1"),
    ({"seconds": "5"}, "must be a number"),
    ({"seconds": True}, "must be a number"),
    ({"seconds": None}, "must be a number"),
    ({"seconds": -1}, "must not be negative"),
    ({"hours": 1, "minutes": -30}, "must not be negative"),
    ({"seconds": float("inf")}, "finite"),
    ({"seconds": float("nan")}, "finite"),
    ({"seconds": 0.0001}, "finer than a millisecond"),
    ({"days": 10**12}, "longer than a timedelta can hold"),
]


@pytest.mark.parametrize(("value", "reason"), REJECTED, ids=repr)
def test_bad_duration_is_a_config_error_saying_why(value: Any, reason: str) -> None:
    with pytest.raises(ConfigError, match="Bad duration") as caught:
        parse_duration(value)
    assert reason in str(caught.value)


@pytest.mark.parametrize(
    ("value", "hint"),
    [
        (5, "write '5s' or '5ms'"),
        (10, "write '10s' or '10ms'"),
        (1.5, "write '1.5s' or '1.5ms'"),
        (5.0, "write '5.0s' or '5.0ms'"),
        ("5", "write '5s' or '5ms'"),
    ],
    ids=repr,
)
def test_bare_number_is_refused_with_both_readings(value: Any, hint: str) -> None:
    """A number without its unit (``every=5``, ``ctx.sleep("nap", 10)``, "5" from a flag)
    is refused, and the message shows the two ways it could be read."""
    for read in (parse_duration, to_ms):
        with pytest.raises(ConfigError) as caught:
            read(value)
        assert "could be seconds or milliseconds" in str(caught.value)
        assert hint in str(caught.value)


def test_a_refusal_names_the_option_when_told() -> None:
    """``to_ms(value, name)`` starts its refusal with the option's name."""
    with pytest.raises(ConfigError, match=r"^lease: Bad duration 30: .*'30s' or '30ms'"):
        to_ms(30, "lease")


@pytest.mark.parametrize(
    ("ms", "exact", "rounded"),
    [
        (0, "0 ms", "0 ms"),
        (850, "850 ms", "850 ms"),
        (1000, "1 s", "1 s"),
        (1500, "1.5 s", "1.5 s"),
        (2400, "2.4 s", "2.4 s"),
        (2449, "2.449 s", "2.4 s"),
        (15_000, "15 s", "15 s"),
        (60_000, "1 min", "1 min"),
        (90_500, "1 min 30.5 s", "1 min 30 s"),
        (245_000, "4 min 5 s", "4 min 5 s"),
        (5_400_000, "1 h 30 min", "1 h 30 min"),
        (86_400_000, "1 d", "1 d"),
        (93_784_005, "1 d 2 h 3 min 4.005 s", "1 d 2 h"),
        (-5000, "-5 s", "0 ms"),
    ],
)
def test_describe_duration_writes_one_form_for_people(ms: int, exact: str, rounded: str) -> None:
    """Durations for people: units ms, s, min, h, d with a space, exact for a setting
    (every, timeout) and to two units for a timing (how long a run took)."""
    value = timedelta(milliseconds=ms)
    assert describe_duration(value) == exact
    assert describe_duration(value, rounded=True) == rounded


@pytest.mark.parametrize(
    ("value", "text"),
    [
        (timedelta(hours=1, minutes=30), "1h30m"),
        (timedelta(milliseconds=500), "500ms"),
        (timedelta(days=7), "7d"),
        (timedelta(0), "0ms"),
    ],
)
def test_format_duration_writes_the_compact_form(value: timedelta, text: str) -> None:
    assert format_duration(value) == text


@settings(deadline=None, max_examples=200)
@given(st.integers(1, 10**15))
def test_formatted_duration_reads_back_to_the_same_length(ms: int) -> None:
    value = timedelta(milliseconds=ms)
    assert parse_duration(format_duration(value)) == value


@settings(deadline=None, max_examples=300)
@given(
    st.one_of(
        st.text(max_size=20),
        st.text(alphabet="0123456789.msdh -", max_size=12),
        st.dictionaries(st.text(max_size=12), st.floats() | st.integers(), max_size=3),
        st.floats(),
        st.integers(),
    )
)
def test_random_input_raises_nothing_but_config_error(value: Any) -> None:
    try:
        result = parse_duration(value)
    except ConfigError:
        return
    assert result > timedelta(0)


@settings(deadline=None, max_examples=300)
@given(
    now_ms=st.integers(min_value=0, max_value=LAST_MS),
    ms=st.integers(min_value=1, max_value=timedelta.max // timedelta(milliseconds=1)),
)
def test_every_instant_a_duration_makes_reads_back_or_is_refused(now_ms: int, ms: int) -> None:
    """``instant_after`` either refuses with ConfigError or gives an instant a datetime
    holds; ``capped`` always does."""
    duration = timedelta(milliseconds=ms)
    try:
        at = instant_after(now_ms, duration, "delay")
    except ConfigError as exc:
        assert "the last instant tickwork can store" in str(exc)
        assert now_ms + ms > LAST_MS
    else:
        assert to_instant_ms(from_ms(at)) == at == now_ms + ms
    assert to_instant_ms(from_ms(capped(now_ms + ms))) == min(now_ms + ms, LAST_MS)


def test_an_instant_out_of_range_reads_as_the_end_of_datetime() -> None:
    assert from_ms(LAST_MS + 10**12) == datetime.max.replace(tzinfo=UTC)
    assert from_ms(-(10**15)) == datetime.min.replace(tzinfo=UTC)


@pytest.mark.parametrize(
    "flow",
    [Flow(debounce_ms=10**15), Flow(batch=10, batch_window_ms=10**15)],
    ids=["debounce", "batch"],
)
def test_a_debounce_or_batch_window_ending_past_year_9999_is_due_at_the_last_instant(
    flow: Flow,
) -> None:
    buffer, _ = buffered(flow, None, "e1", {}, now_ms=LAST_MS - 1000)
    assert buffer.due_ms == LAST_MS
