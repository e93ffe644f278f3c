"""The commands that load an APP (``worker``, ``tick``, ``serve``, ``runs start``) take
``--database`` like every other command, and ``runs start`` starts (and waits for) a run."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from click.testing import CliRunner, Result

from tickwork import Context, Engine, RunStatus
from tickwork.cli import main, serve

APP = """
from tickwork import Context, Engine, Every

engine = Engine({url})


@engine.workflow(schedule=Every("1h", key="hourly"))
def job(ctx: Context) -> str:
    return "done"


@engine.workflow()
def double(ctx: Context, input: dict[str, int]) -> int:
    return input["n"] * 2


@engine.workflow()
def boom(ctx: Context) -> None:
    raise RuntimeError("kaboom")
"""


def tickwork(*args: str) -> Result:
    return CliRunner().invoke(main, list(args))


def app_file(folder: Path, url: str | None = None) -> str:
    """An app whose engine is ``Engine()`` (or ``Engine(url)``); its ``path:engine``."""
    path = folder / "app.py"
    path.write_text(APP.format(url="" if url is None else repr(url)))
    return f"{path}:engine"


@pytest.fixture
def app(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    folder = tmp_path / "app"  # not tmp_path, where sqlite_url's file is
    folder.mkdir()
    monkeypatch.chdir(folder)  # the SQLite default, tickwork.db, would land here
    monkeypatch.delenv("TICKWORK_DATABASE_URL", raising=False)
    return app_file(folder)


# -- --database ------------------------------------------------------------------------


def test_tick_with_database_registers_and_fires_in_that_database(app: str, db_url: str) -> None:
    result = tickwork("tick", app, "--database", db_url)
    assert result.exit_code == 0, result.output
    with Engine(db_url) as engine:
        assert [s.key for s in engine.list_schedules()] == ["hourly"]
    assert not Path("tickwork.db").exists()  # not the default's file


def test_serve_with_database_serves_that_database(
    app: str, db_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    with Engine(db_url) as engine:
        key = engine.create_api_key("ops")
    seen: list[Any] = []

    def fake_run(asgi: Any, **options: Any) -> None:
        async def get() -> httpx.Response:
            transport = httpx.ASGITransport(app=asgi)
            async with httpx.AsyncClient(transport=transport, base_url="http://t") as c:
                return await c.get("/api/v1/workflows", headers={"Authorization": f"Bearer {key}"})

        seen.append(asyncio.run(get()))

    monkeypatch.setattr(serve, "_run", fake_run)
    result = tickwork("serve", app, "--database", db_url)
    assert result.exit_code == 0, result.output
    (response,) = seen
    assert response.status_code == 200  # the key lives in --database only


def test_worker_with_database_executes_runs_of_that_database(app: str, sqlite_url: str) -> None:
    with Engine(sqlite_url) as engine:

        @engine.workflow()
        def double(ctx: Context, input: dict[str, int]) -> int:
            return input["n"] * 2

        handle = engine.start("double", {"n": 21})
    worker = subprocess.Popen(
        [Path(sys.executable).parent / "tickwork", "worker", app, "--database", sqlite_url],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        env={k: v for k, v in os.environ.items() if k != "TICKWORK_DATABASE_URL"},
    )
    try:
        with Engine(sqlite_url) as engine:
            deadline = time.monotonic() + 60
            while (run := engine.get_run(handle.id)) and run.status is not RunStatus.COMPLETED:
                assert worker.poll() is None and time.monotonic() < deadline
                time.sleep(0.1)
            assert run is not None and run.result == 42
    finally:
        worker.send_signal(signal.SIGINT)
        output, _ = worker.communicate(timeout=60)
    assert worker.returncode == 0, output
    assert not Path("tickwork.db").exists()


def test_database_is_refused_for_an_app_whose_engine_names_its_own(
    tmp_path: Path, sqlite_url: str
) -> None:
    own = app_file(tmp_path, f"sqlite:///{tmp_path / 'own.db'}")
    for command in (["tick", own], ["serve", own], ["worker", own], ["runs", "start", "job"]):
        args = [*command, "--app", own] if command[0] == "runs" else command
        result = tickwork(*args, "--database", sqlite_url)
        assert result.exit_code == 2, (command, result.output)
        assert "uses its own database" in result.output


def test_the_environment_alone_leaves_an_app_its_own_database(
    tmp_path: Path, sqlite_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    own = tmp_path / "own.db"
    monkeypatch.setenv("TICKWORK_DATABASE_URL", sqlite_url)
    result = tickwork("tick", app_file(tmp_path, f"sqlite:///{own}"))
    assert result.exit_code == 0, result.output
    with Engine(f"sqlite:///{own}") as engine:
        assert [s.key for s in engine.list_schedules()] == ["hourly"]


def test_every_command_takes_database() -> None:
    def leaves(command: Any, path: tuple[str, ...]) -> Iterator[tuple[tuple[str, ...], Any]]:
        children = getattr(command, "commands", None)
        if children is None:
            yield path, command
            return
        for name, child in children.items():
            yield from leaves(child, (*path, name))

    without = [
        " ".join(path)
        for path, command in leaves(main, ())
        if path != ("cron",) and "--database" not in {o for p in command.params for o in p.opts}
    ]
    assert without == []


# -- runs start ------------------------------------------------------------------------------


def test_runs_start_prints_the_id_of_a_run_with_its_input(app: str, db_url: str) -> None:
    result = tickwork(
        "runs", "start", "double", "--app", app, "--input", '{"n": 2}',
        "--run-id", "r-1", "--database", db_url,
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    assert result.stdout == "r-1\n"
    as_json = tickwork("runs", "start", "double", "--app", app, "--input", '{"n": 2}',
                       "--run-id", "r-1", "--database", db_url, "--json")  # fmt: skip
    shown = json.loads(as_json.stdout)  # the API's answer to POST /runs: the run itself
    assert (shown["id"], shown["input"]) == ("r-1", {"n": 2})  # idempotent: the same run
    with Engine(db_url) as engine:
        (run,) = engine.list_runs()
    assert (run.id, run.workflow, run.input) == ("r-1", "double", {"n": 2})


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (["runs", "start", "double"], "--app"),
        (["runs", "start", "double", "--app", "APP", "--input", "{n: 2}"], "not JSON"),
        (["runs", "start", "double", "--app", "APP", "--input", '{"n": "two"}'], "annotation"),
        (["runs", "start", "doubel", "--app", "APP"], "did you mean 'double'"),
        (["runs", "start", "job", "--app", "APP", "--wait", "--timeout", "soon"], "--timeout"),
    ],
)
def test_runs_start_refuses_what_it_cannot_start_with_exit_2(
    app: str, sqlite_url: str, args: list[str], said: str
) -> None:
    result = tickwork(*[app if a == "APP" else a for a in args], "--database", sqlite_url)
    assert result.exit_code == 2, result.output
    assert said in result.output
    with Engine(sqlite_url) as engine:
        assert engine.list_runs() == []


@pytest.fixture
def worker(sqlite_url: str) -> Iterator[None]:
    """A worker on ``sqlite_url`` in this process, serving the app's workflows."""
    with Engine(sqlite_url) as engine:

        @engine.workflow()
        def double(ctx: Context, input: dict[str, int]) -> int:
            return input["n"] * 2

        @engine.workflow()
        def boom(ctx: Context) -> None:
            raise RuntimeError("kaboom")

        with engine.worker(threads=2, poll_interval="50ms"):
            yield


