"""``tickwork calendars list|show|set|delete`` (DESIGN §3, §5): tables for people,
``--json`` for scripts, exit 3 for a calendar that is not there, 2 for bad input."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable

import pytest
from click.testing import CliRunner, Result

from tickwork import Context, Engine
from tickwork.cli import main

Invoke = Callable[..., Result]


@pytest.fixture
def run(sqlite_url: str) -> Invoke:
    def invoke(*args: str) -> Result:
        return CliRunner().invoke(main, ["calendars", *args, "--database", sqlite_url])

    return invoke


def test_set_then_list_and_show(run: Invoke) -> None:
    assert run("set", "uk", "--country", "GB", "--subdivision", "ENG").exit_code == 0
    made = run("set", "acme", "--weekend", "FRI,SAT", "--holiday", "2026-12-24", "--json")
    assert made.exit_code == 0, made.output
    assert json.loads(made.output)["weekend"] == ["FRI", "SAT"]
    listed = run("list", "--json")
    assert [c["name"] for c in json.loads(listed.output)["calendars"]] == ["acme", "uk"]
    table = run("list").output
    assert "GB-ENG" in table and "FRI,SAT" in table
    shown = run("show", "uk", "--year", "2026")
    assert "Fri 2026-12-25" in shown.output and "Christmas Day" in shown.output
    as_json = json.loads(run("show", "acme", "--year", "2026", "--json").output)
    assert as_json["holidays"] == [{"date": "2026-12-24", "name": ""}]


def test_delete_and_the_missing_calendar(run: Invoke) -> None:
    run("set", "acme")
    assert run("delete", "acme").exit_code == 0
    gone = run("delete", "acme")
    assert gone.exit_code == 3 and "no calendar 'acme'" in gone.output
    assert run("show", "acme").exit_code == 3


def test_bad_input_exits_2_and_stores_nothing(run: Invoke) -> None:
    run("set", "acme", "--holiday", "2026-12-24")
    bad = run("set", "acme", "--holiday", "24/12/2026")
    assert bad.exit_code == 2 and "Bad holiday '24/12/2026'" in bad.output
    listed = json.loads(run("list", "--json").output)["calendars"]
    assert [c["holidays"] for c in listed] == [["2026-12-24"]]


def test_a_country_without_the_extra_names_it(run: Invoke, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "holidays", None)
    result = run("set", "uk", "--country", "GB")
    assert result.exit_code == 2 and "pip install 'tickwork[holidays]'" in result.output


def test_a_calendar_schedules_use_is_not_deleted(run: Invoke, sqlite_url: str) -> None:
    run("set", "uk")
    with Engine(sqlite_url) as engine:
        engine.workflow("noop")(noop)
        engine.schedule("noop", every="1h", key="nightly", calendar="uk")
    refused = run("delete", "uk")
    assert refused.exit_code == 2
    assert "Calendar 'uk' is used by schedule(s) 'nightly'" in refused.output
    assert [c["name"] for c in json.loads(run("list", "--json").output)["calendars"]] == ["uk"]


def noop(ctx: Context) -> None:
    return None


# -- tickwork cron --calendar (issue 47) ---------------------------------------------------


def cron(*args: str) -> Result:
    return CliRunner().invoke(main, ["cron", *args])


def test_cron_with_a_calendar_counts_its_business_days_and_marks_its_days_off(
    run: Invoke, sqlite_url: str
) -> None:
    """``tickwork cron "0 17 LBD * *" --calendar acme`` says the words, names the calendar
    and lists the last business days; with ``--on-holiday next`` an everyday cron's
    holiday says where its run moves, as a DST move is said."""
    run("set", "acme", "--holiday", "2026-12-31", "--holiday", "2026-12-25")
    words = cron("0 17 LBD * *", "--calendar", "acme", "--database", sqlite_url,
                 "--after", "2026-12-01T00:00Z", "-n", "2")  # fmt: skip
    assert words.exit_code == 0, words.output
    assert "At 17:00 on the last business day of the month (calendar acme)" in words.output
    assert "2026-12-30 17:00" in words.output and "2027-01-29 17:00" in words.output
    moved = cron("0 9 * * *", "--calendar", "acme", "--on-holiday", "next", "--database",
                 sqlite_url, "--after", "2026-12-24T00:00Z", "-n", "2")  # fmt: skip
    assert moved.exit_code == 0, moved.output
    assert "holiday: runs Mon 2026-12-28 09:00" in " ".join(moved.output.split())
    listed = cron("0 9 * * *", "--calendar", "acme", "--database", sqlite_url,
                  "--after", "2026-12-24T00:00Z", "-n", "2", "--json")  # fmt: skip
    as_json = json.loads(listed.output)
    assert [o.get("holiday") for o in as_json["occurrences"]] == [None, "skipped"]
    assert as_json["calendar"] == "acme"


def test_cron_with_business_day_words_and_no_calendar_says_it_needs_one() -> None:
    result = cron("0 9 LBD * *")
    assert result.exit_code == 2
    assert "business-day words need a calendar" in result.output
    assert "--calendar NAME" in result.output


def test_cron_with_a_calendar_not_stored_exits_2_naming_it(run: Invoke, sqlite_url: str) -> None:
    run("set", "acme")
    result = cron("0 9 LBD * *", "--calendar", "nope", "--database", sqlite_url)
    assert result.exit_code == 2 and "No calendar 'nope'" in result.output
