"""Cron across DST changes, as Debian cron runs it (and cronsim documents it).

A fixed-time job (minute and hour fields not starting with "*") runs once on the day its
time is skipped, at the first instant after the gap, and once on the day its time repeats,
at the first of the two. A job whose minute or hour field starts with "*" follows the
clock: it does not run at wall times that do not exist and runs twice at repeated ones.

Times are written with their UTC offset, so "01:30-04:00" and "01:30-05:00" are the two
01:30s of a New York fall-back night.
"""

from __future__ import annotations

import itertools
from datetime import UTC, datetime
from zoneinfo import ZoneInfo

import pytest

from tickwork import cron

NY = "America/New_York"  # 2024: 02:00 -> 03:00 on Mar 10, 02:00 -> 01:00 on Nov 3
LONDON = "Europe/London"  # 2024: 01:00 -> 02:00 on Mar 31, 02:00 -> 01:00 on Oct 27
LORD_HOWE = "Australia/Lord_Howe"  # 2024: 02:00 -> 01:30 on Apr 7, 02:00 -> 02:30 on Oct 6
SAO_PAULO = "America/Sao_Paulo"  # 2018: 00:00 -> 23:00 on Feb 18, 00:00 -> 01:00 on Nov 4
CHATHAM = "Pacific/Chatham"  # 2024: 03:45 -> 02:45 on Apr 7, 02:45 -> 03:45 on Sep 29


def after(expr: str, zone: str, start: str, count: int) -> list[str]:
    """The next ``count`` occurrences after ``start``, as local times with offsets."""
    found = list(
        itertools.islice(cron.parse(expr, zone).iter(datetime.fromisoformat(start)), count)
    )
    assert all(when.tzinfo is UTC for when in found)
    return [when.astimezone(ZoneInfo(zone)).isoformat() for when in found]


def before(expr: str, zone: str, at: str) -> str:
    """The latest occurrence at or before ``at``, as a local time with offset."""
    found = cron.parse(expr, zone).prev(datetime.fromisoformat(at))
    assert found.tzinfo is UTC
    return found.astimezone(ZoneInfo(zone)).isoformat()


# --- America/New_York --------------------------------------------------------------------


def test_fixed_time_job_runs_once_on_spring_forward_day_at_the_end_of_the_gap() -> None:
    assert after("30 2 * * *", NY, "2024-03-09T12:00:00-05:00", 3) == [
        "2024-03-10T03:00:00-04:00",
        "2024-03-11T02:30:00-04:00",
        "2024-03-12T02:30:00-04:00",
    ]


def test_several_skipped_fixed_times_run_once_together() -> None:
    """02:15, 02:45 and 03:00 all fall to 03:00 on the spring-forward day: one run."""
    assert after("15,45 2,3 * * *", NY, "2024-03-10T00:00:00-05:00", 4) == [
        "2024-03-10T03:00:00-04:00",
        "2024-03-10T03:15:00-04:00",
        "2024-03-10T03:45:00-04:00",
        "2024-03-11T02:15:00-04:00",
    ]


def test_fixed_time_job_runs_once_on_fall_back_day_at_the_first_pass() -> None:
    assert after("30 1 * * *", NY, "2024-11-02T12:00:00-04:00", 3) == [
        "2024-11-03T01:30:00-04:00",
        "2024-11-04T01:30:00-05:00",
        "2024-11-05T01:30:00-05:00",
    ]


def test_fixed_time_job_seen_from_the_second_pass_is_already_done() -> None:
    """cronsim, given 01:15 of the second pass, answers the first pass's 01:30 (earlier)."""
    assert after("30 1 * * *", NY, "2024-11-03T01:15:00-05:00", 1) == ["2024-11-04T01:30:00-05:00"]


def test_wildcard_job_skips_wall_times_that_do_not_exist() -> None:
    assert after("*/30 * * * *", NY, "2024-03-10T00:50:00-05:00", 4) == [
        "2024-03-10T01:00:00-05:00",
        "2024-03-10T01:30:00-05:00",
        "2024-03-10T03:00:00-04:00",
        "2024-03-10T03:30:00-04:00",
    ]


