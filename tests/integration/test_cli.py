"""The ``tickwork`` command: schedules, runs, tick, db — tables for people, JSON for scripts."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from tickwork import Context, Engine
from tickwork._store import migrations
from tickwork.cli import main

APP = """
from tickwork import Context, Engine, Every

engine = Engine("{url}")

@engine.workflow(schedule=Every("1s", key="tick-tock"))
def job(ctx: Context) -> str:
    return "done"
"""


@pytest.fixture
def url(db_url: str) -> Iterator[str]:
    with Engine(db_url) as engine:

        @engine.workflow()
        def job(ctx: Context, input: dict[str, int]) -> int:
            return ctx.step("double", lambda: input["n"] * 2)

        engine.schedule("job", {"n": 1}, every="1h", key="hourly")
        handle = engine.start("job", {"n": 2}, run_id="run-1")
        engine.run_until_idle()
        assert handle.result() == 4
    yield db_url


def tickwork(*args: str) -> Result:
    return CliRunner().invoke(main, list(args), catch_exceptions=False)


def test_schedules_list_as_json(url: str) -> None:
    result = tickwork("schedules", "list", "--database", url, "--json")
    assert result.exit_code == 0, result.output
    (schedule,) = json.loads(result.output)["schedules"]  # the API's wrapper
    assert schedule["key"] == "hourly" and schedule["every"] == "1h"
    assert schedule["state"] == "active"


def test_schedules_list_as_table_names_the_key(url: str) -> None:
    result = tickwork("schedules", "list", "--database", url)
    assert result.exit_code == 0
    assert "hourly" in result.output and "every 1 h" in result.output


def test_schedule_state_commands_round_trip(url: str) -> None:
    for action, state in (("pause", "paused"), ("resume", "active"),
                          ("deactivate", "inactive"), ("activate", "active")):  # fmt: skip
        assert tickwork("schedules", action, "hourly", "--database", url).exit_code == 0
        shown = json.loads(
            tickwork("schedules", "show", "hourly", "--database", url, "--json").output
        )
        assert shown["state"] == state


def test_trigger_says_which_run_it_started_or_found(url: str) -> None:
    first = tickwork("schedules", "trigger", "hourly", "--database", url)
    second = tickwork("schedules", "trigger", "hourly", "--database", url, "--json")
    again = tickwork("schedules", "trigger", "hourly", "--database", url)
    assert first.exit_code == second.exit_code == again.exit_code == 0
    run_id = json.loads(second.output)["run_id"]
    assert run_id.startswith("hourly@")
    assert first.output.strip() == f"started run {run_id}"
    assert json.loads(second.output) == {
        "key": "hourly", "run_id": run_id, "started": False, "status": "pending"
    }  # fmt: skip
    assert again.output.strip() == (
        f"occurrence already ran: run {run_id} (pending); --new-run starts a new one"
    )
    history = json.loads(
        tickwork("schedules", "history", "hourly", "--database", url, "--json").output
    )["history"]
    assert [h["decision"] for h in history] == ["already_started"] * 2 + ["triggered"]


def test_trigger_new_run_starts_another_run_of_the_schedule(url: str) -> None:
    first = json.loads(
        tickwork("schedules", "trigger", "hourly", "--database", url, "--json").output
    )
    new = tickwork("schedules", "trigger", "hourly", "--new-run", "--database", url, "--json")
    assert new.exit_code == 0
    started = json.loads(new.output)
    assert started["started"] is True and started["run_id"] != first["run_id"]
    runs = json.loads(tickwork("runs", "list", "--database", url, "--json").output)["runs"]
    assert {r["id"] for r in runs} >= {first["run_id"], started["run_id"]}


def test_unknown_schedule_exits_3(url: str) -> None:
    for command in ("show", "pause", "resume", "activate", "deactivate", "trigger", "delete",
                    "history"):  # fmt: skip
        result = tickwork("schedules", command, "nope", "--database", url)
        assert result.exit_code == 3, (command, result.output)
        assert "no schedule 'nope'" in result.output


def test_delete_removes_the_schedule(url: str) -> None:
    assert tickwork("schedules", "delete", "hourly", "--database", url).exit_code == 0
    listed = json.loads(tickwork("schedules", "list", "--database", url, "--json").output)
    assert listed == {"schedules": [], "not_registered": []}


def test_runs_list_show_and_cancel(url: str) -> None:
    runs = json.loads(tickwork("runs", "list", "--database", url, "--json").output)["runs"]
    assert [r["id"] for r in runs] == ["run-1"]
    shown = json.loads(tickwork("runs", "show", "run-1", "--database", url, "--json").output)
    assert shown["result"] == 4 and [s["name"] for s in shown["steps"]] == ["double"]
    table = tickwork("runs", "show", "run-1", "--database", url)
    assert "double" in table.output
    finished = tickwork("runs", "cancel", "run-1", "--database", url)
    assert finished.exit_code == 3
    filtered = tickwork("runs", "list", "--status", "failed", "--database", url, "--json")
    nothing = {"runs": [], "next_before": None, "next_offset": None}
    assert json.loads(filtered.output) == nothing
    after = tickwork("runs", "list", "--before", "run-1", "--database", url, "--json")
    assert json.loads(after.output) == nothing


def test_bad_database_url_exits_2(tmp_path: Path) -> None:
    result = tickwork("schedules", "list", "--database", "mysql://nope")
    assert result.exit_code == 2 and "error:" in result.output


def test_database_comes_from_the_environment(url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TICKWORK_DATABASE_URL", url)
    result = tickwork("runs", "list", "--json")
    assert [r["id"] for r in json.loads(result.output)["runs"]] == ["run-1"]


def test_db_upgrade_reports_the_schema_version(db_url: str) -> None:
    result = tickwork("db", "upgrade", "--database", db_url)
    latest = migrations.pending("sqlite", 0)[-1][0]  # both dialects have the same versions
    assert result.exit_code == 0 and f"schema version {latest}" in result.output


def test_tick_registers_declared_schedules_and_fires_due_ones(db_url: str, tmp_path: Path) -> None:
    app = tmp_path / "app.py"
    app.write_text(APP.format(url=db_url))
    first = tickwork("tick", f"{app}:engine")
    assert first.exit_code == 0 and first.output == ""  # registered, nothing due yet
    with Engine(db_url) as engine:
        assert [s.key for s in engine.list_schedules()] == ["tick-tock"]


def test_app_that_cannot_be_loaded_is_a_usage_error(tmp_path: Path) -> None:
    for spec in ("no-colon", f"{tmp_path / 'missing.py'}:engine", "json:dumps"):
        result = CliRunner().invoke(main, ["tick", spec])
        assert result.exit_code == 2, (spec, result.output)


def test_runs_list_escapes_control_characters_and_markup_in_what_it_prints(
    sqlite_url: str,
) -> None:
    """A run id stored before control characters were refused (or written by hand) cannot
    reach the operator's terminal as an escape sequence, nor style the table."""
    with Engine(sqlite_url) as engine:

        @engine.workflow()
        def job(ctx: Context) -> None:
            return None

        engine.start("job", run_id="run-1")
    with sqlite3.connect(sqlite_url.removeprefix("sqlite:///")) as conn:
        conn.execute(
            "UPDATE tickwork_runs SET id = ?, workflow = ? WHERE id = 'run-1'",
            ("\x1b[2Jevil", "[red]job[/red]"),
        )
    result = CliRunner().invoke(
        main, ["runs", "list", "--database", sqlite_url], env={"COLUMNS": "300"}
    )
    assert result.exit_code == 0, result.output
    assert "\x1b" not in result.output
    assert "\\x1b[2Jevil" in result.output and "[red]job[/red]" in result.output
