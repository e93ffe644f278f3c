"""The calendar words beyond Debian cron (DESIGN §2): ``L`` and ``LW`` in the day-of-month
field, ``5L`` and ``1#2`` / ``MON#2`` in the day-of-week field, as cronsim writes them;
what is refused around them; and steps larger than their field, accepted as Debian does.

The random-expression checks against cronsim are in test_cron_properties.py.
"""

from __future__ import annotations

import itertools
from datetime import UTC, datetime, timedelta
from zoneinfo import ZoneInfo

import pytest
from click.testing import CliRunner
from cronsim import CronSim

from tickwork import cron
from tickwork.cli.cron import command
from tickwork.errors import CronError

START = datetime(2024, 1, 1, tzinfo=UTC)  # a Monday


def upcoming(expr: str, count: int = 4, after: datetime = START, zone: str = "UTC") -> list[str]:
    """The next occurrences, as compact strings in ``zone``."""
    found = itertools.islice(cron.parse(expr, zone).iter(after), count)
    return [f"{when.astimezone(ZoneInfo(zone)):%Y-%m-%d %a %H:%M %Z}" for when in found]


# --- each word -------------------------------------------------------------------------

WORDS = [
    # (expression, the first occurrences after Mon 2024-01-01 00:00 UTC)
    ("0 0 L * *", ["2024-01-31 Wed", "2024-02-29 Thu", "2024-03-31 Sun", "2024-04-30 Tue"]),
    ("0 0 l * *", ["2024-01-31 Wed", "2024-02-29 Thu"]),
    # The last Monday-Friday: March 2024 ends on a Sunday, so Friday the 29th.
    ("0 0 LW * *", ["2024-01-31 Wed", "2024-02-29 Thu", "2024-03-29 Fri", "2024-04-30 Tue"]),
    ("0 0 * * 5L", ["2024-01-26 Fri", "2024-02-23 Fri", "2024-03-29 Fri", "2024-04-26 Fri"]),
    ("0 0 * * 0L", ["2024-01-28 Sun", "2024-02-25 Sun", "2024-03-31 Sun"]),
    ("0 0 * * 7L", ["2024-01-28 Sun", "2024-02-25 Sun", "2024-03-31 Sun"]),
    ("0 0 * * 1#2", ["2024-01-08 Mon", "2024-02-12 Mon", "2024-03-11 Mon", "2024-04-08 Mon"]),
    ("0 0 * * MON#2", ["2024-01-08 Mon", "2024-02-12 Mon"]),
    ("0 0 * * mon#2", ["2024-01-08 Mon", "2024-02-12 Mon"]),
    ("0 0 * * 7#1", ["2024-01-07 Sun", "2024-02-04 Sun", "2024-03-03 Sun"]),
    ("0 0 * * SUN#1", ["2024-01-07 Sun", "2024-02-04 Sun", "2024-03-03 Sun"]),
    # A fifth Friday: only months that have one.
    ("0 0 * JAN-MAR FRI#5", ["2024-03-29 Fri", "2025-01-31 Fri", "2026-01-30 Fri"]),
    # In lists, with other values and words.
    ("0 0 1,L * *", ["2024-01-31 Wed", "2024-02-01 Thu", "2024-02-29 Thu", "2024-03-01 Fri"]),
    ("0 0 LW,15 * *", ["2024-01-15 Mon", "2024-01-31 Wed", "2024-02-15 Thu", "2024-02-29 Thu"]),
    ("0 0 * * 1#1,5L", ["2024-01-26 Fri", "2024-02-05 Mon", "2024-02-23 Fri"]),
    # Debian's OR: both day fields restricted, either matching is enough...
    ("0 0 L * 5L", ["2024-01-26 Fri", "2024-01-31 Wed", "2024-02-23 Fri", "2024-02-29 Thu"]),
    ("0 0 13 * 5#2", ["2024-01-12 Fri", "2024-01-13 Sat", "2024-02-09 Fri", "2024-02-13 Tue"]),
    # ...and AND when one starts with "*": an odd day that is the second Monday.
    ("0 0 */2 * 1#2", ["2024-03-11 Mon", "2024-05-13 Mon", "2024-09-09 Mon"]),
]  # fmt: skip


