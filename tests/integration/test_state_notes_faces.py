"""Notes on state changes and ``pause_after_failures`` on every face but the engine's
(DESIGN §3, §5): the HTTP API (an optional ``{"note": ...}`` body; the schedule's JSON), its
OpenAPI document, ``Client`` (the engine's signatures and results) and the CLI
(``--note``)."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from datetime import timedelta

import pytest
import uvicorn
from click.testing import CliRunner, Result
from tests.integration.test_api import Api, error_of

from tickwork import Client, ConfigError, Context, Engine
from tickwork.cli import main
from tickwork.server import create_app
from tickwork.server.openapi import openapi_document
from tickwork.testing import FakeClock


@pytest.fixture
def app_engine(engine: Engine) -> Engine:
    @engine.workflow()
    def job(ctx: Context) -> None:
        return None

    engine.schedule("job", every="1h", key="hourly", pause_after_failures=3)
    return engine


@pytest.fixture
def api(app_engine: Engine) -> Api:
    return Api(create_app(app_engine), app_engine.create_api_key("tests"))


# -- HTTP API ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("action", "state", "decision"),
    [("pause", "paused", "paused"), ("deactivate", "inactive", "deactivated")],
)
def test_a_state_route_takes_a_note_and_answers_with_it(
    api: Api, clock: FakeClock, action: str, state: str, decision: str
) -> None:
    clock.advance(timedelta(minutes=5))
    response = api.post(f"/api/v1/schedules/hourly/{action}", json={"note": "incident 42"})
    assert response.status_code == 200, response.text
    body = response.json()
    assert (body["state"], body["note"]) == (state, "incident 42")
    assert body["state_changed_at"] == "2026-03-01T12:05:00.000Z"
    assert body["pause_after_failures"] == 3
    history = api.get("/api/v1/schedules/hourly/history").json()["history"]
    assert [(h["decision"], h["reason"]) for h in history] == [(decision, "incident 42")]


def test_a_state_route_without_a_body_changes_the_state_without_a_note(api: Api) -> None:
    api.post("/api/v1/schedules/hourly/pause", json={"note": "why"})
    body = api.post("/api/v1/schedules/hourly/resume").json()
    assert (body["state"], body["note"]) == ("active", None)
    assert api.post("/api/v1/schedules/hourly/pause", json={}).json()["note"] is None


def test_a_bad_note_is_refused_by_the_api_and_changes_nothing(api: Api) -> None:
    too_long = api.post("/api/v1/schedules/hourly/pause", json={"note": "x" * 1001})
    assert too_long.status_code == 400 and error_of(too_long)["code"] == "CONFIG_ERROR"
    not_text = api.post("/api/v1/schedules/hourly/pause", json={"note": 42})
    assert not_text.status_code == 422
    unknown = api.post("/api/v1/schedules/hourly/pause", json={"why": "x"})
    assert unknown.status_code == 422
    assert api.get("/api/v1/schedules/hourly").json()["state"] == "active"


def test_a_note_on_an_unknown_schedule_is_404(api: Api) -> None:
    response = api.post("/api/v1/schedules/nope/pause", json={"note": "why"})
    assert response.status_code == 404 and error_of(response)["code"] == "SCHEDULE_NOT_FOUND"


def test_the_api_registers_pause_after_failures(api: Api) -> None:
    body = {"workflow": "job", "every": "10m", "key": "k", "pause_after_failures": 2}
    response = api.post("/api/v1/schedules", json=body)
    assert response.status_code == 200, response.text
    assert response.json()["schedule"]["pause_after_failures"] == 2
    bad = api.post("/api/v1/schedules", json={**body, "pause_after_failures": 0})
    assert bad.status_code == 400 and "pause_after_failures" in error_of(bad)["message"]


def test_the_openapi_document_describes_notes_and_the_option() -> None:
    document = openapi_document()
    schemas = document["components"]["schemas"]
    assert {"note", "state_changed_at", "pause_after_failures"} <= set(
        schemas["Schedule"]["properties"]
    )
    assert "note" in schemas["StateChange"]["properties"]
    for action in ("pause", "resume", "deactivate", "activate"):
        operation = document["paths"][f"/api/v1/schedules/{{key}}/{action}"]["post"]
        body = operation["requestBody"]
        assert body["required"] is False
        assert body["content"]["application/json"]["schema"]["$ref"].endswith("/StateChange")


# -- Client ------------------------------------------------------------------------------


@pytest.fixture
def client(app_engine: Engine) -> Iterator[Client]:
    config = uvicorn.Config(
        create_app(app_engine, dashboard=False), host="127.0.0.1", port=0,
        log_level="warning", lifespan="off", ws="none",
    )  # fmt: skip
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, name="uvicorn", daemon=True)
    thread.start()
    deadline = time.monotonic() + 10
    while not server.started:
        assert thread.is_alive() and time.monotonic() < deadline, "the server did not start"
        time.sleep(0.01)
    port = server.servers[0].sockets[0].getsockname()[1]
    key = app_engine.create_api_key("client")
    try:
        with Client(f"http://127.0.0.1:{port}", api_key=key, timeout=10) as client:
            yield client
    finally:
        server.should_exit = True
        thread.join(10)


def test_client_notes_give_the_engines_results(
    client: Client, app_engine: Engine, clock: FakeClock
) -> None:
    clock.advance(timedelta(minutes=1))
    assert client.pause("hourly", note="incident 42") is True
    info = client.get_schedule("hourly")
    assert info == app_engine.get_schedule("hourly")
    assert info is not None and info.note == "incident 42" and info.state_changed_at == clock.now()
    assert client.schedule_history("hourly") == app_engine.schedule_history("hourly")
    assert client.resume("hourly") is True
    assert app_engine.get_schedule("hourly").note is None  # type: ignore[union-attr]
    assert client.deactivate("nope", note="why") is False


def test_client_refuses_a_bad_note_as_the_engine_does(client: Client, app_engine: Engine) -> None:
    with pytest.raises(ConfigError, match="note"):
        client.pause("hourly", note="two\nlines")
    with pytest.raises(ConfigError, match="pause_after_failures"):
        client.schedule("job", every="1h", key="k", pause_after_failures=0)
    assert app_engine.get_schedule("hourly").state == "active"  # type: ignore[union-attr]


def test_client_registers_pause_after_failures_as_the_engine_would(
    client: Client, app_engine: Engine
) -> None:
    assert client.schedule("job", every="10m", key="k", pause_after_failures=2) == "k"
    stored = app_engine.get_schedule("k")
    assert stored is not None and stored.pause_after_failures == 2
    assert app_engine.schedule("job", every="10m", key="k", pause_after_failures=2) == "k"
    assert app_engine.get_schedule("k") == stored  # the same definition: unchanged


# -- CLI ---------------------------------------------------------------------------------


@pytest.fixture
def url(db_url: str) -> Iterator[str]:
    with Engine(db_url) as engine:

        @engine.workflow()
        def job(ctx: Context) -> None:
            return None

        engine.schedule("job", every="1h", key="hourly")
        engine.schedule("job", every="2h", key="other")
    yield db_url


def tickwork(*args: str) -> Result:
    return CliRunner().invoke(main, list(args), catch_exceptions=False)


def test_cli_state_commands_take_a_note_shown_by_show_list_and_history(url: str) -> None:
    done = tickwork("schedules", "pause", "hourly", "--note", "incident 42", "--database", url)
    assert done.exit_code == 0 and "incident 42" in done.output
    shown = json.loads(tickwork("schedules", "show", "hourly", "--database", url, "--json").output)
    assert shown["note"] == "incident 42" and shown["state_changed_at"]
    table = tickwork("schedules", "show", "hourly", "--database", url).output
    assert "note" in table and "incident 42" in table
    listed = tickwork("schedules", "list", "--database", url).output
    assert "note" in listed and "incident 42" in listed
    history = tickwork("schedules", "history", "hourly", "--database", url).output
    assert "paused" in history and "incident 42" in history


def test_cli_list_shows_no_note_column_when_nobody_wrote_one(url: str) -> None:
    listed = tickwork("schedules", "list", "--database", url).output
    assert "note" not in listed


def test_cli_refuses_a_bad_note_in_one_line_and_changes_nothing(url: str) -> None:
    result = CliRunner().invoke(
        main, ["schedules", "resume", "hourly", "--note", "x" * 1001, "--database", url]
    )
    assert result.exit_code != 0 and "note" in result.output
    assert "Traceback" not in result.output
    shown = json.loads(tickwork("schedules", "show", "hourly", "--database", url, "--json").output)
    assert shown["note"] is None and shown["state"] == "active"
