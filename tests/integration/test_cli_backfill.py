"""``tickwork schedules backfill KEY --from T --to T [--overlap P]``: how many started and
which runs, JSON for scripts, refusals as one line with nothing stored."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest
from click.testing import CliRunner, Result

from tickwork import Context, Engine
from tickwork.cli import main


@pytest.fixture
def url(db_url: str) -> Iterator[str]:
    with Engine(db_url) as engine:

        @engine.workflow()
        def job(ctx: Context) -> None:
            return None

        engine.schedule("job", None, every="1h", key="hourly", overlap="skip")
    yield db_url


def tickwork(*args: str) -> Result:
    return CliRunner().invoke(main, list(args))


def runs_of(url: str) -> list[str]:
    with Engine(url) as engine:
        return [r.id for r in engine.list_runs(schedule_key="hourly")]


def test_backfill_prints_how_many_and_the_run_ids(url: str) -> None:
    result = tickwork(
        "schedules", "backfill", "hourly", "--from", "2020-01-01", "--to", "2020-01-01T03:00Z",
        "--overlap", "allow", "--database", url,
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert lines[0] == "hourly: backfilled 3 occurrence(s): 3 started, 0 already had runs"
    ids = [line.strip() for line in lines[1:]]
    assert sorted(ids) == sorted(runs_of(url)) and len(ids) == 3
    assert all(i.startswith("hourly@2020-01-01T0") for i in ids)


def test_backfill_as_json_is_idempotent(url: str) -> None:
    args = ["schedules", "backfill", "hourly", "--from", "2020-01-01T00:00:00+00:00",
            "--to", "2020-01-01T05:00Z", "--overlap", "buffer_all", "--database", url,
            "--json"]  # fmt: skip
    first = json.loads(tickwork(*args).output)
    second = json.loads(tickwork(*args).output)
    assert first["run_ids"] == second["run_ids"] and first["key"] == "hourly"
    assert (first["count"], first["started"], first["already_had_runs"]) == (5, 5, 0)
    assert (second["count"], second["started"], second["already_had_runs"]) == (5, 0, 5)
    assert runs_of(url) == [first["run_ids"][0]]  # buffer_all: one at a time


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["hourly", "--from", "2020-01-02", "--to", "2020-01-01"], "later than its start"),
        (["hourly", "--from", "2000-01-01", "--to", "2020-01-01"], "100,000"),
        (["hourly", "--from", "yesterday", "--to", "2020-01-01"], "ISO 8601"),
        (["hourly", "--from", "2020-01-01", "--to", "2020-01-02", "--overlap", "x"], "x"),
        (["nope", "--from", "2020-01-01", "--to", "2020-01-02"], "no schedule"),
    ],
)
def test_bad_backfill_is_one_line_and_stores_nothing(
    url: str, args: list[str], message: str
) -> None:
    result = tickwork("schedules", "backfill", *args, "--database", url)
    assert result.exit_code != 0
    assert message in result.output
    assert "Traceback" not in result.output
    assert runs_of(url) == []