def test_runs_start_wait_prints_the_result_as_json(app: str, sqlite_url: str, worker: None) -> None:
    result = tickwork("runs", "start", "double", "--app", app, "--input", '{"n": 21}',
                      "--wait", "--timeout", "1m", "--database", sqlite_url)  # fmt: skip
    assert result.exit_code == 0, result.output
    run_id, value = result.stdout.splitlines()
    assert value == "42"
    assert "no live worker" not in result.stderr  # the worker serves it: nothing to warn of
    as_json = tickwork("runs", "start", "double", "--app", app, "--input", '{"n": 21}',
                       "--run-id", run_id, "--wait", "--json",
                       "--database", sqlite_url)  # fmt: skip
    assert json.loads(as_json.stdout)["result"] == 42


def test_runs_start_wait_exits_1_when_the_run_failed(
    app: str, sqlite_url: str, worker: None
) -> None:
    result = tickwork("runs", "start", "boom", "--app", app, "--wait", "--timeout", "1m",
                      "--database", sqlite_url)  # fmt: skip
    assert result.exit_code == 1, result.output
    assert "RuntimeError: kaboom" in result.stderr


def test_runs_start_wait_exits_124_when_the_timeout_passes_first(app: str, sqlite_url: str) -> None:
    result = tickwork("runs", "start", "double", "--app", app, "--input", '{"n": 1}',
                      "--wait", "--timeout", "300ms", "--database", sqlite_url)  # fmt: skip
    assert result.exit_code == 124, result.output
    assert "gave up waiting after 300ms" in result.stderr
    with Engine(sqlite_url) as engine:
        (run,) = engine.list_runs()
    assert run.status is RunStatus.PENDING  # the run goes on


def test_runs_start_wait_says_up_front_and_when_giving_up_that_no_live_worker_serves_it(
    app: str, sqlite_url: str
) -> None:
    result = tickwork("runs", "start", "double", "--app", app, "--input", '{"n": 1}',
                      "--wait", "--timeout", "300ms", "--database", sqlite_url)  # fmt: skip
    assert result.exit_code == 124, result.output
    nobody = "no live worker serves pool 'default' / workflow 'double': no worker is alive"
    warning, gave_up = result.stderr.splitlines()[-2:]
    assert warning == f"warning: {nobody}; the run waits until one starts"
    assert gave_up.startswith("error: gave up waiting after 300ms: ")
    assert gave_up.endswith(f"(it goes on); {nobody}")


def test_runs_start_wait_names_what_the_live_workers_lack(app: str, sqlite_url: str) -> None:
    with Engine(sqlite_url) as engine:

        @engine.workflow()
        def boom(ctx: Context) -> None:
            raise RuntimeError("kaboom")

        with engine.worker(threads=1, poll_interval="50ms"):  # alive, but serves boom only
            result = tickwork("runs", "start", "double", "--app", app, "--input", '{"n": 1}',
                              "--wait", "--timeout", "300ms", "--database", sqlite_url)  # fmt: skip
    assert result.exit_code == 124, result.output
    assert result.stderr.endswith(
        "no live worker serves pool 'default' / workflow 'double': "
        "no live worker registers workflow 'double'\n"
    )