@pytest.mark.parametrize(("expr", "days"), WORDS, ids=[e for e, _ in WORDS])
def test_calendar_word_runs_on_the_days_it_names(expr: str, days: list[str]) -> None:
    assert [text[:14] for text in upcoming(expr, len(days))] == days


@pytest.mark.parametrize(("expr", "days"), WORDS, ids=[e for e, _ in WORDS])
def test_calendar_word_runs_where_cronsim_does_forwards_and_backwards(
    expr: str, days: list[str]
) -> None:
    parsed = cron.parse(expr)
    theirs = list(itertools.islice(CronSim(expr, START), 24))
    assert list(itertools.islice(parsed.iter(START), 24)) == theirs
    assert [parsed.prev(when) for when in theirs] == theirs
    end = datetime(2030, 6, 15, 12, tzinfo=UTC)
    backwards = list(itertools.islice(CronSim(expr, end, reverse=True), 24))
    assert [parsed.prev(when + timedelta(seconds=1)) for when in backwards] == backwards
    assert parsed.prev(end) == backwards[0]


# --- cronsim's own documented examples -------------------------------------------------


@pytest.mark.parametrize(
    ("expr", "after", "first"),
    [
        # cronsim's README, "Cron Expression Feature Matrix"
        ("0 0 L * *", datetime(2020, 1, 1), datetime(2020, 1, 31)),
        ("0 0 LW * *", datetime(2020, 5, 1), datetime(2020, 5, 29)),  # May 31 is a Sunday
        ("0 0 * * 6L", datetime(2020, 1, 1), datetime(2020, 1, 25)),
        ("0 0 * * MON#1", datetime(2020, 1, 1), datetime(2020, 1, 6)),
        # cronsim's tests (TestIterator)
        ("1 1 L * *", datetime(2020, 1, 1), datetime(2020, 1, 31, 1, 1)),
        ("1 1 * * 1#2", datetime(2020, 1, 1), datetime(2020, 1, 13, 1, 1)),
    ],
)
def test_cronsim_documented_examples(expr: str, after: datetime, first: datetime) -> None:
    assert cron.parse(expr).next(after.replace(tzinfo=UTC)) == first.replace(tzinfo=UTC)


def test_cronsim_readme_fifth_monday_of_february_forwards_and_backwards() -> None:
    """cronsim's README: "0 0 * 2 MON#5" from 2020-01-01, five forwards and one back."""
    expr = cron.parse("0 0 * 2 MON#5")
    start = datetime(2020, 1, 1, tzinfo=UTC)
    found = list(itertools.islice(expr.iter(start), 5))
    assert [f"{when:%Y-%m-%d}" for when in found] == [
        "2044-02-29", "2072-02-29", "2112-02-29", "2140-02-29", "2168-02-29",
    ]  # fmt: skip
    assert expr.prev(start) == datetime(2016, 2, 29, tzinfo=UTC)


def test_cronsim_readme_expression_that_never_matches_is_refused_at_parse() -> None:
    """cronsim's README: "* * */20 * 1L" (the 1st or 21st, if also the last Monday) has no
    match, so cronsim's walk stops after 50 years; tickwork refuses it up front."""
    with pytest.raises(CronError) as caught:
        cron.parse("* * */20 * 1L")
    assert caught.value.field == "day-of-week"
    assert "can never occur" in caught.value.reason
    assert "'*/20'" in caught.value.reason and "'1L'" in caught.value.reason


# --- leap years --------------------------------------------------------------------------


