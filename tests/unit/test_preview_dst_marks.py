"""``dst_marks``: which occurrences of a preview DST moved, skipped or doubled (DESIGN §2:
"``preview`` and the dashboard's upcoming list mark occurrences that DST moved, skipped or
doubled"). Times are written with their UTC offset; the zones are those with unusual
transitions (a 30-minute change, changes at midnight).
"""

from __future__ import annotations

from datetime import datetime
from zoneinfo import ZoneInfo

import pytest

from tickwork import cron
from tickwork._rules.preview import DstMark, dst_marks, preview

NY = "America/New_York"  # 2024: gap 02:00-03:00 on Mar 10; 01:00-02:00 twice on Nov 3
LONDON = "Europe/London"  # 2024: gap 01:00-02:00 on Mar 31; 01:00-02:00 twice on Oct 27
LORD_HOWE = "Australia/Lord_Howe"  # 2024: 01:30-02:00 twice on Apr 7; gap 02:00-02:30 Oct 6
SANTIAGO = "America/Santiago"  # 2024: gap 00:00-01:00 on Sep 8
CAIRO = "Africa/Cairo"  # 2024: 23:00-24:00 twice on Oct 31

MOVED, SKIPPED, DOUBLED = DstMark.MOVED, DstMark.SKIPPED, DstMark.DOUBLED


def marks(
    expr: str, zone: str, start: str, count: int, **policy: str
) -> list[tuple[str, DstMark | None, str]]:
    """(local time with offset, mark, the wall time asked for) of each entry."""
    after = datetime.fromisoformat(start)
    occurrences = preview(cron=expr, timezone=zone, after=after, count=count, **policy)
    parsed = cron.parse(expr, zone, **policy)
    return [
        (m.at.astimezone(ZoneInfo(zone)).isoformat(), m.mark, f"{m.wall:%H:%M}")
        for m in dst_marks(parsed, after, occurrences)
    ]


