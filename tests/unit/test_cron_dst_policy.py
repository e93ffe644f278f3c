"""A DST policy per cron expression (DESIGN §2): ``dst_gap="shift"|"skip"`` for a fixed
time that a spring-forward gap skips, ``dst_repeat="first"|"last"|"both"`` for one that a
fall-back repeats. Both apply to fixed-time expressions only; a wildcard minute or hour
field follows the clock whatever the policy says.

Times are written with their UTC offset, so "01:30-04:00" and "01:30-05:00" are the two
01:30s of a New York fall-back night. The zones cover the unusual transitions: a 30-minute
change (Lord Howe), changes at midnight (Santiago's gap at 00:00, Cairo's gap at 00:00 and
its repeated hour before midnight).
"""

from __future__ import annotations

import itertools
from datetime import UTC, datetime, timedelta
from zoneinfo import ZoneInfo

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tickwork import cron
from tickwork.errors import ConfigError

NY = "America/New_York"  # 2024: gap 02:00-03:00 on Mar 10; 01:00-02:00 twice on Nov 3
LONDON = "Europe/London"  # 2024: gap 01:00-02:00 on Mar 31; 01:00-02:00 twice on Oct 27
LORD_HOWE = "Australia/Lord_Howe"  # 2024: 01:30-02:00 twice on Apr 7; gap 02:00-02:30 Oct 6
SANTIAGO = "America/Santiago"  # 2024: 23:00-24:00 twice on Apr 6; gap 00:00-01:00 on Sep 8
CAIRO = "Africa/Cairo"  # 2024: gap 00:00-01:00 on Apr 26; 23:00-24:00 twice on Oct 31


def after(expr: str, zone: str, start: str, count: int, **policy: str) -> list[str]:
    """The next ``count`` occurrences after ``start``, as local times with offsets."""
    parsed = cron.parse(expr, zone, **policy)
    found = list(itertools.islice(parsed.iter(datetime.fromisoformat(start)), count))
    return [when.astimezone(ZoneInfo(zone)).isoformat() for when in found]


def before(expr: str, zone: str, at: str, **policy: str) -> str:
    found = cron.parse(expr, zone, **policy).prev(datetime.fromisoformat(at))
    return found.astimezone(ZoneInfo(zone)).isoformat()


GAPS = [
    # (expr, zone, start, shift's occurrences, skip's occurrences)
    (
        "30 2 * * *", NY, "2024-03-09T12:00:00-05:00",
        ["2024-03-10T03:00:00-04:00", "2024-03-11T02:30:00-04:00"],
        ["2024-03-11T02:30:00-04:00", "2024-03-12T02:30:00-04:00"],
    ),
    (
        "15,45 2,3 * * *", NY, "2024-03-10T00:00:00-05:00",
        ["2024-03-10T03:00:00-04:00", "2024-03-10T03:15:00-04:00", "2024-03-10T03:45:00-04:00"],
        ["2024-03-10T03:15:00-04:00", "2024-03-10T03:45:00-04:00", "2024-03-11T02:15:00-04:00"],
    ),
    (
        "30 1 * * *", LONDON, "2024-03-30T12:00:00+00:00",
        ["2024-03-31T02:00:00+01:00", "2024-04-01T01:30:00+01:00"],
        ["2024-04-01T01:30:00+01:00", "2024-04-02T01:30:00+01:00"],
    ),
    (
        "15 2 * * *", LORD_HOWE, "2024-10-05T12:00:00+10:30",
        ["2024-10-06T02:30:00+11:00", "2024-10-07T02:15:00+11:00"],
        ["2024-10-07T02:15:00+11:00", "2024-10-08T02:15:00+11:00"],
    ),
    (
        "0 0 * * *", SANTIAGO, "2024-09-07T12:00:00-04:00",
        ["2024-09-08T01:00:00-03:00", "2024-09-09T00:00:00-03:00"],
        ["2024-09-09T00:00:00-03:00", "2024-09-10T00:00:00-03:00"],
    ),
    (
        "0 0 * * *", CAIRO, "2024-04-25T12:00:00+02:00",
        ["2024-04-26T01:00:00+03:00", "2024-04-27T00:00:00+03:00"],
        ["2024-04-27T00:00:00+03:00", "2024-04-28T00:00:00+03:00"],
    ),
]  # fmt: skip


@pytest.mark.parametrize(("expr", "zone", "start", "shifted", "skipped"), GAPS)
def test_a_time_skipped_by_a_gap_runs_after_it_or_not_at_all_that_day(
    expr: str, zone: str, start: str, shifted: list[str], skipped: list[str]
) -> None:
    assert after(expr, zone, start, len(shifted)) == shifted  # the default is shift
    assert after(expr, zone, start, len(shifted), dst_gap="shift") == shifted
    assert after(expr, zone, start, len(skipped), dst_gap="skip") == skipped


