"""Cron syntax: every element Debian cron accepts, every rejection, and the CronExpr API."""

from __future__ import annotations

import itertools
from datetime import UTC, datetime, timedelta, timezone
from zoneinfo import ZoneInfo

import pytest
from cronsim import CronSim

from tickwork import cron
from tickwork.errors import ConfigError, CronError

START = datetime(2024, 1, 1, tzinfo=UTC)  # a Monday


def upcoming(expr: str, count: int = 6, after: datetime = START) -> list[str]:
    """The next occurrences in UTC, as compact strings."""
    found = itertools.islice(cron.parse(expr).iter(after), count)
    return [f"{when:%Y-%m-%d %a %H:%M:%S}" for when in found]


# --- every syntax element --------------------------------------------------------------

ELEMENTS = [
    # (expression, the first occurrences after Mon 2024-01-01 00:00:00 UTC)
    ("* * * * *", ["2024-01-01 Mon 00:01:00", "2024-01-01 Mon 00:02:00"]),
    ("5 * * * *", ["2024-01-01 Mon 00:05:00", "2024-01-01 Mon 01:05:00"]),
    ("1-3 * * * *", ["2024-01-01 Mon 00:01:00", "2024-01-01 Mon 00:02:00",
                     "2024-01-01 Mon 00:03:00", "2024-01-01 Mon 01:01:00"]),
    ("1,15 * * * *", ["2024-01-01 Mon 00:01:00", "2024-01-01 Mon 00:15:00",
                      "2024-01-01 Mon 01:01:00"]),
    ("*/15 * * * *", ["2024-01-01 Mon 00:15:00", "2024-01-01 Mon 00:30:00",
                      "2024-01-01 Mon 00:45:00", "2024-01-01 Mon 01:00:00"]),
    ("1-30/10 * * * *", ["2024-01-01 Mon 00:01:00", "2024-01-01 Mon 00:11:00",
                         "2024-01-01 Mon 00:21:00", "2024-01-01 Mon 01:01:00"]),
    ("5/20 * * * *", ["2024-01-01 Mon 00:05:00", "2024-01-01 Mon 00:25:00",
                      "2024-01-01 Mon 00:45:00", "2024-01-01 Mon 01:05:00"]),
    ("0 */6 * * *", ["2024-01-01 Mon 06:00:00", "2024-01-01 Mon 12:00:00",
                     "2024-01-01 Mon 18:00:00", "2024-01-02 Tue 00:00:00"]),
    ("0 9 * * 1-5", ["2024-01-01 Mon 09:00:00", "2024-01-02 Tue 09:00:00",
                     "2024-01-03 Wed 09:00:00", "2024-01-04 Thu 09:00:00",
                     "2024-01-05 Fri 09:00:00", "2024-01-08 Mon 09:00:00"]),
    ("0 9 * * MON-FRI", ["2024-01-01 Mon 09:00:00", "2024-01-02 Tue 09:00:00"]),
    ("0 9 * * mon-fri", ["2024-01-01 Mon 09:00:00", "2024-01-02 Tue 09:00:00"]),
    ("0 9 * * Sat,sun", ["2024-01-06 Sat 09:00:00", "2024-01-07 Sun 09:00:00",
                         "2024-01-13 Sat 09:00:00"]),
    ("0 0 * * 0", ["2024-01-07 Sun 00:00:00", "2024-01-14 Sun 00:00:00"]),
    ("0 0 * * 7", ["2024-01-07 Sun 00:00:00", "2024-01-14 Sun 00:00:00"]),
    ("0 0 * * 5-7", ["2024-01-05 Fri 00:00:00", "2024-01-06 Sat 00:00:00",
                     "2024-01-07 Sun 00:00:00", "2024-01-12 Fri 00:00:00"]),
    ("0 0 * * */2", ["2024-01-02 Tue 00:00:00", "2024-01-04 Thu 00:00:00",
                     "2024-01-06 Sat 00:00:00", "2024-01-07 Sun 00:00:00"]),
    ("0 0 1 JAN,jul *", ["2024-07-01 Mon 00:00:00", "2025-01-01 Wed 00:00:00"]),
    ("0 0 1 feb-APR *", ["2024-02-01 Thu 00:00:00", "2024-03-01 Fri 00:00:00",
                         "2024-04-01 Mon 00:00:00", "2025-02-01 Sat 00:00:00"]),
    ("0 0 1 */4 *", ["2024-05-01 Wed 00:00:00", "2024-09-01 Sun 00:00:00",
                     "2025-01-01 Wed 00:00:00"]),
    ("0 0 31 * *", ["2024-01-31 Wed 00:00:00", "2024-03-31 Sun 00:00:00",
                    "2024-05-31 Fri 00:00:00"]),
    ("0 0 29 2 *", ["2024-02-29 Thu 00:00:00", "2028-02-29 Tue 00:00:00"]),
    # Debian cron's OR: both day fields restricted, either one matching is enough.
    ("0 0 13 * 5", ["2024-01-05 Fri 00:00:00", "2024-01-12 Fri 00:00:00",
                    "2024-01-13 Sat 00:00:00", "2024-01-19 Fri 00:00:00"]),
    ("0 0 30 2 1", ["2024-02-05 Mon 00:00:00", "2024-02-12 Mon 00:00:00"]),
    # ...but AND as soon as one of them starts with "*", even with a step.
    ("0 0 */10 * 5", ["2024-03-01 Fri 00:00:00", "2024-05-31 Fri 00:00:00",
                      "2024-06-21 Fri 00:00:00", "2024-10-11 Fri 00:00:00"]),
    ("0 0 1-10 * */7", ["2024-01-07 Sun 00:00:00", "2024-02-04 Sun 00:00:00"]),
    ("0 0 13 * *,5", ["2024-01-13 Sat 00:00:00", "2024-02-13 Tue 00:00:00"]),
    # Six fields: a leading second field.
    ("*/20 * * * * *", ["2024-01-01 Mon 00:00:20", "2024-01-01 Mon 00:00:40",
                        "2024-01-01 Mon 00:01:00"]),
    ("30 0 9 * * MON", ["2024-01-01 Mon 09:00:30", "2024-01-08 Mon 09:00:30"]),
    ("  0   9\t* *  1  ", ["2024-01-01 Mon 09:00:00", "2024-01-08 Mon 09:00:00"]),
    ("@yearly", ["2025-01-01 Wed 00:00:00", "2026-01-01 Thu 00:00:00"]),
    ("@annually", ["2025-01-01 Wed 00:00:00"]),
    ("@monthly", ["2024-02-01 Thu 00:00:00", "2024-03-01 Fri 00:00:00"]),
    ("@weekly", ["2024-01-07 Sun 00:00:00", "2024-01-14 Sun 00:00:00"]),
    ("@daily", ["2024-01-02 Tue 00:00:00", "2024-01-03 Wed 00:00:00"]),
    ("@midnight", ["2024-01-02 Tue 00:00:00"]),
    ("@hourly", ["2024-01-01 Mon 01:00:00", "2024-01-01 Mon 02:00:00"]),
    ("@DAILY", ["2024-01-02 Tue 00:00:00"]),
]  # fmt: skip