def test_wildcard_job_in_a_skipped_hour_does_not_run_that_day() -> None:
    assert after("*/20 2 * * *", NY, "2024-03-09T02:30:00-05:00", 3) == [
        "2024-03-09T02:40:00-05:00",
        "2024-03-11T02:00:00-04:00",
        "2024-03-11T02:20:00-04:00",
    ]


def test_wildcard_job_runs_at_both_passes_of_a_repeated_hour() -> None:
    assert after("*/30 * * * *", NY, "2024-11-03T00:50:00-04:00", 6) == [
        "2024-11-03T01:00:00-04:00",
        "2024-11-03T01:30:00-04:00",
        "2024-11-03T01:00:00-05:00",
        "2024-11-03T01:30:00-05:00",
        "2024-11-03T02:00:00-05:00",
        "2024-11-03T02:30:00-05:00",
    ]


def test_wildcard_job_started_inside_a_repeated_hour_continues_on_the_right_pass() -> None:
    assert after("*/30 * * * *", NY, "2024-11-03T01:45:00-04:00", 3) == [
        "2024-11-03T01:00:00-05:00",
        "2024-11-03T01:30:00-05:00",
        "2024-11-03T02:00:00-05:00",
    ]
    assert after("*/30 * * * *", NY, "2024-11-03T01:10:00-05:00", 2) == [
        "2024-11-03T01:30:00-05:00",
        "2024-11-03T02:00:00-05:00",
    ]


def test_hourly_wildcard_job_follows_the_clock_through_fall_back() -> None:
    assert after("0 * * * *", NY, "2024-11-02T23:30:00-04:00", 4) == [
        "2024-11-03T00:00:00-04:00",
        "2024-11-03T01:00:00-04:00",
        "2024-11-03T01:00:00-05:00",
        "2024-11-03T02:00:00-05:00",
    ]


def test_weekday_job_keeps_local_time_so_its_utc_time_moves() -> None:
    found = list(
        itertools.islice(cron.parse("0 9 * * 1-5", NY).iter(datetime(2024, 3, 7, tzinfo=UTC)), 3)
    )
    assert [f"{when:%m-%d %H:%M}" for when in found] == [
        "03-07 14:00",
        "03-08 14:00",
        "03-11 13:00",
    ]


@pytest.mark.parametrize(
    ("expr", "at", "latest"),
    [
        # fixed time, spring forward: the run at the end of the gap
        ("30 2 * * *", "2024-03-10T03:00:00-04:00", "2024-03-10T03:00:00-04:00"),
        ("30 2 * * *", "2024-03-10T03:10:00-04:00", "2024-03-10T03:00:00-04:00"),
        ("30 2 * * *", "2024-03-10T01:59:59-05:00", "2024-03-09T02:30:00-05:00"),
        # fixed time, fall back: the first pass, from either pass
        ("30 1 * * *", "2024-11-03T01:45:00-04:00", "2024-11-03T01:30:00-04:00"),
        ("30 1 * * *", "2024-11-03T01:15:00-05:00", "2024-11-03T01:30:00-04:00"),
        ("30 1 * * *", "2024-11-03T01:45:00-05:00", "2024-11-03T01:30:00-04:00"),
        ("30 1 * * *", "2024-11-03T01:20:00-04:00", "2024-11-02T01:30:00-04:00"),
        # wildcard, spring forward: nothing in the gap
        ("0 * * * *", "2024-03-10T03:00:00-04:00", "2024-03-10T03:00:00-04:00"),
        ("0 * * * *", "2024-03-10T02:59:59-04:00", "2024-03-10T01:00:00-05:00"),
        # wildcard, fall back: each pass
        ("*/30 * * * *", "2024-11-03T01:45:00-04:00", "2024-11-03T01:30:00-04:00"),
        ("*/30 * * * *", "2024-11-03T01:15:00-05:00", "2024-11-03T01:00:00-05:00"),
        ("*/30 * * * *", "2024-11-03T01:00:00-05:00", "2024-11-03T01:00:00-05:00"),
        ("*/30 * * * *", "2024-11-03T00:59:00-05:00", "2024-11-03T01:30:00-04:00"),
        ("*/30 * * * *", "2024-11-03T02:10:00-05:00", "2024-11-03T02:00:00-05:00"),
    ],
)
def test_prev_in_new_york_across_both_changes(expr: str, at: str, latest: str) -> None:
    assert before(expr, NY, at) == latest