def test_last_day_of_february_in_a_common_and_a_leap_year() -> None:
    expr = cron.parse("0 0 L 2 *")
    found = list(itertools.islice(expr.iter(datetime(2027, 1, 1, tzinfo=UTC)), 3))
    assert found == [
        datetime(2027, 2, 28, tzinfo=UTC),
        datetime(2028, 2, 29, tzinfo=UTC),
        datetime(2029, 2, 28, tzinfo=UTC),
    ]
    assert expr.prev(datetime(2028, 3, 1, tzinfo=UTC)) == datetime(2028, 2, 29, tzinfo=UTC)
    assert expr.prev(datetime(2028, 2, 28, 23, tzinfo=UTC)) == datetime(2027, 2, 28, tzinfo=UTC)


def test_last_weekday_and_last_tuesday_of_february_across_a_leap_year() -> None:
    after = datetime(2027, 1, 1, tzinfo=UTC)
    # 2027-02-28 is a Sunday: its last weekday is Friday the 26th; 2028-02-29 a Tuesday.
    assert upcoming("0 0 LW 2 *", 3, after) == [
        "2027-02-26 Fri 00:00 UTC", "2028-02-29 Tue 00:00 UTC", "2029-02-28 Wed 00:00 UTC",
    ]  # fmt: skip
    assert upcoming("0 0 * 2 2L", 3, after) == [
        "2027-02-23 Tue 00:00 UTC", "2028-02-29 Tue 00:00 UTC", "2029-02-27 Tue 00:00 UTC",
    ]  # fmt: skip


# --- DST: the words pick days; the time of day follows Debian cron as always ------------


def test_last_day_of_the_month_on_a_spring_forward_day_runs_after_the_gap() -> None:
    """Paris sprang forward on Sunday 31 March 2024 (02:00 CET -> 03:00 CEST): 02:00 does
    not exist that day, so the fixed-time job runs once, at 03:00 CEST (01:00Z)."""
    after = datetime(2024, 2, 1, tzinfo=UTC)
    assert upcoming("0 2 L * *", 3, after, "Europe/Paris") == [
        "2024-02-29 Thu 02:00 CET", "2024-03-31 Sun 03:00 CEST", "2024-04-30 Tue 02:00 CEST",
    ]  # fmt: skip
    expr = cron.parse("0 2 L * *", "Europe/Paris")
    assert expr.next(datetime(2024, 3, 30, tzinfo=UTC)) == datetime(2024, 3, 31, 1, tzinfo=UTC)
    assert expr.prev(datetime(2024, 4, 1, tzinfo=UTC)) == datetime(2024, 3, 31, 1, tzinfo=UTC)


def test_last_day_of_the_month_on_a_fall_back_day_runs_once() -> None:
    """Paris fell back on Sunday 31 October 2021 (03:00 CEST -> 02:00 CET): 02:00 happens
    twice; the fixed-time job runs at the first (00:00Z), the wildcard one at both."""
    after = datetime(2021, 9, 1, tzinfo=UTC)
    assert upcoming("0 2 L * *", 3, after, "Europe/Paris") == [
        "2021-09-30 Thu 02:00 CEST", "2021-10-31 Sun 02:00 CEST", "2021-11-30 Tue 02:00 CET",
    ]  # fmt: skip
    wildcard = cron.parse("*/30 2 L * *", "Europe/Paris")
    assert list(itertools.islice(wildcard.iter(datetime(2021, 10, 30, tzinfo=UTC)), 5)) == [
        datetime(2021, 10, 31, 0, 0, tzinfo=UTC),  # 02:00 CEST
        datetime(2021, 10, 31, 0, 30, tzinfo=UTC),
        datetime(2021, 10, 31, 1, 0, tzinfo=UTC),  # 02:00 CET
        datetime(2021, 10, 31, 1, 30, tzinfo=UTC),
        datetime(2021, 11, 30, 1, 0, tzinfo=UTC),
    ]


