"""Business calendars as the cron walk and the firing rules see them (DESIGN §2): the
day words ``nBD`` / ``LBD`` in day-of-month, and where an occurrence on a day off runs
under ``on_holiday`` — table-tested on months that start or end on holidays and
weekends, moves into another month and year, and across a DST change.
"""

from __future__ import annotations

import itertools
import re
from datetime import UTC, date, datetime, timedelta
from zoneinfo import ZoneInfo

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tickwork import cron
from tickwork._values.business_days import BusinessDays, on_business_day
from tickwork._values.models import OnHoliday
from tickwork.errors import ConfigError, CronError

LONDON = ZoneInfo("Europe/London")
# England's bank holidays of 2024 and 2025, written out by hand.
ENGLAND = BusinessDays(
    "uk",
    holidays=frozenset(
        date.fromisoformat(text)
        for text in [
            *("2024-01-01", "2024-03-29", "2024-04-01", "2024-05-06", "2024-05-27"),
            *("2024-08-26", "2024-12-25", "2024-12-26", "2025-01-01", "2025-04-18"),
            *("2025-04-21", "2025-05-05", "2025-05-26", "2025-08-25", "2025-12-25"),
            "2025-12-26",
        ]
    ),
)
FRI_SAT = BusinessDays("gulf", weekend=BusinessDays.weekend_from_names(("FRI", "SAT")))


def occurrences(expr: str, count: int, days: BusinessDays = ENGLAND, zone: str = "Europe/London",
                start: str = "2023-12-15T00:00:00+00:00") -> list[str]:  # fmt: skip
    walk = cron.parse(expr, zone, calendar=days).iter(datetime.fromisoformat(start))
    return [when.astimezone(ZoneInfo(zone)).isoformat() for when in itertools.islice(walk, count)]


def test_the_first_business_day_steps_over_new_year_easter_and_weekends() -> None:
    assert occurrences("0 9 1BD * *", 6) == [
        "2024-01-02T09:00:00+00:00",  # Jan 1 is New Year's Day
        "2024-02-01T09:00:00+00:00",
        "2024-03-01T09:00:00+00:00",
        "2024-04-02T09:00:00+01:00",  # Apr 1 is Easter Monday
        "2024-05-01T09:00:00+01:00",
        "2024-06-03T09:00:00+01:00",  # Jun 1 is a Saturday
    ]


def test_the_last_business_day_steps_back_over_good_friday_and_weekends() -> None:
    found = occurrences("0 9 LBD * *", 12, start="2024-01-01T00:00:00+00:00")
    assert found[2] == "2024-03-28T09:00:00+00:00"  # Mar 29 Good Friday, then a weekend
    assert found[4] == "2024-05-31T09:00:00+01:00"
    assert found[7] == "2024-08-30T09:00:00+01:00"  # Aug 31 is a Saturday
    assert found[10] == "2024-11-29T09:00:00+00:00"  # Nov 30 is a Saturday
    assert found[11] == "2024-12-31T09:00:00+00:00"


def test_several_business_day_words_and_a_six_field_expression() -> None:
    assert occurrences("0 9 2BD,LBD * *", 3, start="2024-01-01T00:00:00+00:00") == [
        "2024-01-03T09:00:00+00:00",
        "2024-01-31T09:00:00+00:00",
        "2024-02-02T09:00:00+00:00",
    ]
    assert occurrences("30 0 9 1bd 4 *", 2) == [
        "2024-04-02T09:00:30+01:00",
        "2025-04-01T09:00:30+01:00",
    ]


def test_business_days_in_utc_and_with_another_weekend() -> None:
    assert occurrences("0 9 1BD * *", 2, zone="UTC") == [
        "2024-01-02T09:00:00+00:00",
        "2024-02-01T09:00:00+00:00",
    ]
    # Jun 2024 starts on a Saturday: Friday and Saturday off, so Sunday the 2nd is first
    assert occurrences("0 9 1BD 6 *", 1, days=FRI_SAT, zone="Asia/Dubai") == [
        "2024-06-02T09:00:00+04:00"
    ]


def test_prev_counts_business_days_too() -> None:
    parsed = cron.parse("0 9 1BD * *", "Europe/London", calendar=ENGLAND)
    april_2nd_9_am = datetime(2024, 4, 2, 8, tzinfo=UTC)  # British Summer Time
    assert parsed.prev(april_2nd_9_am) == april_2nd_9_am
    second_before = april_2nd_9_am - timedelta(seconds=1)
    assert parsed.prev(second_before) == datetime(2024, 3, 1, 9, tzinfo=UTC)


def test_explain_says_the_business_days_in_words_and_whose_they_are() -> None:
    parsed = cron.parse("0 9 LBD * *", calendar=ENGLAND)
    name = ENGLAND.name
    assert parsed.explain() == f"At 09:00 on the last business day of the month (calendar {name})"
    assert cron.parse("0 17 2BD * *", calendar=ENGLAND).explain() == (
        f"At 17:00 on the 2nd business day of the month (calendar {name})"
    )
    assert (
        cron.parse("0 9 1BD,LBD * *", calendar=ENGLAND)
        .explain()
        .endswith(f"on the 1st and last business days of the month (calendar {name})")
    )