@pytest.mark.parametrize(("expr", "expected"), ELEMENTS, ids=[e for e, _ in ELEMENTS])
def test_syntax_element_yields_the_occurrences_debian_cron_would(
    expr: str, expected: list[str]
) -> None:
    assert upcoming(expr, len(expected)) == expected


# --- every rejection -------------------------------------------------------------------

REJECTIONS = [
    # (expression, field, a piece of the reason)
    ("", "expression", "empty"),
    ("   ", "expression", "empty"),
    ("* * * *", "expression", "got 4"),
    ("* * * * * * *", "expression", "got 7"),
    ("*", "expression", "got 1"),
    ("@reboot", "expression", "@reboot"),
    ("@REBOOT", "expression", "@reboot"),
    ("@fortnightly", "expression", "unknown alias"),
    ("@", "expression", "unknown alias"),
    ("@daily 5", "expression", "takes no other fields"),
    ("60 * * * *", "minute", "out of range 0-59"),
    ("* 24 * * *", "hour", "out of range 0-23"),
    ("* * 0 * *", "day-of-month", "out of range 1-31"),
    ("* * 32 * *", "day-of-month", "out of range 1-31"),
    ("* * * 0 *", "month", "out of range 1-12"),
    ("* * * 13 *", "month", "out of range 1-12"),
    ("* * * * 8", "day-of-week", "out of range 0-7"),
    ("60 * * * * *", "second", "out of range 0-59"),
    ("99999999999999999999 * * * *", "minute", "out of range"),
    ("0 0 * JANUARY *", "month", "unknown name 'JANUARY'"),
    ("0 0 * * MONDAY", "day-of-week", "unknown name 'MONDAY'"),
    ("0 0 * * FOO", "day-of-week", "unknown name 'FOO'"),
    ("0 0 * MON *", "month", "unknown name 'MON'"),
    ("0 0 * * JAN", "day-of-week", "unknown name 'JAN'"),
    ("MON 0 * * *", "minute", "takes numbers"),
    ("0 0 ? * MON", "day-of-month", "'?'"),
    # The calendar words (L, LW, 5L, 1#2) are test_cron_words.py's.
    ("1,,2 * * * *", "minute", "empty list item"),
    ("1, * * * *", "minute", "empty list item"),
    (",1 * * * *", "minute", "empty list item"),
    ("*/0 * * * *", "minute", "step 0"),
    ("0 0 1-31/0 * *", "day-of-month", "step 0"),
    ("*/ * * * *", "minute", "step '' is not a number"),
    ("*/x * * * *", "minute", "step 'x' is not a number"),
    ("1/2/3 * * * *", "minute", "step '2/3' is not a number"),
    ("30-10 * * * *", "minute", "reversed range '30-10'"),
    ("0 0 * * FRI-MON", "day-of-week", "reversed range"),
    ("0 0 * DEC-JAN *", "month", "reversed range"),
    ("-5 * * * *", "minute", "missing value"),
    ("5- * * * *", "minute", "missing value"),
    ("1-5-7 * * * *", "minute", "cannot read '5-7'"),
    ("*-5 * * * *", "minute", "cannot read '*'"),
    ("** * * * *", "minute", "cannot read '**'"),
    ("1.5 * * * *", "minute", "cannot read '1.5'"),
    ("\u0661 * * * *", "minute", "cannot read"),  # an Arabic-Indic digit one
    ("\uff15 * * * *", "minute", "cannot read"),  # a full-width digit five
    ("0 0 * * \u017fun", "day-of-week", "cannot read"),  # long s upper-cases to "S"
    ("0 0 30 2 *", "day-of-month", "can never occur: no day 30 in February"),
    ("0 0 31 2 *", "day-of-month", "no day 31 in February"),
    ("0 0 31 4,6,9,11 *", "day-of-month", "no day 31 in April, June, September or November"),
    ("0 0 30,31 FEB */7", "day-of-month", "no day 30 in February"),
    ("0 0 0 30 2 *", "day-of-month", "can never occur"),
]