def test_wildcard_job_on_a_last_day_whose_hour_is_skipped_does_not_run_that_day() -> None:
    wildcard = cron.parse("*/30 2 L * *", "Europe/Paris")
    assert wildcard.next(datetime(2024, 3, 30, tzinfo=UTC)) == datetime(2024, 4, 30, tzinfo=UTC)


def test_last_sunday_of_march_is_europes_change_day_every_year() -> None:
    assert upcoming("0 2 * 3 0L", 3, datetime(2025, 1, 1, tzinfo=UTC), "Europe/Paris") == [
        "2025-03-30 Sun 03:00 CEST", "2026-03-29 Sun 03:00 CEST", "2027-03-28 Sun 03:00 CEST",
    ]  # fmt: skip


def test_nth_sunday_on_new_yorks_change_days() -> None:
    """The US springs forward on the second Sunday of March and falls back on the first
    Sunday of November."""
    after = datetime(2026, 1, 1, tzinfo=UTC)
    assert upcoming("30 2 * 3 0#2", 2, after, "America/New_York") == [
        "2026-03-08 Sun 03:00 EDT", "2027-03-14 Sun 03:00 EDT",
    ]  # fmt: skip
    assert upcoming("30 1 * 11 SUN#1", 2, after, "America/New_York") == [
        "2026-11-01 Sun 01:30 EDT", "2027-11-07 Sun 01:30 EDT",  # the first 01:30 only
    ]  # fmt: skip


def test_last_weekday_and_last_friday_on_cairos_midnight_change() -> None:
    """Egypt springs forward at midnight on the last Friday of April (00:00 -> 01:00); in
    2027 that is April 30, the last weekday of the month too."""
    assert upcoming("0 0 LW 4 *", 3, datetime(2026, 1, 1, tzinfo=UTC), "Africa/Cairo") == [
        "2026-04-30 Thu 00:00 EEST", "2027-04-30 Fri 01:00 EEST", "2028-04-28 Fri 01:00 EEST",
    ]  # fmt: skip
    assert upcoming("0 0 * 4 5L", 2, datetime(2024, 1, 1, tzinfo=UTC), "Africa/Cairo") == [
        "2024-04-26 Fri 01:00 EEST", "2025-04-25 Fri 01:00 EEST",
    ]  # fmt: skip


@pytest.mark.parametrize(
    ("expr", "zone", "after"),
    [
        ("0 2 L * *", "Europe/Paris", datetime(2024, 3, 1, tzinfo=UTC)),
        ("0 2 L * *", "Europe/Paris", datetime(2021, 10, 1, tzinfo=UTC)),
        ("30 2 * 3 0#2", "America/New_York", datetime(2026, 1, 1, tzinfo=UTC)),
        ("30 1 * 11 SUN#1", "America/New_York", datetime(2026, 1, 1, tzinfo=UTC)),
        ("0 0 LW 4 *", "Africa/Cairo", datetime(2027, 1, 1, tzinfo=UTC)),
    ],
)
def test_dst_change_days_agree_with_cronsim(expr: str, zone: str, after: datetime) -> None:
    theirs = [
        when.astimezone(UTC)
        for when in itertools.islice(CronSim(expr, after.astimezone(ZoneInfo(zone))), 6)
    ]
    assert list(itertools.islice(cron.parse(expr, zone).iter(after), 6)) == theirs


# --- steps larger than their field: accepted as Debian cron accepts them ------------------


