"""What the CLI prints for people: JSON values as JSON, durations as ``1h30m``, and ids and
keys whole at any terminal width (so they can be pasted into the next command)."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator

import pytest
from click.testing import CliRunner, Result

from tickwork import Context, Engine
from tickwork.cli import main
from tickwork.testing import FakeClock

LONG_KEY = "nightly-export-of-every-table-of-the-warehouse-to-the-archive-bucket"


def tickwork(*args: str, columns: int = 80) -> Result:
    return CliRunner().invoke(main, list(args), env={"COLUMNS": str(columns)})


@pytest.fixture
def url(sqlite_url: str, clock: FakeClock) -> Iterator[str]:
    with Engine(sqlite_url, clock=clock) as engine:

        def slow() -> str:
            clock.advance("1h30m")  # this step takes an hour and a half
            return "done"

        @engine.workflow()
        def report(ctx: Context, input: dict[str, str]) -> dict[str, object]:
            rows = ctx.step("gather", lambda: [{"day": input["day"]}])
            ctx.step("slow", slow)
            ctx.sleep("cool-down", "1s")
            return {"rows": len(rows), "ok": True}

        @engine.workflow()
        def sync(ctx: Context) -> str:
            return "synced"

        engine.start("report", {"day": "2026-03-01"}, run_id="report-1")
        engine.schedule("sync", every="5s", key="sync-5s")
        engine.schedule("sync", every="1h", key=LONG_KEY)
        engine.schedule("report", {"day": "today"}, every="1d", key="with-input")
        engine.run_until_idle()
        clock.advance("1h")
        engine.tick()
        engine.run_until_idle()
    yield sqlite_url


def test_runs_show_prints_json_values_as_json_and_durations_for_people(
    url: str,
) -> None:
    result = tickwork("runs", "show", "report-1", "--database", url, columns=200)
    assert result.exit_code == 0, result.output
    out = result.output
    assert '{"day": "2026-03-01"}' in out  # the input, as JSON
    assert '{"ok": true, "rows": 1}' in out or '{"rows": 1, "ok": true}' in out
    assert '[{"day": "2026-03-01"}]' in out and '"done"' in out  # step results, as JSON
    assert "1 h 30 min" in out  # the slow step's duration
    assert "slept 1 s" in out  # a durable sleep that is over: how long it slept
    assert "{'" not in out and "True" not in out  # no Python reprs
    assert not re.search(r"\d:\d\d:\d\d(\.\d+)?\s", out)  # no timedelta reprs (0:00:00.5)


def test_runs_show_says_when_a_sleep_wakes_and_what_now_read(
    sqlite_url: str, clock: FakeClock
) -> None:
    with Engine(sqlite_url, clock=clock) as engine:

        @engine.workflow()
        def waits(ctx: Context) -> None:
            ctx.now()
            ctx.sleep("cool-down", "30m")

        engine.start("waits", run_id="waits-1")
        engine.run_until_idle()
        out = tickwork("runs", "show", "waits-1", "--database", sqlite_url, columns=200).output
        assert "2026-03-01T12:00:00.000Z" in out  # what now() read, as an instant
        assert "wakes at 2026-03-01T12:30:00.000Z" in out
        assert re.search(r"cool-down\s+│?\s*sleep\s+│?\s*sleeping", out), out
        assert "1772" not in out  # no epoch milliseconds
        clock.advance("31m")
        engine.run_until_idle()
        out = tickwork("runs", "show", "waits-1", "--database", sqlite_url, columns=200).output
        assert "slept 30 min" in out and "wakes at" not in out


def test_schedules_show_prints_the_input_as_json(url: str) -> None:
    result = tickwork("schedules", "show", "with-input", "--database", url, columns=200)
    assert result.exit_code == 0, result.output
    assert '{"day": "today"}' in result.output and "{'day'" not in result.output


def test_json_output_is_the_api_wire_format(url: str) -> None:
    shown = json.loads(tickwork("runs", "show", "report-1", "--database", url, "--json").output)
    assert shown["input"] == {"day": "2026-03-01"} and shown["result"] == {"rows": 1, "ok": True}
    assert shown["created_at"].endswith("Z")


@pytest.mark.parametrize("columns", [60, 80, 120, 250])
def test_runs_list_prints_every_id_whole_at_any_width(url: str, columns: int) -> None:
    with Engine(url) as engine:
        ids = [run.id for run in engine.list_runs()]
    assert any(i.startswith(f"{LONG_KEY}@") for i in ids) and "report-1" in ids
    result = tickwork("runs", "list", "--database", url, columns=columns)
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    for run_id in ids:
        assert any(run_id in line for line in lines), (run_id, result.output)
    assert "…" not in result.output


@pytest.mark.parametrize("columns", [60, 80])
def test_schedule_keys_and_history_run_ids_are_whole_at_80_columns(url: str, columns: int) -> None:
    listed = tickwork("schedules", "list", "--database", url, columns=columns)
    assert any(LONG_KEY in line for line in listed.output.splitlines()), listed.output
    history = tickwork("schedules", "history", LONG_KEY, "--database", url, columns=columns)
    with Engine(url) as engine:
        (entry, *_) = engine.schedule_history(LONG_KEY)
    assert entry.run_id is not None
    assert any(entry.run_id in line for line in history.output.splitlines()), history.output
    shown = tickwork("runs", "show", entry.run_id, "--database", url, columns=columns)
    assert any(entry.run_id in line for line in shown.output.splitlines()), shown.output
    assert "…" not in listed.output + history.output + shown.output


def test_a_wide_terminal_gets_a_table(url: str) -> None:
    result = tickwork("runs", "list", "--database", url, columns=250)
    assert "┃ id" in result.output and "report-1" in result.output