# --- Europe/London -----------------------------------------------------------------------


def test_london_fixed_time_job_across_both_changes() -> None:
    assert after("30 1 * * *", LONDON, "2024-03-30T12:00:00+00:00", 2) == [
        "2024-03-31T02:00:00+01:00",
        "2024-04-01T01:30:00+01:00",
    ]
    assert after("30 1 * * *", LONDON, "2024-10-26T12:00:00+01:00", 2) == [
        "2024-10-27T01:30:00+01:00",
        "2024-10-28T01:30:00+00:00",
    ]


def test_london_wildcard_job_across_both_changes() -> None:
    assert after("*/30 1 * * *", LONDON, "2024-03-30T12:00:00+00:00", 2) == [
        "2024-04-01T01:00:00+01:00",
        "2024-04-01T01:30:00+01:00",
    ]
    assert after("*/30 1 * * *", LONDON, "2024-10-26T12:00:00+01:00", 5) == [
        "2024-10-27T01:00:00+01:00",
        "2024-10-27T01:30:00+01:00",
        "2024-10-27T01:00:00+00:00",
        "2024-10-27T01:30:00+00:00",
        "2024-10-28T01:00:00+00:00",
    ]


def test_london_prev_across_both_changes() -> None:
    assert before("30 1 * * *", LONDON, "2024-03-31T02:00:00+01:00") == "2024-03-31T02:00:00+01:00"
    assert before("30 1 * * *", LONDON, "2024-10-27T01:10:00+00:00") == "2024-10-27T01:30:00+01:00"
    assert before("*/30 1 * * *", LONDON, "2024-10-27T01:10:00+00:00") == (
        "2024-10-27T01:00:00+00:00"
    )
    assert before("*/30 1 * * *", LONDON, "2024-04-01T00:59:00+01:00") == (
        "2024-03-30T01:30:00+00:00"
    )


# --- Australia/Lord_Howe: a 30-minute change ---------------------------------------------


def test_lord_howe_fixed_time_in_the_half_hour_gap_runs_at_its_end() -> None:
    assert after("15 2 * * *", LORD_HOWE, "2024-10-05T12:00:00+10:30", 2) == [
        "2024-10-06T02:30:00+11:00",
        "2024-10-07T02:15:00+11:00",
    ]
    assert after("45 2 * * *", LORD_HOWE, "2024-10-05T12:00:00+10:30", 1) == [
        "2024-10-06T02:45:00+11:00"
    ]


def test_lord_howe_fixed_time_in_the_repeated_half_hour_runs_once() -> None:
    assert after("45 1 * * *", LORD_HOWE, "2024-04-06T12:00:00+11:00", 2) == [
        "2024-04-07T01:45:00+11:00",
        "2024-04-08T01:45:00+10:30",
    ]


def test_lord_howe_wildcard_job_repeats_only_the_repeated_half_hour() -> None:
    assert after("*/20 1 * * *", LORD_HOWE, "2024-04-07T00:00:00+11:00", 5) == [
        "2024-04-07T01:00:00+11:00",
        "2024-04-07T01:20:00+11:00",
        "2024-04-07T01:40:00+11:00",
        "2024-04-07T01:40:00+10:30",
        "2024-04-08T01:00:00+10:30",
    ]
    assert after("*/10 2 * * *", LORD_HOWE, "2024-10-05T12:00:00+10:30", 4) == [
        "2024-10-06T02:30:00+11:00",
        "2024-10-06T02:40:00+11:00",
        "2024-10-06T02:50:00+11:00",
        "2024-10-07T02:00:00+11:00",
    ]