REPEATS = [
    # (expr, zone, start, first, last, both)
    (
        "30 1 * * *", NY, "2024-11-02T12:00:00-04:00",
        ["2024-11-03T01:30:00-04:00", "2024-11-04T01:30:00-05:00"],
        ["2024-11-03T01:30:00-05:00", "2024-11-04T01:30:00-05:00"],
        ["2024-11-03T01:30:00-04:00", "2024-11-03T01:30:00-05:00", "2024-11-04T01:30:00-05:00"],
    ),
    (
        "0,30 1 * * *", NY, "2024-11-02T12:00:00-04:00",
        ["2024-11-03T01:00:00-04:00", "2024-11-03T01:30:00-04:00", "2024-11-04T01:00:00-05:00"],
        ["2024-11-03T01:00:00-05:00", "2024-11-03T01:30:00-05:00", "2024-11-04T01:00:00-05:00"],
        [
            "2024-11-03T01:00:00-04:00", "2024-11-03T01:30:00-04:00",
            "2024-11-03T01:00:00-05:00", "2024-11-03T01:30:00-05:00",
            "2024-11-04T01:00:00-05:00",
        ],
    ),
    (
        "30 1 * * *", LONDON, "2024-10-26T12:00:00+01:00",
        ["2024-10-27T01:30:00+01:00", "2024-10-28T01:30:00+00:00"],
        ["2024-10-27T01:30:00+00:00", "2024-10-28T01:30:00+00:00"],
        ["2024-10-27T01:30:00+01:00", "2024-10-27T01:30:00+00:00", "2024-10-28T01:30:00+00:00"],
    ),
    (
        "45 1 * * *", LORD_HOWE, "2024-04-06T12:00:00+11:00",
        ["2024-04-07T01:45:00+11:00", "2024-04-08T01:45:00+10:30"],
        ["2024-04-07T01:45:00+10:30", "2024-04-08T01:45:00+10:30"],
        ["2024-04-07T01:45:00+11:00", "2024-04-07T01:45:00+10:30", "2024-04-08T01:45:00+10:30"],
    ),
    (
        "30 23 * * *", SANTIAGO, "2024-04-06T12:00:00-03:00",
        ["2024-04-06T23:30:00-03:00", "2024-04-07T23:30:00-04:00"],
        ["2024-04-06T23:30:00-04:00", "2024-04-07T23:30:00-04:00"],
        ["2024-04-06T23:30:00-03:00", "2024-04-06T23:30:00-04:00", "2024-04-07T23:30:00-04:00"],
    ),
    (
        "30 23 * * *", CAIRO, "2024-10-31T12:00:00+03:00",
        ["2024-10-31T23:30:00+03:00", "2024-11-01T23:30:00+02:00"],
        ["2024-10-31T23:30:00+02:00", "2024-11-01T23:30:00+02:00"],
        ["2024-10-31T23:30:00+03:00", "2024-10-31T23:30:00+02:00", "2024-11-01T23:30:00+02:00"],
    ),
]  # fmt: skip


@pytest.mark.parametrize(("expr", "zone", "start", "first", "last", "both"), REPEATS)
def test_a_repeated_time_runs_at_the_first_the_last_or_both_of_its_instants(
    expr: str, zone: str, start: str, first: list[str], last: list[str], both: list[str]
) -> None:
    assert after(expr, zone, start, len(first)) == first  # the default is first
    assert after(expr, zone, start, len(last), dst_repeat="last") == last
    assert after(expr, zone, start, len(both), dst_repeat="both") == both


def test_walking_from_inside_a_repeated_hour_respects_which_pass_it_is() -> None:
    """From the first 01:45 of New York's fall-back night, "last" still has the second
    01:30 ahead; from the second 01:45, the next is the following day."""
    assert after("30 1 * * *", NY, "2024-11-03T01:45:00-04:00", 1, dst_repeat="last") == [
        "2024-11-03T01:30:00-05:00"
    ]
    assert after("30 1 * * *", NY, "2024-11-03T01:45:00-05:00", 1, dst_repeat="last") == [
        "2024-11-04T01:30:00-05:00"
    ]
    assert after("30 1 * * *", NY, "2024-11-03T01:15:00-05:00", 1, dst_repeat="both") == [
        "2024-11-03T01:30:00-05:00"
    ]