@pytest.mark.parametrize(("expr", "field", "reason"), REJECTIONS, ids=[r[0] for r in REJECTIONS])
def test_bad_expression_is_rejected_naming_field_and_reason(
    expr: str, field: str, reason: str
) -> None:
    with pytest.raises(CronError) as caught:
        cron.parse(expr)
    error = caught.value
    assert error.field == field
    assert reason in error.reason
    assert error.expr == expr
    assert field in str(error) and error.reason in str(error)


@pytest.mark.parametrize("value", [None, 5, 1.5, b"* * * * *", ["*"] * 5, {"a": 1}])
def test_non_string_expression_is_a_cron_error(value: object) -> None:
    with pytest.raises(CronError) as caught:
        cron.parse(value)  # type: ignore[arg-type]
    assert caught.value.field == "expression"
    assert "expected a str" in caught.value.reason


def test_cron_error_is_a_config_error_and_a_value_error() -> None:
    with pytest.raises(ConfigError):
        cron.parse("61 * * * *")
    with pytest.raises(ValueError):
        cron.parse("61 * * * *")


@pytest.mark.parametrize(
    "expr", ["0 0 30 2 1", "0 0 29 2 *", "0 0 31 1-2 *", "0 0 30 FEB MON", "0 0 29 2 */7"]
)
def test_expression_that_occurs_rarely_or_by_weekday_is_accepted(expr: str) -> None:
    assert cron.parse(expr).next(START) > START


