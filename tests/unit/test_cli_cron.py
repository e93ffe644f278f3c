"""``tickwork cron EXPR``: English, upcoming occurrences in the zone and in UTC, DST marks."""

from __future__ import annotations

import json
from datetime import UTC, datetime

import pytest
from click.testing import CliRunner, Result

from tickwork.cli.cron import command


def run(*args: str) -> Result:
    # A wide console, so that rows stay on one line whatever the terminal running the tests.
    return CliRunner(env={"COLUMNS": "200"}).invoke(command, list(args))


def test_prints_the_description_and_the_next_five_in_zone_and_utc() -> None:
    result = run("0 9 * * 1-5", "--tz", "Europe/London", "--after", "2024-03-29T12:00Z")
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert lines[0] == "At 09:00 on Monday through Friday"
    assert "Europe/London" in result.output and "UTC" in result.output
    rows = [line for line in lines if "2024-04" in line]
    assert len(rows) == 5
    assert "Mon 2024-04-01 09:00 +01:00" in rows[0] and "2024-04-01 08:00" in rows[0]
    assert "Fri 2024-04-05 09:00 +01:00" in rows[4]


def test_marks_the_occurrence_whose_utc_offset_changed() -> None:
    result = run("30 2 * * *", "--tz", "America/New_York", "-n", "3", "--after", "2024-03-09T12:00")
    assert result.exit_code == 0, result.output
    rows = [line for line in result.output.splitlines() if "2024-03-1" in line]
    assert "Sun 2024-03-10 03:00 -04:00" in rows[0] and "DST: was -05:00" in rows[0]
    assert "Mon 2024-03-11 02:30 -04:00" in rows[1] and "DST" not in rows[1]


def test_marks_an_occurrence_next_to_a_dst_change() -> None:
    result = run("30 1 * * *", "--tz", "America/New_York", "-n", "2", "--after", "2024-11-02T12:00")
    rows = [line for line in result.output.splitlines() if "2024-11-0" in line]
    assert "Sun 2024-11-03 01:30 -04:00" in rows[0] and "near a DST change" in rows[0]
    assert "Mon 2024-11-04 01:30 -05:00" in rows[1] and "DST: was -04:00" in rows[1]


def test_fields_may_come_as_separate_arguments() -> None:
    together = run("*/15 9 * * *", "--after", "2024-01-01T00:00Z")
    apart = run("*/15", "9", "*", "*", "*", "--after", "2024-01-01T00:00Z")
    assert together.exit_code == apart.exit_code == 0
    assert together.output == apart.output
    assert "2024-01-01 09:00 UTC" in together.output


def test_six_field_expressions_show_seconds() -> None:
    result = run("*/20 * * * * *", "-n", "2", "--after", "2024-01-01T00:00Z")
    assert "2024-01-01 00:00:20 UTC" in result.output
    assert "2024-01-01 00:00:40 UTC" in result.output


def test_json_output_for_scripts() -> None:
    result = run(
        "0 9 * * 1-5", "--tz", "Europe/London", "-n", "2", "--json", "--after", "2024-03-29T12:00Z"
    )
    assert result.exit_code == 0, result.output
    assert json.loads(result.output) == {  # the API's GET /cron/preview answer
        "cron": "0 9 * * 1-5",
        "every": None,
        "timezone": "Europe/London",
        "description": "At 09:00 on Monday through Friday",
        "occurrences": [
            {
                "local": "2024-04-01T09:00:00.000+01:00",
                "utc": "2024-04-01T08:00:00.000Z",
                "utc_offset": "+01:00",
            },
            {
                "local": "2024-04-02T09:00:00.000+01:00",
                "utc": "2024-04-02T08:00:00.000Z",
                "utc_offset": "+01:00",
            },
        ],
    }


def test_after_without_offset_is_read_in_the_zone() -> None:
    result = run(
        "0 * * * *", "--tz", "Asia/Tokyo", "-n", "1", "--json", "--after", "2024-01-01T08:30"
    )
    assert json.loads(result.output)["occurrences"][0]["utc"] == "2024-01-01T00:00:00.000Z"


def test_defaults_to_five_occurrences_after_now() -> None:
    before = datetime.now(UTC)
    result = run("* * * * *", "--json")
    found = [datetime.fromisoformat(o["utc"]) for o in json.loads(result.output)["occurrences"]]
    assert len(found) == 5
    assert found[0] > before.replace(second=0, microsecond=0)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["61 * * * *"], "minute: 61 is out of range 0-59"),
        (["0 0 30 2 *"], "can never occur"),
        (["@reboot"], "@reboot"),
        (["* * * *"], "expected 5 fields"),
        (["* * * * *", "--tz", "Nope/Zone"], "Unknown time zone 'Nope/Zone'"),
        (["* * * * *", "--tz", "../../etc/passwd"], "not an IANA zone name"),
        (["* * * * *", "-n", "0"], "Bad count 0"),
        (["* * * * *", "-n", "1001"], "Bad count 1001"),
        (["* * * * *", "-n", "many"], "Bad count 'many'"),
        (["* * * * *", "--after", "yesterday"], "Bad --after 'yesterday'"),
    ],
)
def test_errors_go_to_stderr_with_exit_code_2(args: list[str], message: str) -> None:
    result = run(*args)
    assert result.exit_code == 2
    assert result.stdout == ""
    assert result.stderr.startswith("error: ")
    assert message in result.stderr


