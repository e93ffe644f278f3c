"""How ``tickwork worker`` prints its logs (readable lines, or JSON lines with
``--log-format json``), and no access-log line for the dashboard's own live refresh
(DESIGN §8, Logs)."""

from __future__ import annotations

import json
import logging
import os
import re
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx
import pytest
import uvicorn
from starlette.applications import Starlette

from tickwork import Engine, RunStatus
from tickwork.server import create_app

WAIT = 60.0  # seconds: a bound on waiting, never a timing assertion

APP = """
from tickwork import Context, Engine

engine = Engine()

@engine.workflow()
def double(ctx: Context, input: dict) -> int:
    return ctx.step("double", lambda: input["n"] * 2)
"""


def worker_output(tmp_path: Path, sqlite_url: str, *options: str) -> tuple[str, str]:
    """Run ``tickwork worker`` until it completed one run; (its run id, what it logged)."""
    app = tmp_path / "app.py"
    app.write_text(APP)
    with Engine(sqlite_url) as engine:
        engine.workflow("double")(lambda ctx, input: input["n"] * 2)
        run_id = engine.start("double", {"n": 21}).id
    command = [Path(sys.executable).parent / "tickwork", "worker", f"{app}:engine"]
    worker = subprocess.Popen(
        [*command, "--database", sqlite_url, *options],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env={k: v for k, v in os.environ.items() if k != "TICKWORK_DATABASE_URL"},
    )
    try:
        with Engine(sqlite_url) as engine:
            deadline = time.monotonic() + WAIT
            while (run := engine.get_run(run_id)) and run.status is not RunStatus.COMPLETED:
                assert worker.poll() is None and time.monotonic() < deadline
                time.sleep(0.1)
    finally:
        worker.send_signal(signal.SIGINT)
        output, _ = worker.communicate(timeout=WAIT)
    assert worker.returncode == 0, output
    return run_id, output


def test_worker_logs_readable_lines_by_default(tmp_path: Path, sqlite_url: str) -> None:
    run_id, output = worker_output(tmp_path, sqlite_url)
    when = r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\dZ"  # UTC
    assert re.search(
        rf"^{when} INFO tickwork.runs run {run_id} started: workflow double$", output, re.M
    )
    assert re.search(
        rf"^{when} INFO tickwork.runs run {run_id} completed in \S+ \S+$", output, re.M
    )


def test_worker_logs_json_lines_with_log_format_json(tmp_path: Path, sqlite_url: str) -> None:
    run_id, output = worker_output(tmp_path, sqlite_url, "--log-format", "json")
    records = [json.loads(line) for line in output.splitlines()]  # every line is JSON
    mine = [r for r in records if r.get("run_id") == run_id]
    assert [r["message"] for r in mine] == [
        f"run {run_id} started: workflow double",
        mine[-1]["message"],
    ]
    assert mine[-1]["message"].startswith(f"run {run_id} completed in ")
    assert {(r["level"], r["logger"], r["workflow"], r["attempt"]) for r in mine} == {
        ("INFO", "tickwork.runs", "double", 1)
    }
    assert all(set(r) >= {"time", "level", "logger", "message"} for r in records)


FORGING_APP = """
from tickwork import Context, Engine

engine = Engine()

@engine.workflow()
def forge(ctx: Context, input: str) -> None:
    def fail() -> None:
        raise ValueError(input)
    ctx.step("fail", fail)
"""
#: a step's error that would print a record of its own, then turn the terminal red
FORGED = "boom\n2026-01-01 00:00:00Z INFO tickwork.runs run forged completed\x1b[31m"