def test_leap_day_on_a_sunday_is_found_decades_ahead() -> None:
    """Feb 29 on a Sunday comes every 28 to 40 years; cronsim searches 50 years ahead."""
    found = list(itertools.islice(cron.parse("0 0 29 2 */7").iter(START), 4))
    assert [when.year for when in found] == [2032, 2060, 2088, 2128]


# --- time zones ------------------------------------------------------------------------


@pytest.mark.parametrize(
    "zone",
    ["Nope/Zone", "", "utc ", "../etc/passwd", "/etc/localtime", "Europe/London/", "America",
     "localtime", "posixrules", "Europe/../UTC", "a\x00b", "Europe\\London"],
)  # fmt: skip
def test_unknown_or_path_like_zone_is_a_config_error(zone: str) -> None:
    with pytest.raises(ConfigError, match="zone"):
        cron.parse("0 9 * * *", zone)


@pytest.mark.parametrize("zone", [None, 0, ZoneInfo("Europe/London"), UTC])
def test_non_string_zone_is_a_config_error(zone: object) -> None:
    with pytest.raises(ConfigError, match="time zone"):
        cron.parse("0 9 * * *", zone)  # type: ignore[arg-type]


def test_bad_zone_is_not_a_cron_error() -> None:
    with pytest.raises(ConfigError) as caught:
        cron.parse("0 9 * * *", "Mars/Olympus_Mons")
    assert not isinstance(caught.value, CronError)


def test_load_zone_gives_utc_for_utc_and_zoneinfo_otherwise() -> None:
    assert cron.load_zone("UTC") is UTC
    assert cron.load_zone("Europe/London") == ZoneInfo("Europe/London")


def test_expression_is_read_in_its_zone_and_answered_in_utc() -> None:
    expr = cron.parse("0 9 * * *", "Asia/Tokyo")
    found = expr.next(START)
    assert found == datetime(2024, 1, 2, 0, 0, tzinfo=UTC)  # 09:00 in Tokyo
    assert found.tzinfo is UTC


# --- next / prev / iter ------------------------------------------------------------------


def test_next_is_strictly_after_an_occurrence() -> None:
    expr = cron.parse("0 9 * * *")
    nine = datetime(2024, 1, 1, 9, tzinfo=UTC)
    assert expr.next(nine) == nine + timedelta(days=1)
    assert expr.next(nine - timedelta(microseconds=1)) == nine


def test_prev_includes_an_occurrence_at_the_instant() -> None:
    expr = cron.parse("0 9 * * *")
    nine = datetime(2024, 1, 1, 9, tzinfo=UTC)
    assert expr.prev(nine) == nine
    assert expr.prev(nine + timedelta(microseconds=999_999)) == nine
    assert expr.prev(nine - timedelta(microseconds=1)) == nine - timedelta(days=1)


def test_prev_with_seconds_field_is_at_or_before() -> None:
    expr = cron.parse("*/10 * * * * *")
    at = datetime(2024, 1, 1, 9, 0, 10, 500_000, tzinfo=UTC)
    assert expr.prev(at) == datetime(2024, 1, 1, 9, 0, 10, tzinfo=UTC)
    assert expr.next(at) == datetime(2024, 1, 1, 9, 0, 20, tzinfo=UTC)


def test_iter_continues_where_next_would() -> None:
    expr = cron.parse("*/7 * * * *")
    walked = list(itertools.islice(expr.iter(START), 20))
    stepped = [expr.next(START)]
    for _ in range(19):
        stepped.append(expr.next(stepped[-1]))
    assert walked == stepped


def test_answers_are_the_same_for_any_zone_of_the_input() -> None:
    expr = cron.parse("0 9 * * *", "Europe/London")
    in_tokyo = START.astimezone(ZoneInfo("Asia/Tokyo"))
    in_offset = START.astimezone(timezone(timedelta(hours=-3)))
    assert expr.next(START) == expr.next(in_tokyo) == expr.next(in_offset)
    assert expr.prev(START) == expr.prev(in_tokyo) == expr.prev(in_offset)


