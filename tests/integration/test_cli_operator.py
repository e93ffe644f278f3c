"""What an operator reads from the ``tickwork`` command (issue 28): no database created by
a look, "not found" naming the database with the closest key, the same empty answer from
``schedules list`` and ``runs list``, "already paused" said, every state change in the
history, failed runs' errors in ``runs list``, and hints for a misspelt app attribute,
time zone or PostgreSQL schema."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner, Result
from tests.pg import base_url

from tickwork import ConfigError, Context, Engine, Retry, StoreUnreachable
from tickwork.cli import main


def tickwork(*args: str) -> Result:
    return CliRunner().invoke(main, list(args), env={"COLUMNS": "200"})


def run_in(folder: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """``tickwork ARGS`` as a person runs it: a process of its own, in ``folder``, with no
    ``$TICKWORK_DATABASE_URL`` (so the default, ``sqlite:///tickwork.db``, applies)."""
    env = {k: v for k, v in os.environ.items() if k != "TICKWORK_DATABASE_URL"}
    return subprocess.run(
        [sys.executable, "-m", "tickwork", *args],
        cwd=folder, env=env, capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip


@pytest.fixture
def url(db_url: str) -> Iterator[str]:
    """A store with schedule 'nightly-report', one completed run and one failed run."""
    with Engine(db_url) as engine:

        @engine.workflow()
        def report(ctx: Context) -> str:
            return "done"

        @engine.workflow(retry=Retry(max_attempts=1))
        def flaky(ctx: Context) -> None:
            raise ValueError("the warehouse refused the export\n" + "  details " * 50)

        engine.schedule("report", every="1h", key="nightly-report")
        engine.start("report", run_id="ok-1")
        engine.start("flaky", run_id="bad-1")
        engine.run_until_idle()
    yield db_url


# -- 1. a look creates no database -----------------------------------------------------

LOOKS = [
    ["schedules", "list"], ["schedules", "show", "k"], ["schedules", "history", "k"],
    ["runs", "list"], ["runs", "show", "r"], ["workers"], ["db", "stats"],
    ["apikey", "list"], ["schedules", "pause", "k"], ["schedules", "resume", "k"],
    ["schedules", "trigger", "k"], ["schedules", "delete", "k"], ["runs", "cancel", "r"],
    ["schedules", "backfill", "k", "--from", "2026-01-01", "--to", "2026-01-02"],
    ["db", "prune"], ["apikey", "revoke", "ci"],
]  # fmt: skip


@pytest.mark.parametrize("args", LOOKS, ids=[" ".join(a[:2]) for a in LOOKS])
def test_a_command_that_looks_or_acts_on_what_exists_creates_no_database(
    tmp_path: Path, args: list[str]
) -> None:
    """Run in a folder without a database, a reading (or acting) command exits 4 with one
    line naming the missing file, and leaves no tickwork.db behind."""
    done = run_in(tmp_path, *args)
    assert done.returncode == 4, done.stderr
    assert str(tmp_path / "tickwork.db") in done.stderr and "no such file" in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1 and "Traceback" not in done.stderr
    assert list(tmp_path.iterdir()) == []


def test_commands_that_set_a_store_up_create_it(tmp_path: Path) -> None:
    """``db upgrade`` and ``apikey create`` create the default database where they run."""
    assert run_in(tmp_path, "db", "upgrade").returncode == 0
    assert (tmp_path / "tickwork.db").is_file()
    (tmp_path / "tickwork.db").unlink()
    assert run_in(tmp_path, "apikey", "create", "ci").returncode == 0
    assert (tmp_path / "tickwork.db").is_file()
    assert run_in(tmp_path, "schedules", "list").returncode == 0  # now there is one


# -- 2. "not found" names the database; an empty answer has one shape -----------------


def test_an_unknown_key_names_the_database_and_the_closest_key(url: str) -> None:
    """A misspelt key: exit 3, the database it looked in, and the key it probably meant."""
    for command in ("show", "pause", "trigger", "delete", "history"):
        result = tickwork("schedules", command, "nightly-reprot", "--database", url)
        assert result.exit_code == 3, result.output
        assert f"no schedule 'nightly-reprot' in {url}; did you mean 'nightly-report'?" in " ".join(
            result.output.split()
        ), result.output
    far = tickwork("schedules", "show", "zzz", "--database", url)
    assert far.exit_code == 3 and "did you mean" not in far.output
    run = tickwork("runs", "show", "nope", "--database", url)
    assert run.exit_code == 3 and f"no run 'nope' in {url}" in " ".join(run.output.split())


def test_not_found_never_prints_a_postgresql_password(tmp_path: Path) -> None:
    """The database is named by its URL, its password replaced by ***."""
    base = base_url()
    with_password = base.replace("postgres@", "postgres:s3cret@", 1)
    assert "s3cret" in with_password
    result = tickwork("runs", "show", "nope", "--database", with_password)
    assert result.exit_code == 3, result.output
    assert "s3cret" not in result.output and "postgres:***@" in result.output


def test_empty_schedules_and_runs_answer_alike(sqlite_url: str) -> None:
    """Nothing stored: both lists say "No ... in DATABASE." with exit code 0, and their
    --json is the API's wrapper with no items."""
    Engine(sqlite_url).migrate()
    schedules = tickwork("schedules", "list", "--database", sqlite_url)
    runs = tickwork("runs", "list", "--database", sqlite_url)
    assert (schedules.exit_code, runs.exit_code) == (0, 0)
    assert schedules.output == f"No schedules in {sqlite_url}.\n"
    assert runs.output == f"No runs in {sqlite_url}.\n"
    filtered = tickwork("runs", "list", "--status", "failed", "--database", sqlite_url)
    assert filtered.output == f"No runs (status 'failed') in {sqlite_url}.\n"
    as_json = tickwork("schedules", "list", "--database", sqlite_url, "--json")
    assert json.loads(as_json.output) == {"schedules": [], "not_registered": []}
    as_json = tickwork("runs", "list", "--database", sqlite_url, "--json")
    assert json.loads(as_json.output) == {"runs": [], "next_before": None, "next_offset": None}


# -- 5, 6. state changes: "already" said, every change in the history -----------------


def test_pausing_a_paused_schedule_says_so_and_keeps_its_note(url: str) -> None:
    """A second pause changes nothing: it says "already paused" and that the first note
    stays (exit 0); the same for resume, deactivate and activate."""
    key = "nightly-report"
    first = tickwork("schedules", "pause", key, "--note", "incident 42", "--database", url)
    assert first.output == f"{key}: paused (incident 42)\n"
    again = tickwork("schedules", "pause", key, "--note", "another", "--database", url)
    assert again.exit_code == 0
    assert (
        again.output == f"{key}: already paused, nothing changed (its note stays: 'incident 42')\n"
    )
    assert tickwork("schedules", "resume", key, "--database", url).output == f"{key}: resumed\n"
    said = tickwork("schedules", "resume", key, "--database", url).output
    assert said == f"{key}: already active, nothing changed\n"
    said = tickwork("schedules", "activate", key, "--database", url).output
    assert said == f"{key}: already active, nothing changed\n"
    tickwork("schedules", "deactivate", key, "--database", url)
    said = tickwork("schedules", "deactivate", key, "--database", url).output
    assert said == f"{key}: already inactive, nothing changed\n"
    said = tickwork("schedules", "pause", key, "--database", url).output
    assert said == f"{key}: not paused: it is inactive, nothing changed\n"


def test_every_state_change_is_in_the_history_with_or_without_a_note(url: str) -> None:
    """pause without a note, resume with one, deactivate, activate: four entries, newest
    first; a change that changed nothing adds none."""
    key = "nightly-report"
    for args in (["pause"], ["resume", "--note", "fixed"], ["resume"], ["deactivate"],
                 ["activate"]):  # fmt: skip
        assert tickwork("schedules", args[0], key, *args[1:], "--database", url).exit_code == 0
    shown = tickwork("schedules", "history", key, "--database", url, "--json")
    entries = [(e["decision"], e["reason"]) for e in json.loads(shown.output)["history"]]
    assert entries == [("activated", ""), ("deactivated", ""), ("resumed", "fixed"),
                       ("paused", "")]  # fmt: skip


def test_registering_with_paused_is_in_the_history(db_url: str) -> None:
    """A registration whose ``paused=`` changes the state is recorded, saying so."""
    with Engine(db_url) as engine:

        @engine.workflow()
        def report(ctx: Context) -> None:
            return None

        engine.schedule("report", every="1h", key="k")
        engine.schedule("report", every="1h", key="k", paused=True)
        (entry,) = engine.schedule_history("k")
    assert (entry.decision, entry.reason) == ("paused", "registered with paused=True")


# -- 7. failed runs' errors in runs list -----------------------------------------------


def test_runs_list_shows_the_first_line_of_a_failed_runs_error(url: str) -> None:
    """The table has an error column: a failed run's first line, cut short; a completed
    run's cell is empty."""
    result = tickwork("runs", "list", "--database", url)
    assert result.exit_code == 0, result.output
    (line,) = [line for line in result.output.splitlines() if "bad-1" in line]
    assert "the warehouse refused the export" in line and "details" not in line
    (ok,) = [line for line in result.output.splitlines() if "ok-1" in line]
    assert "refused" not in ok


# -- 9. hints ------------------------------------------------------------------------------


def test_a_misspelt_app_attribute_gets_a_did_you_mean(tmp_path: Path) -> None:
    """``tickwork worker app.py:engin``: exit 2, naming the engine the app does have."""
    app = tmp_path / "app.py"
    app.write_text("from tickwork import Engine\nengine = Engine('sqlite://')\n")
    done = run_in(tmp_path, "worker", f"{app}:engin")
    assert done.returncode == 2
    assert "no tickwork Engine named 'engin'; did you mean 'engine'?" in done.stderr


def test_a_misspelt_time_zone_gets_a_did_you_mean(sqlite_url: str) -> None:
    """Registering with "Europe/Londn" is refused naming "Europe/London" (nothing stored);
    so is the zone of ``tickwork cron --tz``."""
    with Engine(sqlite_url) as engine:

        @engine.workflow()
        def report(ctx: Context) -> None:
            return None

        with pytest.raises(ConfigError, match="did you mean 'Europe/London'"):
            engine.schedule("report", cron="0 9 * * *", timezone="Europe/Londn")
        assert engine.list_schedules() == []
    result = tickwork("cron", "0 9 * * *", "--tz", "Europe/Londn")
    assert result.exit_code == 2 and "did you mean 'Europe/London'?" in result.output


@pytest.fixture
def missing_schema_url() -> str:
    separator = "&" if "?" in base_url() else "?"
    return f"{base_url()}{separator}options=-csearch_path%3Dtickwork_nosuch"


def test_a_postgresql_schema_that_does_not_exist_is_one_clear_line(
    missing_schema_url: str,
) -> None:
    """A URL whose search_path names no existing schema: from the CLI, exit 4 and one line
    naming the schema; from Python, ``StoreUnreachable`` saying the same (no raw SQL)."""
    result = tickwork("schedules", "list", "--database", missing_schema_url)
    assert result.exit_code == 4
    assert len(result.output.strip().splitlines()) == 1, result.output
    assert "tickwork_nosuch" in result.output and "CREATE" not in result.output
    with pytest.raises(StoreUnreachable, match="tickwork_nosuch"):
        Engine(missing_schema_url).list_schedules()