CASES = [
    # (expr, zone, start, count, policy, expected entries)
    pytest.param(
        "30 2 * * *", NY, "2024-03-09T12:00:00-05:00", 2, {},
        [
            ("2024-03-10T03:00:00-04:00", MOVED, "02:30"),
            ("2024-03-11T02:30:00-04:00", None, "02:30"),
        ],
        id="gap-shift-moved",
    ),
    pytest.param(
        "30 2 * * *", NY, "2024-03-09T12:00:00-05:00", 2, {"dst_gap": "skip"},
        [
            ("2024-03-10T03:00:00-04:00", SKIPPED, "02:30"),
            ("2024-03-11T02:30:00-04:00", None, "02:30"),
            ("2024-03-12T02:30:00-04:00", None, "02:30"),
        ],
        id="gap-skip-listed-in-place-and-not-counted",
    ),
    pytest.param(
        "15,45 2,3 * * *", NY, "2024-03-10T00:00:00-05:00", 2, {},
        [
            ("2024-03-10T03:00:00-04:00", MOVED, "02:15"),
            ("2024-03-10T03:15:00-04:00", None, "03:15"),
        ],
        id="several-skipped-times-run-once-marked-with-the-first",
    ),
    pytest.param(
        "0 2 * * *", LONDON, "2024-03-30T12:00:00+00:00", 1, {},
        [("2024-03-31T02:00:00+01:00", None, "02:00")],
        id="the-gaps-end-itself-is-not-moved",
    ),
    pytest.param(
        "15 2 * * *", LORD_HOWE, "2024-10-05T12:00:00+10:30", 2, {},
        [
            ("2024-10-06T02:30:00+11:00", MOVED, "02:15"),
            ("2024-10-07T02:15:00+11:00", None, "02:15"),
        ],
        id="half-hour-gap",
    ),
    pytest.param(
        "0 0 * * *", SANTIAGO, "2024-09-07T12:00:00-04:00", 1, {"dst_gap": "skip"},
        [
            ("2024-09-08T01:00:00-03:00", SKIPPED, "00:00"),
            ("2024-09-09T00:00:00-03:00", None, "00:00"),
        ],
        id="midnight-gap-skipped",
    ),
    pytest.param(
        "30 1 * * *", NY, "2024-11-02T12:00:00-04:00", 2, {"dst_repeat": "both"},
        [
            ("2024-11-03T01:30:00-04:00", DOUBLED, "01:30"),
            ("2024-11-03T01:30:00-05:00", DOUBLED, "01:30"),
        ],
        id="repeat-both-doubled",
    ),
    pytest.param(
        "30 1 * * *", NY, "2024-11-02T12:00:00-04:00", 1, {},
        [("2024-11-03T01:30:00-04:00", None, "01:30")],
        id="repeat-first-runs-once-unmarked",
    ),
    pytest.param(
        "30 1 * * *", NY, "2024-11-02T12:00:00-04:00", 1, {"dst_repeat": "last"},
        [("2024-11-03T01:30:00-05:00", None, "01:30")],
        id="repeat-last-runs-once-unmarked",
    ),
    pytest.param(
        "45 1 * * *", LORD_HOWE, "2024-04-06T12:00:00+11:00", 2, {"dst_repeat": "both"},
        [
            ("2024-04-07T01:45:00+11:00", DOUBLED, "01:45"),
            ("2024-04-07T01:45:00+10:30", DOUBLED, "01:45"),
        ],
        id="half-hour-repeat-both",
    ),
    pytest.param(
        "30 23 * * *", CAIRO, "2024-10-31T12:00:00+03:00", 2, {"dst_repeat": "both"},
        [
            ("2024-10-31T23:30:00+03:00", DOUBLED, "23:30"),
            ("2024-10-31T23:30:00+02:00", DOUBLED, "23:30"),
        ],
        id="repeat-before-midnight",
    ),
    pytest.param(
        "*/30 1 * * *", NY, "2024-11-03T00:00:00-04:00", 5, {},
        [
            ("2024-11-03T01:00:00-04:00", DOUBLED, "01:00"),
            ("2024-11-03T01:30:00-04:00", DOUBLED, "01:30"),
            ("2024-11-03T01:00:00-05:00", DOUBLED, "01:00"),
            ("2024-11-03T01:30:00-05:00", DOUBLED, "01:30"),
            ("2024-11-04T01:00:00-05:00", None, "01:00"),
        ],
        id="wildcard-follows-the-clock-doubled-whatever-the-policy",
    ),
    pytest.param(
        "30 * * * *", LONDON, "2024-03-31T00:00:00+00:00", 2, {"dst_gap": "skip"},
        [
            ("2024-03-31T00:30:00+00:00", None, "00:30"),
            ("2024-03-31T02:30:00+01:00", None, "02:30"),
        ],
        id="wildcard-hour-in-a-gap-is-neither-moved-nor-skipped",
    ),
    pytest.param(
        "0 9 * * *", "UTC", "2024-03-09T00:00:00+00:00", 2, {"dst_gap": "skip"},
        [
            ("2024-03-09T09:00:00+00:00", None, "09:00"),
            ("2024-03-10T09:00:00+00:00", None, "09:00"),
        ],
        id="utc-never-marked",
    ),
]  # fmt: skip


@pytest.mark.parametrize(("expr", "zone", "start", "count", "policy", "expected"), CASES)
def test_preview_marks_what_dst_did(
    expr: str,
    zone: str,
    start: str,
    count: int,
    policy: dict[str, str],
    expected: list[tuple[str, DstMark | None, str]],
) -> None:
    assert marks(expr, zone, start, count, **policy) == expected


def test_a_skip_before_the_first_listed_occurrence_is_shown() -> None:
    # after= the evening before the gap: skip's first occurrence is the day after it.
    entries = marks("30 2 * * *", NY, "2024-03-09T12:00:00-05:00", 1, dst_gap="skip")
    assert [mark for _, mark, _ in entries] == [SKIPPED, None]


def test_preview_takes_the_dst_policy() -> None:
    after = datetime.fromisoformat("2024-03-09T12:00:00-05:00")
    shifted = preview(cron="30 2 * * *", timezone=NY, after=after, count=1)
    skipped = preview(cron="30 2 * * *", timezone=NY, after=after, count=1, dst_gap="skip")
    assert shifted == [datetime.fromisoformat("2024-03-10T03:00:00-04:00")]
    assert skipped == [datetime.fromisoformat("2024-03-11T02:30:00-04:00")]