@pytest.mark.parametrize("method", ["next", "prev", "iter"])
@pytest.mark.parametrize("value", [datetime(2024, 1, 1), "2024-01-01T00:00:00Z", 0, None])
def test_naive_or_non_datetime_instant_is_a_config_error(method: str, value: object) -> None:
    with pytest.raises(ConfigError):
        getattr(cron.parse("* * * * *"), method)(value)


def test_iteration_ends_at_the_end_of_the_calendar() -> None:
    late = datetime(9999, 12, 30, tzinfo=UTC)
    assert list(cron.parse("0 0 * * *").iter(late)) == [datetime(9999, 12, 31, tzinfo=UTC)]
    assert list(cron.parse("0 0 * * *", "Asia/Tokyo").iter(late)) == [
        datetime(9999, 12, 30, 15, tzinfo=UTC)
    ]
    with pytest.raises(CronError, match="no occurrence after"):
        cron.parse("0 0 1 1 *").next(late)


def test_prev_before_the_first_occurrence_is_a_cron_error() -> None:
    with pytest.raises(CronError, match="no occurrence before"):
        cron.parse("0 0 2 1 *").prev(datetime(1, 1, 1, 12, tzinfo=UTC))


# --- identity and English ------------------------------------------------------------------


def test_cron_expr_exposes_expression_and_zone_and_compares_by_them() -> None:
    first = cron.parse("0 9 * * 1-5", "Europe/London")
    assert (first.expr, first.timezone) == ("0 9 * * 1-5", "Europe/London")
    assert first == cron.CronExpr("0 9 * * 1-5", "Europe/London")
    assert hash(first) == hash(cron.CronExpr("0 9 * * 1-5", "Europe/London"))
    assert first != cron.parse("0 9 * * 1-5", "Europe/Paris")
    assert first != cron.parse("0 9 * * MON-FRI", "Europe/London")
    assert sorted([first, cron.parse("0 8 * * *")]) == [cron.parse("0 8 * * *"), first]
    assert repr(first) == "CronExpr(expr='0 9 * * 1-5', timezone='Europe/London')"


def test_cronsim_keeps_its_start_in_the_three_attributes_tickwork_sets() -> None:
    """tickwork copies a parsed CronSim rather than parsing again
    (``_cron_walk.start_walk``), setting only these attributes; if cronsim ever keeps more
    about its start, this fails."""
    first = CronSim("*/5 9-17 * * MON-FRI", datetime(2024, 1, 1, tzinfo=UTC))
    other = CronSim("*/5 9-17 * * MON-FRI", datetime(2030, 6, 1, 3, 4, 5, 6, tzinfo=UTC), True)
    assert set(first.__dict__) == set(other.__dict__)
    differ = {name for name, value in first.__dict__.items() if other.__dict__[name] != value}
    assert differ == {"dt", "tick_direction", "skip_initial_tick"}


def test_parse_results_are_cached() -> None:
    assert cron.parse("0 9 * * 1-5", "Europe/London") is cron.parse("0 9 * * 1-5", "Europe/London")


def test_building_cron_expr_directly_validates_too() -> None:
    with pytest.raises(CronError):
        cron.CronExpr("0 0 30 2 *")


EXPLAINED = [
    ("0 9 * * 1-5", "At 09:00 on Monday through Friday"),
    ("0 9 * * MON-FRI", "At 09:00 on Monday through Friday"),
    ("*/15 * * * *", "Every 15th minute of every hour"),
    ("0 0 13 * 5", "At 00:00 on the 13th day of month and on Friday"),
    ("@weekly", "At 00:00 on Sunday"),
    ("@daily", "At 00:00 every day"),
    ("@hourly", "At the start of every hour"),
    ("30 0 9 * * *", "At 09:00:30 every day"),
    ("0 0 29 2 *", "At 00:00 on February 29"),
    # Under Debian's OR rule a day field that covers every day makes the other moot.
    ("0 0 13 * 0-7", "At 00:00 every day"),
    ("0 0 1-31 * MON", "At 00:00 every day"),
]


@pytest.mark.parametrize(("expr", "english"), EXPLAINED, ids=[e for e, _ in EXPLAINED])
def test_explain_says_it_in_english(expr: str, english: str) -> None:
    assert cron.parse(expr).explain() == english