def test_lord_howe_wildcard_job_later_on_the_change_day_runs_on_the_hour() -> None:
    """cronsim 2.8 steps hours through UTC and lands on :30 here, skipping 14:00-14:29;
    the wall clock shows 14:00 that afternoon, so Debian cron runs it."""
    assert after("*/15 14 * * *", LORD_HOWE, "2024-04-07T12:00:00+10:30", 4) == [
        "2024-04-07T14:00:00+10:30",
        "2024-04-07T14:15:00+10:30",
        "2024-04-07T14:30:00+10:30",
        "2024-04-07T14:45:00+10:30",
    ]


def test_lord_howe_prev_across_both_changes() -> None:
    assert before("45 1 * * *", LORD_HOWE, "2024-04-07T01:35:00+10:30") == (
        "2024-04-07T01:45:00+11:00"
    )
    assert before("*/20 1 * * *", LORD_HOWE, "2024-04-07T01:35:00+10:30") == (
        "2024-04-07T01:40:00+11:00"
    )
    assert before("15 2 * * *", LORD_HOWE, "2024-10-06T02:40:00+11:00") == (
        "2024-10-06T02:30:00+11:00"
    )
    assert before("*/10 2 * * *", LORD_HOWE, "2024-10-06T02:35:00+11:00") == (
        "2024-10-06T02:30:00+11:00"
    )


# --- America/Sao_Paulo, 2018: changes at midnight -----------------------------------------


def test_sao_paulo_midnight_job_runs_at_one_when_midnight_is_skipped() -> None:
    assert after("0 0 * * *", SAO_PAULO, "2018-11-02T12:00:00-03:00", 3) == [
        "2018-11-03T00:00:00-03:00",
        "2018-11-04T01:00:00-02:00",
        "2018-11-05T00:00:00-02:00",
    ]


def test_sao_paulo_wildcard_job_skips_the_missing_hour_after_midnight() -> None:
    assert after("*/30 * * * *", SAO_PAULO, "2018-11-03T23:10:00-03:00", 3) == [
        "2018-11-03T23:30:00-03:00",
        "2018-11-04T01:00:00-02:00",
        "2018-11-04T01:30:00-02:00",
    ]


def test_sao_paulo_wildcard_job_in_the_skipped_midnight_hour_does_not_run_that_day() -> None:
    """cronsim 2.8 runs it at 01:00 on 2015-10-18: it matches hour 0 against the skipped
    midnight. The clock never shows 00:xx that Sunday, so Debian cron does not run it."""
    assert after("* 0 * * 0", SAO_PAULO, "2015-10-17T23:59:00-03:00", 2) == [
        "2015-10-25T00:00:00-02:00",
        "2015-10-25T00:01:00-02:00",
    ]


def test_sao_paulo_repeated_hour_before_midnight_belongs_to_the_earlier_date() -> None:
    assert after("30 23 * * *", SAO_PAULO, "2018-02-17T12:00:00-02:00", 2) == [
        "2018-02-17T23:30:00-02:00",
        "2018-02-18T23:30:00-03:00",
    ]
    assert after("0 * 17 2 *", SAO_PAULO, "2018-02-17T21:30:00-02:00", 4) == [
        "2018-02-17T22:00:00-02:00",
        "2018-02-17T23:00:00-02:00",
        "2018-02-17T23:00:00-03:00",
        "2019-02-17T00:00:00-03:00",
    ]


def test_sao_paulo_prev_across_both_changes() -> None:
    assert before("0 0 * * *", SAO_PAULO, "2018-11-04T01:00:00-02:00") == (
        "2018-11-04T01:00:00-02:00"
    )
    assert before("0 0 * * *", SAO_PAULO, "2018-11-04T00:59:59-02:00") == (
        "2018-11-03T00:00:00-03:00"
    )
    assert before("0 * * * *", SAO_PAULO, "2018-02-17T23:30:00-03:00") == (
        "2018-02-17T23:00:00-03:00"
    )
    assert before("30 23 * * *", SAO_PAULO, "2018-02-17T23:45:00-03:00") == (
        "2018-02-17T23:30:00-02:00"
    )


