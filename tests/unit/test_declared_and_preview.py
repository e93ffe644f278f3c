"""Declared cadences (Cron, Every), preview, and the DST helpers the CLI marks with."""

from __future__ import annotations

import dataclasses
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from tickwork._edge.declared import Cron, Every
from tickwork._rules.preview import MAX_PREVIEW, near_dst_transition, preview, utc_offset_text
from tickwork.errors import ConfigError, CronError

AFTER = datetime(2024, 3, 29, 12, tzinfo=UTC)  # a Friday, two days before London's change


# --- Cron and Every ----------------------------------------------------------------------


def test_cron_keeps_expression_zone_key_and_options() -> None:
    declared = Cron("0 2 * * *", timezone="America/Sao_Paulo", key="nightly", overlap="skip")
    assert (declared.expr, declared.timezone, declared.key) == (
        "0 2 * * *",
        "America/Sao_Paulo",
        "nightly",
    )
    assert dict(declared.options) == {"overlap": "skip"}
    assert repr(declared) == (
        "Cron('0 2 * * *', timezone='America/Sao_Paulo', key='nightly', overlap='skip')"
    )


def test_every_is_normalized_to_a_timedelta() -> None:
    for form in ("90m", "1h30m", timedelta(minutes=90), {"hours": 1.5}):
        assert Every(form).every == timedelta(minutes=90)
    assert Every("1h30m") == Every({"minutes": 90})
    assert repr(Every("1h30m", key="fast")) == "Every('1h30m', key='fast', timezone='UTC')"


def test_cadences_are_frozen_hashable_values() -> None:
    assert Cron("0 2 * * *") == Cron("0 2 * * *")
    assert {Cron("0 2 * * *"), Cron("0 2 * * *"), Every("1m")} == {Cron("0 2 * * *"), Every("1m")}
    assert Cron("0 2 * * *") != Cron("0 2 * * *", key="other")
    with pytest.raises(dataclasses.FrozenInstanceError):
        Cron("0 2 * * *").expr = "0 3 * * *"  # type: ignore[misc]
    with pytest.raises(TypeError):
        Every("1m").options["pool"] = "other"  # type: ignore[index]


@pytest.mark.parametrize(
    ("build", "error", "words"),
    [
        (lambda: Cron("0 0 30 2 *"), CronError, "can never occur"),
        (lambda: Cron("61 * * * *"), CronError, "minute"),
        (lambda: Cron("@reboot"), CronError, "@reboot"),
        (lambda: Cron("0 2 * * *", timezone="Mars/Base"), ConfigError, "time zone"),
        (lambda: Cron("0 2 * * *", key=""), ConfigError, "key"),
        (lambda: Cron("0 2 * * *", key=5), ConfigError, "key"),
        (lambda: Cron("0 2 * * *", overlaps="skip"), ConfigError, "Unknown schedule option"),
        (lambda: Cron("0 2 * * *", cron="0 3 * * *"), ConfigError, "Unknown schedule option"),
        (lambda: Every("0s"), ConfigError, "longer than zero"),
        (lambda: Every("soon"), ConfigError, "Bad duration"),
        (lambda: Every("1m", timezone="Nope/Zone"), ConfigError, "time zone"),
        (lambda: Every("1m", key="  "), ConfigError, "key"),
        (lambda: Every("1m", every="2m"), TypeError, "every"),
        (lambda: Every("1m", jitters="1s"), ConfigError, "Unknown schedule option"),
    ],
)
def test_bad_cadence_fails_when_built(build: Any, error: type[Exception], words: str) -> None:
    with pytest.raises(error, match=words):
        build()


# --- preview ---------------------------------------------------------------------------------


def test_preview_of_a_cron_lists_occurrences_in_utc() -> None:
    assert preview(cron="0 9 * * 1-5", timezone="Europe/London", after=AFTER, count=3) == [
        datetime(2024, 4, 1, 8, tzinfo=UTC),  # 09:00 BST: London changed on Sunday
        datetime(2024, 4, 2, 8, tzinfo=UTC),
        datetime(2024, 4, 3, 8, tzinfo=UTC),
    ]


def test_preview_of_an_interval_counts_from_after() -> None:
    found = preview(every="90m", after=AFTER, count=3)
    assert found == [AFTER + timedelta(minutes=90 * k) for k in (1, 2, 3)]
    assert all(when.tzinfo is UTC for when in found)


def test_preview_takes_after_in_any_zone_and_defaults_to_five() -> None:
    local = AFTER.astimezone(datetime.fromisoformat("2024-01-01T00:00:00+05:30").tzinfo)
    assert preview(cron="*/5 * * * *", after=local) == preview(cron="*/5 * * * *", after=AFTER)
    assert len(preview(every={"minutes": 1}, after=AFTER)) == 5