def test_first_monday_idiom_runs_on_the_first_monday_of_each_month() -> None:
    """ "1 1 */100,1-7 * MON": "*/100" is the 1st only, and its leading "*" keeps
    Debian's OR rule off, so a day must be both in 1-7 and a Monday."""
    idiom = cron.parse("1 1 */100,1-7 * MON")
    assert upcoming("1 1 */100,1-7 * MON") == [
        "2024-01-01 Mon 01:01 UTC", "2024-02-05 Mon 01:01 UTC",
        "2024-03-04 Mon 01:01 UTC", "2024-04-01 Mon 01:01 UTC",
    ]  # fmt: skip
    first_monday = cron.parse("1 1 * * MON#1")
    assert list(itertools.islice(idiom.iter(START), 60)) == list(
        itertools.islice(first_monday.iter(START), 60)
    )
    assert idiom.explain() == "At 01:01 on every day of month from 1 through 7 if it's on Monday"


@pytest.mark.parametrize(
    ("expr", "same_as"),
    [
        ("*/90 * * * *", "0 * * * *"),
        ("0 */25 * * *", "0 0 * * *"),
        ("0 0 */100 * *", "0 0 1 * *"),
        ("0 0 1 */13 *", "0 0 1 1 *"),
        ("0 0 * * */100", "0 0 * * 0"),
        ("*/61 0 0 1 1 *", "0 0 0 1 1 *"),
        ("10/90 * * * *", "10 * * * *"),
    ],
)
def test_step_larger_than_its_field_runs_at_the_start_value_only(expr: str, same_as: str) -> None:
    assert list(itertools.islice(cron.parse(expr).iter(START), 30)) == list(
        itertools.islice(cron.parse(same_as).iter(START), 30)
    )
    assert cron.parse(expr).explain() == cron.parse(same_as).explain()


def test_larger_step_in_a_day_field_still_keeps_the_and_rule() -> None:
    # "*/100" in day-of-month with a weekday: the 1st, if it is a Friday (AND, not OR).
    assert [text[:14] for text in upcoming("0 0 */100 * FRI", 3)] == [
        "2024-03-01 Fri", "2024-11-01 Fri", "2025-08-01 Fri",
    ]  # fmt: skip


# --- refusals ------------------------------------------------------------------------------

REFUSED = [
    # (expression, field, a piece of the reason)
    ("0 0 ? * MON", "day-of-month", "'?' is Quartz syntax"),
    ("0 0 1 * ?", "day-of-week", "'?' is Quartz syntax"),
    ("0 0 15W * *", "day-of-month", "'W' (the weekday nearest a date) is not supported"),
    ("0 0 W * *", "day-of-month", "'W' (the weekday nearest a date) is not supported"),
    ("0 0 1W,L * *", "day-of-month", "'1W'"),
    ("0 0 L-3 * *", "day-of-month", "'L-3': 'L' and 'LW' cannot be part of a range"),
    ("0 0 1-L * *", "day-of-month", "'1-L': 'L' and 'LW' cannot be part of a range"),
    ("0 0 LW-2 * *", "day-of-month", "cannot be part of a range"),
    ("0 0 L/2 * *", "day-of-month", "take no step"),
    ("0 0 LL * *", "day-of-month", "cannot read 'LL'"),
    ("0 0 1L * *", "day-of-month", "cannot read '1L'"),
    ("0 0 * * 5L-6", "day-of-week", "'L' and '#' cannot be part of a range"),
    ("0 0 * * 1-5L", "day-of-week", "cannot be part of a range"),
    ("0 0 * * 1-2#2", "day-of-week", "cannot be part of a range"),
    ("0 0 * * 1#2/2", "day-of-week", "take no step"),
    ("0 0 * * 1#6", "day-of-week", "'#' takes 1-5"),
    ("0 0 * * 1#0", "day-of-week", "'#' takes 1-5"),
    ("0 0 * * MON#9", "day-of-week", "'#' takes 1-5"),
    ("0 0 * * 1#", "day-of-week", "'#' takes 1-5"),
    ("0 0 * * #2", "day-of-week", "missing the day before '#'"),
    ("0 0 * * 8#1", "day-of-week", "8 is out of range 0-7"),
    ("0 0 * * FOO#1", "day-of-week", "unknown name 'FOO'"),
    ("0 0 * * 8L", "day-of-week", "8 is out of range 0-7"),
    ("0 0 * * FRIL", "day-of-week", "write the day as a number before 'L' ('5L')"),
    ("0 0 * * L", "day-of-week", "cannot read 'L'"),
    ("0 0 1#2 * *", "day-of-month", "'#' belongs in the day-of-week field"),
    ("0 L * * *", "hour", "'L' and 'LW' belong in the day-of-month field"),
    ("0 0 * L *", "month", "belong in the day-of-month field"),
    # Calendar words that cannot meet the other day field under the AND rule.
    ("* * */20 * 1L", "day-of-week", "can never occur"),
    ("0 0 */100 * 1#2", "day-of-week", "can never occur"),
    ("0 0 LW * */100", "day-of-week", "can never occur"),  # the last weekday, a Sunday
    ("0 0 */10 * 1#4", "day-of-week", "can never occur"),  # the 22nd-28th: none of 1, 11, 21, 31
]