# --- Pacific/Chatham: changes at 02:45 / 03:45 --------------------------------------------


def test_chatham_fixed_time_jobs_across_both_changes() -> None:
    assert after("0 3 * * *", CHATHAM, "2024-09-28T12:00:00+12:45", 2) == [
        "2024-09-29T03:45:00+13:45",
        "2024-09-30T03:00:00+13:45",
    ]
    assert after("0 3 * * *", CHATHAM, "2024-04-06T12:00:00+13:45", 2) == [
        "2024-04-07T03:00:00+13:45",
        "2024-04-08T03:00:00+12:45",
    ]


def test_chatham_wildcard_jobs_across_both_changes() -> None:
    """cronsim 2.8 loops forever on the fall-back case (03:00-03:44 over and over)."""
    assert after("*/30 * * * *", CHATHAM, "2024-04-07T02:20:00+13:45", 6) == [
        "2024-04-07T02:30:00+13:45",
        "2024-04-07T03:00:00+13:45",
        "2024-04-07T03:30:00+13:45",
        "2024-04-07T03:00:00+12:45",
        "2024-04-07T03:30:00+12:45",
        "2024-04-07T04:00:00+12:45",
    ]
    assert after("*/15 * * * *", CHATHAM, "2024-09-29T02:20:00+12:45", 3) == [
        "2024-09-29T02:30:00+12:45",
        "2024-09-29T03:45:00+13:45",
        "2024-09-29T04:00:00+13:45",
    ]


def test_chatham_prev_across_both_changes() -> None:
    assert before("0 3 * * *", CHATHAM, "2024-04-07T03:10:00+12:45") == "2024-04-07T03:00:00+13:45"
    assert before("*/30 * * * *", CHATHAM, "2024-04-07T03:10:00+12:45") == (
        "2024-04-07T03:00:00+12:45"
    )
    assert before("0 3 * * *", CHATHAM, "2024-09-29T03:50:00+13:45") == "2024-09-29T03:45:00+13:45"
    assert before("*/15 * * * *", CHATHAM, "2024-09-29T03:44:00+13:45") == (
        "2024-09-29T02:30:00+12:45"
    )


# --- six fields ------------------------------------------------------------------------------


def test_six_field_fixed_time_job_gets_the_same_dst_handling_as_five_fields() -> None:
    """The contract's rule is about the minute and hour fields; cronsim applies it only to
    five-field expressions and would skip 02:30:00 on the spring-forward day."""
    assert after("0 30 2 * * *", NY, "2024-03-09T12:00:00-05:00", 2) == [
        "2024-03-10T03:00:00-04:00",
        "2024-03-11T02:30:00-04:00",
    ]
    assert after("0 30 1 * * *", NY, "2024-11-02T12:00:00-04:00", 2) == [
        "2024-11-03T01:30:00-04:00",
        "2024-11-04T01:30:00-05:00",
    ]


def test_six_field_skipped_times_run_once_at_the_first_instant_after_the_gap() -> None:
    assert after("*/20 30 2 * * *", NY, "2024-03-09T00:00:00-05:00", 5) == [
        "2024-03-09T02:30:00-05:00",
        "2024-03-09T02:30:20-05:00",
        "2024-03-09T02:30:40-05:00",
        "2024-03-10T03:00:00-04:00",
        "2024-03-11T02:30:00-04:00",
    ]


def test_six_field_wildcard_job_follows_the_clock() -> None:
    assert after("0 */30 * * * *", NY, "2024-11-03T01:45:00-04:00", 2) == [
        "2024-11-03T01:00:00-05:00",
        "2024-11-03T01:30:00-05:00",
    ]
