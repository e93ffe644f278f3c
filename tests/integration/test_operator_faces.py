"""What the CLI, the HTTP API and the dashboard tell an operator alike (issue 28): the CLI's
``--json`` is the API's JSON for the same store, "not found" names the database and the
closest key, a backfill says how many it started and how many had runs, a state change
that changes nothing says so, and the Runs page shows failed runs' errors."""

from __future__ import annotations

import asyncio
import html
import json
import re
from collections.abc import Iterator
from contextlib import ExitStack
from typing import Any

import httpx
import pytest
from click.testing import CliRunner
from tests.browser import Browser

from tickwork import Context, Engine, Retry
from tickwork.cli import main
from tickwork.errors import ConfigError
from tickwork.server import create_app


@pytest.fixture
def engine(db_url: str) -> Iterator[Engine]:
    """On the real clock, as the CLI is: a schedule, two runs (one failed), history."""
    with Engine(db_url) as engine:

        @engine.workflow()
        def report(ctx: Context, input: dict[str, int] | None = None) -> int:
            return ctx.step("count", lambda: 3)

        @engine.workflow(retry=Retry(max_attempts=1))
        def flaky(ctx: Context) -> None:
            raise ValueError("the warehouse refused the export\nsecond line")

        engine.schedule("report", {"n": 1}, every="1h", key="nightly-report")
        engine.schedule("report", None, cron="0 9 * * *", timezone="Europe/London", key="daily")
        engine.start("report", {"n": 2}, run_id="ok-1")
        engine.start("flaky", run_id="bad-1")
        engine.run_until_idle()
        engine.trigger("nightly-report")
        yield engine


def cli_json(engine: Engine, *args: str) -> Any:
    database = [] if args[0] == "cron" else ["--database", engine.url]  # cron opens none
    result = CliRunner().invoke(main, [*args, *database, "--json"])
    assert result.exit_code == 0, result.output
    return json.loads(result.output)


class Api:
    def __init__(self, engine: Engine) -> None:
        self.app = create_app(engine)
        self.key = engine.create_api_key("operator-tests")

    def call(self, method: str, path: str, **kwargs: Any) -> httpx.Response:
        async def send() -> httpx.Response:
            transport = httpx.ASGITransport(app=self.app)
            async with httpx.AsyncClient(transport=transport, base_url="http://t") as client:
                headers = {"Authorization": f"Bearer {self.key}"}
                return await client.request(method, "/api/v1" + path, headers=headers, **kwargs)

        return asyncio.run(send())

    def json(self, path: str, **params: Any) -> Any:
        response = self.call("GET", path, params=params)
        assert response.status_code == 200, response.text
        return response.json()


@pytest.fixture
def api(engine: Engine) -> Api:
    return Api(engine)


# -- 3. --json is the API's JSON --------------------------------------------------------


def test_the_clis_json_is_the_apis_json_for_the_same_store(engine: Engine, api: Api) -> None:
    """Every reading command's --json equals the API's answer to the same question: the
    same wrapper objects (``schedules``, ``runs`` with ``next_before``, ``history``,
    ``workers``) and the same items."""
    pairs = [
        (cli_json(engine, "schedules", "list"), api.json("/schedules")),
        (cli_json(engine, "schedules", "show", "daily"), api.json("/schedules/daily")),
        (
            cli_json(engine, "schedules", "history", "nightly-report", "-n", "5"),
            api.json("/schedules/nightly-report/history", limit=5),
        ),
        (cli_json(engine, "runs", "list", "-n", "1"), api.json("/runs", limit=1)),
        (cli_json(engine, "runs", "list"), api.json("/runs", limit=50)),
        (cli_json(engine, "runs", "show", "ok-1"), api.json("/runs/ok-1")),
        (cli_json(engine, "workers"), api.json("/workers")),
        (
            cli_json(engine, "cron", "0 9 * * *", "--tz", "Europe/London", "--after",
                     "2026-03-27T12:00Z", "-n", "3"),
            api.json("/cron/preview", cron="0 9 * * *", timezone="Europe/London",
                     after="2026-03-27T12:00Z", count=3),
        ),
    ]  # fmt: skip
    for from_cli, from_api in pairs:
        assert from_cli == from_api
    first_page = pairs[3][0]
    assert len(first_page["runs"]) == 1 and first_page["next_before"] is not None


def test_trigger_and_backfill_json_are_the_apis(engine: Engine, api: Api) -> None:
    """Writing commands answer with the API's objects too (the run the occurrence has;
    the backfill's run ids and counts)."""
    from_cli = cli_json(engine, "schedules", "trigger", "nightly-report")
    from_api = api.call("POST", "/schedules/nightly-report/trigger").json()
    assert from_cli == from_api and from_cli["started"] is False
    span = ["--from", "2026-01-01T00:00Z", "--to", "2026-01-01T03:00Z"]
    from_cli = cli_json(engine, "schedules", "backfill", "nightly-report", *span)
    body = {"start": "2026-01-01T00:00:00Z", "end": "2026-01-01T03:00:00Z"}
    from_api = api.call("POST", "/schedules/nightly-report/backfill", json=body).json()
    assert from_api.keys() == from_cli.keys()
    assert from_api["run_ids"] == from_cli["run_ids"]


