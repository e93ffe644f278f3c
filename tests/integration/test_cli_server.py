"""``tickwork apikey create|list|revoke`` and ``tickwork serve``'s arguments."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result
from starlette.applications import Starlette

from tickwork import Engine
from tickwork.cli import main, serve

APP = """
from tickwork import Context, Engine

engine = Engine({url!r})

@engine.workflow()
def job(ctx: Context) -> str:
    return "done"
"""


def tickwork(*args: str) -> Result:
    return CliRunner().invoke(main, list(args), catch_exceptions=False)


def test_apikey_create_prints_the_key_alone_on_its_last_line(db_url: str) -> None:
    result = tickwork("apikey", "create", "ci", "--database", db_url)
    assert result.exit_code == 0, result.output
    key = result.output.splitlines()[-1]
    assert key.startswith("tw_") and " " not in key
    with Engine(db_url) as engine:
        assert engine.verify_api_key(key) is not None


def test_apikey_create_as_json_gives_the_key(db_url: str) -> None:
    created = json.loads(tickwork("apikey", "create", "ci", "--database", db_url, "--json").output)
    assert set(created) == {"id", "name", "key"} and created["name"] == "ci"
    with Engine(db_url) as engine:
        assert engine.verify_api_key(created["key"]) == created["id"]


def test_apikey_names_are_unique_among_live_keys(db_url: str) -> None:
    assert tickwork("apikey", "create", "ci", "--database", db_url).exit_code == 0
    again = tickwork("apikey", "create", "ci", "--database", db_url)
    assert again.exit_code == 2 and "error:" in again.output


def test_apikey_list_never_shows_a_secret(db_url: str) -> None:
    key = tickwork("apikey", "create", "ci", "--database", db_url).output.splitlines()[-1]
    secret = key.split("_", 2)[2]
    table = tickwork("apikey", "list", "--database", db_url)
    listed = json.loads(tickwork("apikey", "list", "--database", db_url, "--json").output)
    assert "ci" in table.output and secret not in table.output
    assert [(k["name"], k["revoked_at"]) for k in listed] == [("ci", None)]
    assert set(listed[0]) == {"id", "name", "created_at", "revoked_at"}
    assert secret not in json.dumps(listed)


def test_apikey_revoke_by_name_or_id_and_exit_3_when_none(db_url: str) -> None:
    tickwork("apikey", "create", "ci", "--database", db_url)
    assert tickwork("apikey", "revoke", "ci", "--database", db_url).exit_code == 0
    again = tickwork("apikey", "revoke", "ci", "--database", db_url)
    assert again.exit_code == 3 and "no live API key 'ci'" in again.output
    created = json.loads(tickwork("apikey", "create", "ops", "--database", db_url, "--json").output)
    assert tickwork("apikey", "revoke", created["id"], "--database", db_url).exit_code == 0
    listed = json.loads(tickwork("apikey", "list", "--database", db_url, "--json").output)
    assert all(k["revoked_at"] is not None for k in listed)


def test_apikey_database_comes_from_the_environment(
    db_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TICKWORK_DATABASE_URL", db_url)
    assert tickwork("apikey", "create", "env").exit_code == 0
    with Engine(db_url) as engine:
        assert [k.name for k in engine.list_api_keys()] == ["env"]


@pytest.fixture
def app_file(sqlite_url: str, tmp_path: Path) -> str:
    path = tmp_path / "app.py"
    path.write_text(APP.format(url=sqlite_url))
    return f"{path}:engine"


@pytest.fixture
def served(monkeypatch: pytest.MonkeyPatch) -> list[dict[str, Any]]:
    """What ``tickwork serve`` would have run, instead of running it."""
    calls: list[dict[str, Any]] = []

    def fake_run(app: Any, **options: Any) -> None:
        workers = [t.name for t in threading.enumerate() if t.name == "tickwork-worker"]
        calls.append({"app": app, "worker_running": bool(workers), **options})

    def fake_listen(host: str, port: int) -> socket.socket:
        return socket.socket()  # bound to nothing: 8787 may be another test's

    monkeypatch.setattr(serve, "_run", fake_run)
    monkeypatch.setattr(serve, "_listen", fake_listen)
    return calls


def test_serve_binds_loopback_port_8787_by_default(app_file: str, served: list[Any]) -> None:
    result = tickwork("serve", app_file)
    assert result.exit_code == 0, result.output
    (call,) = served
    assert (call["host"], call["port"], call["worker_running"]) == ("127.0.0.1", 8787, False)
    assert isinstance(call["app"], Starlette)
    assert "/api/v1" in {getattr(route, "path", None) for route in call["app"].routes}


def test_serve_warns_when_listening_beyond_this_machine(app_file: str, served: list[Any]) -> None:
    result = CliRunner().invoke(main, ["serve", app_file, "--host", "0.0.0.0", "--port", "9000"])
    assert result.exit_code == 0
    assert (served[0]["host"], served[0]["port"]) == ("0.0.0.0", 9000)
    assert "reachable from other machines" in result.output


def test_serve_with_worker_runs_one_while_serving(app_file: str, served: list[Any]) -> None:
    assert tickwork("serve", app_file, "--worker", "--threads", "2").exit_code == 0
    assert served[0]["worker_running"] is True
    assert not any(t.name == "tickwork-worker" for t in threading.enumerate())  # stopped


def test_serve_without_dashboard(app_file: str, served: list[Any]) -> None:
    assert tickwork("serve", app_file, "--no-dashboard").exit_code == 0
    paths = {getattr(route, "path", None) for route in served[0]["app"].routes}
    assert paths == {"/healthz", "/metrics", "/api/v1"}


@pytest.mark.parametrize(
    "args",
    [["serve"], ["serve", "no-colon"], ["serve", "json:dumps"], ["serve", "APP", "--port", "-1"],
     ["serve", "APP", "--port", "http"], ["serve", "APP", "--log-level", "LOUD"]],
)  # fmt: skip
def test_serve_refuses_bad_arguments(app_file: str, served: list[Any], args: list[str]) -> None:
    result = CliRunner().invoke(main, [app_file if a == "APP" else a for a in args])
    assert result.exit_code == 2, result.output
    assert served == []


def test_serve_on_a_port_in_use_says_so_in_one_line_and_exits_2(
    app_file: str, sqlite_url: str
) -> None:
    with socket.socket() as held:
        held.bind(("127.0.0.1", 0))
        held.listen()
        port = held.getsockname()[1]
        result = subprocess.run(
            [Path(sys.executable).parent / "tickwork", "serve", app_file, "--port", str(port)],
            capture_output=True,
            text=True,
            timeout=60,
            env={k: v for k, v in os.environ.items() if k != "TICKWORK_DATABASE_URL"},
        )
    assert result.returncode == 2, result.stderr
    assert result.stderr == (
        f"error: cannot listen on 127.0.0.1:{port}: the port is in use (--host/--port)\n"
    )
    assert result.stdout == ""


DECLARING_APP = """
from tickwork import Context, Engine, Every, On

engine = Engine({url!r})

@engine.workflow("beat", schedule=Every("5s", key="beat"))
def beat(ctx: Context) -> str:
    return "done"

@engine.workflow("welcome", on=On("user.signed_up"))
def welcome(ctx: Context, input: dict) -> str:
    return "hi"
"""


def test_serve_without_worker_registers_the_declared_schedules_firing_nothing(
    sqlite_url: str, tmp_path: Path, served: list[Any]
) -> None:
    # The README's path: `tickwork serve app:engine`, then curl the schedules.
    path = tmp_path / "declaring.py"
    path.write_text(DECLARING_APP.format(url=sqlite_url))
    result = tickwork("serve", f"{path}:engine")
    assert result.exit_code == 0, result.output
    assert served[0]["worker_running"] is False
    with Engine(sqlite_url) as engine:
        assert [s.key for s in engine.list_schedules()] == ["beat"]
        assert [s.workflow for s in engine.list_subscriptions()] == ["welcome"]
        assert engine.list_runs() == []  # registered, not fired


def test_help_lists_serve_and_apikey() -> None:
    output = tickwork("--help").output
    assert "serve" in output and "apikey" in output