def test_preview_lists_up_to_a_thousand() -> None:
    assert len(preview(every="1s", after=AFTER, count=MAX_PREVIEW)) == 1000


@pytest.mark.parametrize(
    ("kwargs", "words"),
    [
        ({}, "exactly one of"),
        ({"cron": "* * * * *", "every": "1m"}, "exactly one of"),
        ({"cron": "* * * * *", "count": 0}, "Bad count"),
        ({"cron": "* * * * *", "count": 1001}, "Bad count"),
        ({"cron": "* * * * *", "count": -1}, "Bad count"),
        ({"cron": "* * * * *", "count": True}, "Bad count"),
        ({"cron": "* * * * *", "count": 2.0}, "Bad count"),
        ({"cron": "* * * * *", "count": "5"}, "Bad count"),
        ({"cron": "* * * * *", "after": datetime(2024, 1, 1)}, "naive"),
        ({"every": "1m", "after": datetime(2024, 1, 1)}, "naive"),
        ({"every": "1m", "after": "2024-01-01"}, "aware datetime"),
        ({"cron": "0 0 30 2 *"}, "can never occur"),
        ({"cron": "* * * * *", "timezone": "Nope/Zone"}, "time zone"),
        ({"every": "1m", "timezone": "Nope/Zone"}, "time zone"),
        ({"every": "0s"}, "longer than zero"),
        ({"every": "1d", "after": datetime(9999, 12, 30, tzinfo=UTC)}, "year 9999"),
    ],
)
def test_bad_preview_is_a_config_error(kwargs: dict[str, Any], words: str) -> None:
    kwargs.setdefault("after", AFTER)
    with pytest.raises(ConfigError, match=words):
        preview(**kwargs)


def test_preview_near_the_end_of_the_calendar_lists_what_there_is() -> None:
    late = datetime(9999, 12, 29, tzinfo=UTC)
    assert preview(cron="0 0 * * *", after=late, count=5) == [
        datetime(9999, 12, 30, tzinfo=UTC),
        datetime(9999, 12, 31, tzinfo=UTC),
    ]


# --- DST helpers -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("instant", "zone", "near"),
    [
        (datetime(2024, 3, 31, 1, tzinfo=UTC), "Europe/London", True),  # the change itself
        (datetime(2024, 3, 30, 23, tzinfo=UTC), "Europe/London", True),  # 2 h before
        (datetime(2024, 3, 31, 3, 30, tzinfo=UTC), "Europe/London", True),  # 2.5 h after
        (datetime(2024, 3, 31, 5, tzinfo=UTC), "Europe/London", False),  # 4 h after
        (datetime(2024, 3, 20, tzinfo=UTC), "Europe/London", False),
        (datetime(2024, 3, 31, 1, tzinfo=UTC), "UTC", False),
        (datetime(2024, 3, 31, 1, tzinfo=UTC), "Asia/Tokyo", False),
        (datetime(2024, 10, 5, 15, 30, tzinfo=UTC), "Australia/Lord_Howe", True),
        (datetime(9999, 12, 31, 23, tzinfo=UTC), "Europe/London", False),
    ],
)
def test_near_dst_transition_says_whether_the_offset_changes_within_three_hours(
    instant: datetime, zone: str, near: bool
) -> None:
    assert near_dst_transition(instant, zone) is near


def test_near_dst_transition_window_can_be_widened() -> None:
    a_day_before = datetime(2024, 3, 30, 1, tzinfo=UTC)
    assert not near_dst_transition(a_day_before, "Europe/London")
    assert near_dst_transition(a_day_before, "Europe/London", within=timedelta(days=2))


def test_near_dst_transition_rejects_bad_input() -> None:
    with pytest.raises(ConfigError):
        near_dst_transition(datetime(2024, 1, 1), "Europe/London")
    with pytest.raises(ConfigError):
        near_dst_transition(AFTER, "Nope/Zone")


@pytest.mark.parametrize(
    ("instant", "zone", "text"),
    [
        (AFTER, "UTC", "+00:00"),
        (AFTER, "America/New_York", "-04:00"),
        (datetime(2024, 1, 1, tzinfo=UTC), "America/New_York", "-05:00"),
        (AFTER, "Asia/Kolkata", "+05:30"),
        (AFTER, "Pacific/Chatham", "+13:45"),
        (datetime(1960, 1, 1, tzinfo=UTC), "Africa/Monrovia", "-00:44:30"),
    ],
)
def test_utc_offset_text_is_signed_hours_and_minutes(
    instant: datetime, zone: str, text: str
) -> None:
    assert utc_offset_text(instant, zone) == text