def test_control_characters_in_a_steps_error_are_escaped_in_readable_lines(
    tmp_path: Path, sqlite_url: str
) -> None:
    """A step's error with a line break and an ANSI escape (user input): the readable
    log shows them escaped (``\\n``, ``\\x1b``), prints no escape character and no line
    that passes for a record the worker did not log."""
    app = tmp_path / "app.py"
    app.write_text(FORGING_APP)
    with Engine(sqlite_url) as engine:
        engine.workflow("forge")(lambda ctx, input: None)
        run_id = engine.start("forge", FORGED).id
    command = [Path(sys.executable).parent / "tickwork", "worker", f"{app}:engine"]
    worker = subprocess.Popen(
        [*command, "--database", sqlite_url],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env={k: v for k, v in os.environ.items() if k != "TICKWORK_DATABASE_URL"},
    )
    try:
        with Engine(sqlite_url) as engine:
            deadline = time.monotonic() + WAIT
            while (run := engine.get_run(run_id)) and run.status is not RunStatus.FAILED:
                assert worker.poll() is None and time.monotonic() < deadline
                time.sleep(0.1)
    finally:
        worker.send_signal(signal.SIGINT)
        output, _ = worker.communicate(timeout=WAIT)
    assert worker.returncode == 0, output

    assert "\x1b" not in output
    assert not re.search(r"^2026-01-01 00:00:00Z", output, re.M), output
    escaped = r"boom\n2026-01-01 00:00:00Z INFO tickwork.runs run forged completed\x1b[31m"
    (failed,) = [line for line in output.splitlines() if f"run {run_id} failed" in line]
    assert escaped in failed
    # Every line is a record's, or indented under one (a traceback).
    when = re.compile(r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\dZ ")
    assert all(when.match(line) or line.startswith("  ") for line in output.splitlines())


def test_serve_prints_uvicorns_lines_as_json_lines_too(tmp_path: Path, sqlite_url: str) -> None:
    app = tmp_path / "app.py"
    app.write_text(APP)
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    command = [Path(sys.executable).parent / "tickwork", "serve", f"{app}:engine"]
    server = subprocess.Popen(
        [*command, "--port", str(port), "--database", sqlite_url, "--log-format", "json"],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env={k: v for k, v in os.environ.items() if k != "TICKWORK_DATABASE_URL"},
    )
    try:
        deadline = time.monotonic() + WAIT
        while True:
            assert server.poll() is None and time.monotonic() < deadline
            try:
                if httpx.get(f"http://127.0.0.1:{port}/healthz").status_code == 200:
                    break
            except httpx.TransportError:
                time.sleep(0.1)
    finally:
        server.send_signal(signal.SIGINT)
        output, _ = server.communicate(timeout=WAIT)
    records = [json.loads(line) for line in output.splitlines()]  # every line is JSON
    access = [r for r in records if r["logger"] == "uvicorn.access"]
    assert access and '"GET /healthz HTTP/1.1" 200' in access[-1]["message"]


# -- the dashboard's live refresh --------------------------------------------------------


@contextmanager
def serving(app: Starlette) -> Iterator[str]:
    """``app`` on a real uvicorn server at a free port of 127.0.0.1; its URL."""
    config = uvicorn.Config(
        app, host="127.0.0.1", port=0, lifespan="off", log_config=None, log_level="info"
    )
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, name="uvicorn", daemon=True)
    thread.start()
    deadline = time.monotonic() + WAIT
    while not server.started:
        assert thread.is_alive() and time.monotonic() < deadline, "the server did not start"
        time.sleep(0.01)
    try:
        yield f"http://127.0.0.1:{server.servers[0].sockets[0].getsockname()[1]}"
    finally:
        server.should_exit = True
        thread.join(WAIT)


class Lines(logging.Handler):
    def __init__(self) -> None:
        super().__init__()
        self.lines: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.lines.append(record.getMessage())


@pytest.fixture
def access_lines() -> Iterator[list[str]]:
    """The access lines uvicorn writes, whatever handler a deployment gives them."""
    handler = Lines()
    logger = logging.getLogger("uvicorn.access")
    logger.addHandler(handler)
    try:
        yield handler.lines
    finally:
        logger.removeHandler(handler)


def test_the_dashboards_live_refresh_leaves_no_access_log_line(
    sqlite_url: str, access_lines: list[str]
) -> None:
    refresh = {"X-Tickwork-Refresh": "1"}
    with (
        Engine(sqlite_url) as engine,
        serving(create_app(engine)) as url,
        httpx.Client(base_url=url) as client,
    ):
        assert client.get("/login", headers=refresh).status_code == 200
        assert client.get("/login?next=/runs").status_code == 200
        assert client.get("/nowhere", headers=refresh).status_code == 404
        assert client.get("/login?next=/", headers=refresh).status_code == 200
    assert [line.split('"')[1] for line in access_lines] == [
        "GET /login?next=/runs HTTP/1.1",  # a person's visit is logged
        "GET /nowhere HTTP/1.1",  # a refresh that failed is logged
    ]