@pytest.mark.parametrize(
    ("expr", "field", "says"),
    [
        ("0 9 LBD * MON", "day-of-week", "write '*' here"),
        ("0 9 1,LBD * *", "day-of-month", "cannot be mixed with days"),
        ("0 9 24BD * *", "day-of-month", "1-23"),
        ("0 9 0BD * *", "day-of-month", "'nBD'"),
        ("0 9 XBD * *", "day-of-month", "'LBD'"),
    ],
)
def test_misused_business_day_words_are_refused_naming_the_field(
    expr: str, field: str, says: str
) -> None:
    with pytest.raises(CronError, match=re.escape(says)) as caught:
        cron.parse(expr, calendar=ENGLAND)
    assert caught.value.field == field


def test_business_day_words_need_a_calendar() -> None:
    with pytest.raises(CronError, match="need a calendar: schedule it with calendar="):
        cron.parse("0 9 LBD * *")


def test_a_weekend_of_unknown_names_or_of_every_day_is_refused() -> None:
    with pytest.raises(ConfigError, match="'FUNDAY' is not a day of the week"):
        BusinessDays.weekend_from_names(("SAT", "FUNDAY"))
    with pytest.raises(ConfigError, match="leaves no business day"):
        BusinessDays("never", weekend=frozenset(range(7)))


def at(text: str) -> datetime:
    return datetime.fromisoformat(text).astimezone(UTC)


def local(when: datetime | None) -> str | None:
    return None if when is None else when.astimezone(LONDON).isoformat()


MOVES = [
    # (occurrence, on_holiday, where it runs)
    ("2024-03-27T09:00:00+00:00", OnHoliday.SKIP, "2024-03-27T09:00:00+00:00"),  # a workday
    ("2024-03-29T09:00:00+00:00", OnHoliday.SKIP, None),  # Good Friday
    # next: over Easter Monday and into British Summer Time, still 09:00 local
    ("2024-03-29T09:00:00+00:00", OnHoliday.NEXT, "2024-04-02T09:00:00+01:00"),
    ("2024-04-01T09:00:00+01:00", OnHoliday.PREVIOUS, "2024-03-28T09:00:00+00:00"),
    ("2024-08-31T09:00:00+01:00", OnHoliday.NEXT, "2024-09-02T09:00:00+01:00"),
    ("2024-12-25T09:00:00+00:00", OnHoliday.NEXT, "2024-12-27T09:00:00+00:00"),
    ("2025-01-01T09:00:00+00:00", OnHoliday.PREVIOUS, "2024-12-31T09:00:00+00:00"),
]


@pytest.mark.parametrize(("occurrence", "on_holiday", "runs"), MOVES)
def test_an_occurrence_on_a_day_off_is_skipped_or_moved_to_a_business_day(
    occurrence: str, on_holiday: OnHoliday, runs: str | None
) -> None:
    assert local(on_business_day(at(occurrence), LONDON, ENGLAND, on_holiday)) == runs


def test_the_local_date_decides_not_the_utc_date() -> None:
    """00:30 BST on Tuesday Apr 2 is 23:30 UTC on Easter Monday: a business day."""
    late = at("2024-04-02T00:30:00+01:00")
    assert on_business_day(late, LONDON, ENGLAND, OnHoliday.SKIP) == late


# --- properties -------------------------------------------------------------------------

calendars = st.builds(
    lambda name, holidays, weekend: BusinessDays(name, frozenset(holidays), frozenset(weekend)),
    st.just("any"),
    st.sets(st.dates(min_value=date(2024, 1, 1), max_value=date(2024, 12, 31)), max_size=80),
    st.sets(st.integers(0, 6), max_size=3),
)
instants = st.datetimes(
    min_value=datetime(2024, 1, 1), max_value=datetime(2024, 12, 31), timezones=st.just(UTC)
)


@settings(deadline=None, max_examples=200)
@given(days=calendars, instant=instants, on_holiday=st.sampled_from(list(OnHoliday)))
def test_a_moved_occurrence_is_a_business_day_at_the_same_local_time(
    days: BusinessDays, instant: datetime, on_holiday: OnHoliday
) -> None:
    moved = on_business_day(instant, LONDON, days, on_holiday)
    if moved is None:
        assert on_holiday is OnHoliday.SKIP or not days.is_business_day(
            instant.astimezone(LONDON).date()
        )
        return
    assert days.is_business_day(moved.astimezone(LONDON).date())
    if moved != instant:
        assert (moved > instant) == (on_holiday is OnHoliday.NEXT)
        # the same wall time, unless that day's DST change moved it
        assert abs(moved.astimezone(LONDON).time().hour - instant.astimezone(LONDON).hour) <= 1


@settings(deadline=None, max_examples=100)
@given(days=calendars, nth=st.integers(1, 23))
def test_nbd_runs_once_in_each_month_that_has_n_business_days_on_the_nth(
    days: BusinessDays, nth: int
) -> None:
    if nth > days.most_in_a_month():  # refused, rather than walked to year 9999
        with pytest.raises(CronError, match="never occurs"):
            cron.parse(f"0 12 {nth}BD * *", "UTC", calendar=days)
        return
    walk = cron.parse(f"0 12 {nth}BD * *", "UTC", calendar=days).iter(
        datetime(2024, 1, 1, tzinfo=UTC)
    )
    found = list(itertools.takewhile(lambda when: when.year == 2024, walk))
    expected = []
    for month in range(1, 13):
        business = days.business_days_in(2024, month)
        if len(business) >= nth:
            expected.append(datetime.combine(business[nth - 1], datetime.min.time(), UTC))
    assert found == [day + timedelta(hours=12) for day in expected]