def test_command_is_named_cron() -> None:
    assert command.name == "cron"


def test_says_which_time_dst_moved() -> None:
    result = run("30 2 * * *", "--tz", "America/New_York", "-n", "1", "--after", "2024-03-09T12:00")
    row = next(line for line in result.output.splitlines() if "2024-03-10" in line)
    assert "Sun 2024-03-10 03:00" in row and "moved from 02:30" in row


def test_a_skipped_time_is_listed_in_place_and_not_counted() -> None:
    result = run(
        "30 2 * * *", "--tz", "America/New_York", "-n", "2", "--after", "2024-03-09T12:00",
        "--dst-gap", "skip",
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    rows = [line for line in result.output.splitlines() if "2024-03-1" in line]
    assert rows[0].startswith("│ - ") and "Sun 2024-03-10 02:30" in rows[0]
    assert "skipped 02:30: no run" in rows[0]
    assert rows[1].startswith("│ 1 ") and "Mon 2024-03-11 02:30" in rows[1]
    assert rows[2].startswith("│ 2 ") and "Tue 2024-03-12 02:30" in rows[2]


def test_both_instants_of_a_repeated_time_are_marked_doubled() -> None:
    result = run(
        "30 1 * * *", "--tz", "America/New_York", "-n", "2", "--after", "2024-11-02T12:00",
        "--dst-repeat", "both",
    )  # fmt: skip
    rows = [line for line in result.output.splitlines() if "2024-11-03" in line]
    assert "01:30 -04:00" in rows[0] and "01:30 -05:00" in rows[1]
    assert all("doubled: 01:30 runs twice" in row for row in rows)


def test_json_lists_the_policys_occurrences() -> None:
    result = run(
        "30 1 * * *", "--tz", "America/New_York", "-n", "2", "--json",
        "--after", "2024-11-02T12:00", "--dst-repeat", "last",
    )  # fmt: skip
    utc = [o["utc"] for o in json.loads(result.output)["occurrences"]]
    assert utc == ["2024-11-03T06:30:00.000Z", "2024-11-04T06:30:00.000Z"]


def test_an_unknown_dst_policy_is_refused() -> None:
    result = run("30 1 * * *", "--dst-gap", "later")
    assert result.exit_code == 2 and "'later' is not one of 'shift', 'skip'" in result.output


def test_json_marks_what_dst_did_to_each_occurrence() -> None:
    moved = run(
        "30 2 * * *", "--tz", "America/New_York", "-n", "2", "--json", "--after", "2024-03-09T12:00"
    )
    first, second = json.loads(moved.output)["occurrences"]
    assert first == {
        "utc": "2024-03-10T07:00:00.000Z",
        "local": "2024-03-10T03:00:00.000-04:00",
        "utc_offset": "-04:00",
        "dst": "moved",
        "dst_wall": "2024-03-10T02:30:00",  # the time the expression named, skipped by DST
    }
    assert "dst" not in second and "dst_wall" not in second  # untouched: as it always was
    assert "dst_skipped" not in json.loads(moved.output)

    doubled = run(
        "30 1 * * *", "--tz", "America/New_York", "-n", "3", "--json",
        "--after", "2024-11-02T12:00", "--dst-repeat", "both",
    )  # fmt: skip
    marks = [
        (o["utc"], o.get("dst"), o.get("dst_wall"))
        for o in json.loads(doubled.output)["occurrences"]
    ]
    assert marks == [
        ("2024-11-03T05:30:00.000Z", "doubled", "2024-11-03T01:30:00"),
        ("2024-11-03T06:30:00.000Z", "doubled", "2024-11-03T01:30:00"),
        ("2024-11-04T06:30:00.000Z", None, None),
    ]


def test_json_lists_the_times_a_skipping_gap_left_without_a_run() -> None:
    result = run(
        "30 2 * * *", "--tz", "America/New_York", "-n", "2", "--json",
        "--after", "2024-03-09T12:00", "--dst-gap", "skip",
    )  # fmt: skip
    answer = json.loads(result.output)
    assert answer["dst_skipped"] == ["2024-03-10T02:30:00"]
    assert [o["utc"] for o in answer["occurrences"]] == [
        "2024-03-11T06:30:00.000Z",
        "2024-03-12T06:30:00.000Z",
    ]
    assert all("dst" not in o for o in answer["occurrences"])