def test_prev_follows_the_policy() -> None:
    first_pass_late = "2024-11-03T01:45:00-04:00"
    assert before("30 1 * * *", NY, first_pass_late, dst_repeat="last") == (
        "2024-11-02T01:30:00-04:00"
    )
    assert before("30 1 * * *", NY, "2024-11-03T01:45:00-05:00", dst_repeat="last") == (
        "2024-11-03T01:30:00-05:00"
    )
    assert before("30 1 * * *", NY, first_pass_late, dst_repeat="both") == (
        "2024-11-03T01:30:00-04:00"
    )
    assert before("30 1 * * *", NY, "2024-11-03T01:45:00-05:00", dst_repeat="both") == (
        "2024-11-03T01:30:00-05:00"
    )
    gap_day_noon = "2024-03-10T12:00:00-04:00"
    assert before("30 2 * * *", NY, gap_day_noon) == "2024-03-10T03:00:00-04:00"
    assert before("30 2 * * *", NY, gap_day_noon, dst_gap="skip") == "2024-03-09T02:30:00-05:00"


@pytest.mark.parametrize("expr", ["30 * * * *", "*/20 1 * * *", "0 */2 * * *"])
def test_an_expression_following_the_clock_ignores_the_policy(expr: str) -> None:
    """A wildcard minute or hour field: every wall time the clock shows, once per pass,
    none that it skips, whatever the policy."""
    for start in ("2024-03-09T20:00:00-05:00", "2024-11-02T20:00:00-04:00"):
        default = after(expr, NY, start, 12)
        for gap, repeat in itertools.product(cron.DstGap, cron.DstRepeat):
            assert after(expr, NY, start, 12, dst_gap=gap, dst_repeat=repeat) == default


def test_a_bad_policy_is_refused_naming_the_option_and_the_choices() -> None:
    with pytest.raises(ConfigError, match=r"dst_gap must be one of 'shift', 'skip', not 'later'"):
        cron.parse("0 2 * * *", NY, dst_gap="later")
    with pytest.raises(ConfigError, match=r"dst_repeat must be one of 'first', 'last', 'both'"):
        cron.parse("0 2 * * *", NY, dst_repeat=2)  # type: ignore[arg-type]


def test_the_policy_is_part_of_the_expression_s_identity() -> None:
    plain = cron.parse("30 1 * * *", NY)
    both = cron.parse("30 1 * * *", NY, dst_repeat="both")
    assert plain != both
    assert both == cron.parse("30 1 * * *", NY, dst_repeat=cron.DstRepeat.BOTH)
    assert repr(plain) == "CronExpr(expr='30 1 * * *', timezone='America/New_York')"
    assert repr(both) == (
        "CronExpr(expr='30 1 * * *', timezone='America/New_York', dst_repeat='both')"
    )


# --- properties -------------------------------------------------------------------------

ZONES = [NY, LONDON, LORD_HOWE, SANTIAGO, CAIRO, "Pacific/Chatham", "America/Havana"]
FIXED = ["30 1 * * *", "0,30 1,2 * * *", "0 0 * * *", "45 23 * * *", "15 2 * * 0", "30 2 1 * *"]
starts = st.datetimes(
    min_value=datetime(2023, 1, 1), max_value=datetime(2025, 12, 31), timezones=st.just(UTC)
)


@settings(deadline=None, max_examples=80)
@given(expr=st.sampled_from(FIXED), zone=st.sampled_from(ZONES), start=starts)
def test_both_never_yields_an_instant_twice_and_the_others_are_its_subsets(
    expr: str, zone: str, start: datetime
) -> None:
    def walk(**policy: str) -> list[datetime]:
        end = start + timedelta(days=400)
        found = cron.parse(expr, zone, **policy).iter(start)
        return list(itertools.takewhile(lambda when: when < end, found))

    both = walk(dst_repeat="both")
    assert both == sorted(set(both))  # strictly increasing: no instant twice
    assert set(walk(dst_repeat="first")) <= set(both)
    assert set(walk(dst_repeat="last")) <= set(both)
    skipped = walk(dst_gap="skip")
    assert set(skipped) <= set(walk(dst_gap="shift"))
    # every occurrence of "skip" is a wall time the expression names, as the clock shows it
    wall = ZoneInfo(zone)
    named = cron.parse(expr, "UTC")
    for when in skipped:
        local = when.astimezone(wall).replace(tzinfo=UTC)
        assert named.prev(local) == local


@settings(deadline=None, max_examples=80)
@given(
    expr=st.sampled_from(FIXED),
    zone=st.sampled_from(ZONES),
    start=starts,
    gap=st.sampled_from(list(cron.DstGap)),
    repeat=st.sampled_from(list(cron.DstRepeat)),
)
def test_prev_finds_each_occurrence_that_iter_yields(
    expr: str, zone: str, start: datetime, gap: cron.DstGap, repeat: cron.DstRepeat
) -> None:
    parsed = cron.parse(expr, zone, dst_gap=gap, dst_repeat=repeat)
    for when in itertools.islice(parsed.iter(start), 5):
        assert parsed.prev(when) == when
        assert parsed.prev(when - timedelta(seconds=1)) < when