@pytest.mark.parametrize(("expr", "field", "reason"), REFUSED, ids=[r[0] for r in REFUSED])
def test_outside_debian_syntax_and_the_words_is_refused_saying_why(
    expr: str, field: str, reason: str
) -> None:
    with pytest.raises(CronError) as caught:
        cron.parse(expr)
    assert caught.value.field == field
    assert reason in caught.value.reason
    assert field in str(caught.value) and caught.value.reason in str(caught.value)


@pytest.mark.parametrize(
    "expr",
    # Rare but possible: a leap-year February 29 that is a Sunday; a 31st that is the last
    # Friday; the 29th-31st in a month with a fifth Monday.
    ["0 0 * 2 0#5", "0 0 31 * *,5L", "0 0 29-31 * *,1#5", "0 0 L 2 */7", "0 0 30,L 2 *"],
)
def test_calendar_words_that_meet_rarely_are_accepted(expr: str) -> None:
    assert cron.parse(expr).next(START) > START


# --- English -------------------------------------------------------------------------------

EXPLAINED = [
    ("0 9 L * *", "At 09:00 on the last day of the month"),
    ("0 9 LW * *", "At 09:00 on the last weekday of the month"),
    ("0 9 L 2 *", "At 09:00 on the last day of February"),
    ("0 9 * * 5L", "At 09:00 on the last Friday of the month"),
    ("0 9 * * 7L", "At 09:00 on the last Sunday of the month"),
    ("0 9 * * 1#2", "At 09:00 on the second Monday of the month"),
    ("0 9 * * MON#2", "At 09:00 on the second Monday of the month"),
    ("0 9 * * FRI#5", "At 09:00 on the fifth Friday of the month"),
    ("0 9 L * 5L", "At 09:00 on the last day of the month and on the last Friday of the month"),
    ("0 9 * JAN 1#1", "At 09:00 on the first Monday of the month in January"),
]


@pytest.mark.parametrize(("expr", "english"), EXPLAINED, ids=[e for e, _ in EXPLAINED])
def test_explain_says_the_words_in_english(expr: str, english: str) -> None:
    assert cron.parse(expr).explain() == english


# --- the CLI ---------------------------------------------------------------------------------


def test_cli_cron_says_the_last_day_and_lists_the_last_days() -> None:
    result = CliRunner(env={"COLUMNS": "200"}).invoke(
        command, ["0 9 L * *", "-n", "3", "--after", "2027-01-01T00:00Z"]
    )
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert lines[0] == "At 09:00 on the last day of the month"
    days = [word for line in lines for word in line.split() if word.startswith("2027-")]
    assert days == ["2027-01-31", "2027-02-28", "2027-03-31"]


def test_cli_cron_refuses_a_quartz_w_with_its_reason() -> None:
    result = CliRunner().invoke(command, ["0 9 15W * *"])
    assert result.exit_code == 2
    assert "'W' (the weekday nearest a date) is not supported" in result.stderr