# -- 2. not found, through the API ------------------------------------------------------


def test_the_apis_not_found_names_the_database_and_the_closest_key(
    engine: Engine, api: Api
) -> None:
    """404 SCHEDULE_NOT_FOUND says where it looked and the key that was probably meant."""
    response = api.call("POST", "/schedules/nightly-reprot/pause")
    assert response.status_code == 404
    error = response.json()["error"]
    assert error["code"] == "SCHEDULE_NOT_FOUND"
    assert error["message"] == (
        f"No schedule 'nightly-reprot' in {engine.url}; did you mean 'nightly-report'?"
    )
    missing_run = api.call("GET", "/runs/nope").json()["error"]["message"]
    assert missing_run == f"No run 'nope' in {engine.url}"


def test_schedule_keys_reads_the_first_keys_in_order_and_refuses_a_bad_limit(
    engine: Engine,
) -> None:
    """What the dashboard suggests and a "did you mean" looks through: keys alone."""
    assert engine.console.schedule_keys() == ["daily", "nightly-report"]
    assert engine.console.schedule_keys(1) == ["daily"]
    for bad in (0, True, "1", 10_001):
        with pytest.raises(ConfigError, match="limit must be an int"):
            engine.console.schedule_keys(bad)  # type: ignore[arg-type]


# -- 4. backfill counts -------------------------------------------------------------------


def test_backfill_says_how_many_it_started_and_how_many_had_runs(engine: Engine, api: Api) -> None:
    """The API keeps its fields and adds the counts; the CLI says them; a second backfill
    over a wider span starts only the new occurrences."""
    body = {"start": "2026-01-01T00:00:00Z", "end": "2026-01-01T02:00:00Z", "overlap": "allow"}
    first = api.call("POST", "/schedules/nightly-report/backfill", json=body).json()
    assert (first["count"], first["started"], first["already_had_runs"]) == (2, 2, 0)
    result = CliRunner().invoke(main, [
        "schedules", "backfill", "nightly-report", "--from", "2026-01-01T00:00Z",
        "--to", "2026-01-01T03:00Z", "--overlap", "allow", "--database", engine.url,
    ])  # fmt: skip
    assert result.exit_code == 0, result.output
    head = result.output.splitlines()[0]
    assert head == "nightly-report: backfilled 3 occurrence(s): 1 started, 2 already had runs"


# -- 5. a state change that changes nothing ---------------------------------------------


def test_the_api_says_a_schedule_was_already_paused(engine: Engine, api: Api) -> None:
    """The state change answers with the schedule, ``changed`` and a ``message``; pausing
    a paused schedule changes nothing, its note included."""
    path = "/schedules/nightly-report/pause"
    first = api.call("POST", path, json={"note": "incident 42"}).json()
    assert (first["state"], first["changed"]) == ("paused", True)
    again = api.call("POST", path, json={"note": "another"}).json()
    assert (again["state"], again["changed"], again["note"]) == ("paused", False, "incident 42")
    assert again["message"] == (
        "nightly-report: already paused, nothing changed (its note stays: 'incident 42')"
    )
    resumed = api.call("POST", "/schedules/daily/resume").json()
    assert resumed["changed"] is False and "already active" in resumed["message"]


def page_text(body: str) -> str:
    words = re.sub(r"<svg.*?</svg>", " ", body, flags=re.S)
    return " ".join(html.unescape(re.sub(r"<[^>]+>", " ", words)).split())


@pytest.fixture
def logged_in(engine: Engine) -> Iterator[Browser]:
    with ExitStack() as stack:
        browser = Browser(create_app(engine), stack)
        assert browser.login(engine.create_api_key("dashboard")).status_code == 303
        yield browser


def test_the_dashboard_says_already_paused_and_backfill_counts(logged_in: Browser) -> None:
    """The flash after a second Pause says nothing changed; after a backfill, how many
    it started and how many had runs."""
    logged_in.act("nightly-report", "pause", note="incident 42")
    logged_in.act("nightly-report", "pause")
    said = page_text(logged_in.get("/").text)
    assert (
        "nightly-report: already paused, nothing changed (its note stays: 'incident 42')." in said
    )
    span = {"from": "2026-01-01T00:00", "to": "2026-01-01T02:00", "overlap": "allow"}
    logged_in.act("nightly-report", "backfill", **span)
    logged_in.act("nightly-report", "backfill", **{**span, "to": "2026-01-01T03:00"})
    said = page_text(logged_in.get("/").text)
    assert "nightly-report: backfilled 3 occurrence(s): 1 started, 2 already had runs" in said


# -- 7. the Runs page shows failed runs' errors -----------------------------------------


def test_the_runs_page_shows_the_first_line_of_a_failed_runs_error(logged_in: Browser) -> None:
    """The Runs page has an Error column: the failed run's first line, not the rest."""
    page = logged_in.get("/runs")
    assert page.status_code == 200
    said = page_text(page.text)
    assert "Error" in said and "the warehouse refused the export" in said
    row = page.text[page.text.index("bad-1") :]
    row = row[: row.index("</tr>")]
    assert "the warehouse refused the export" in row
    assert "second line" not in page_text(row)
