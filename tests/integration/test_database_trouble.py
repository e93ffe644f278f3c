"""A database that cannot be reached or opened is said at once, in one line, with where.

From the command line: every command that opens a store ends with exit code 4, one line
on stderr naming the database (host, port, database; or the SQLite file) and the server's
or SQLite's own words, never a password, no traceback. From Python: ``StoreUnreachable``
(a ``StoreError``) at the first use of the store, raised in the caller's thread.

The commands run as real processes, as a person or a supervisor runs them, so that the
bound on waiting (``WAIT_S``) is the whole process's and a traceback would show.
"""

from __future__ import annotations

import html
import socket
import subprocess
import sys
import uuid
from collections.abc import Callable
from contextlib import ExitStack
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

import psycopg
import pytest
from tests.browser import CSRF, Browser
from tests.pg import base_url

from tickwork import Context, Engine, StoreError, StoreUnreachable
from tickwork.server import create_app

#: seconds a command may take to answer: far beyond the ~2 s promised, short of the
#: 10 s a connection pool would wait before giving up
WAIT_S = 15
EXIT_UNREACHABLE = 4

APP = """
from tickwork import Context, Engine, Every

engine = Engine()


@engine.workflow(schedule=Every("1h", key="hourly"))
def job(ctx: Context) -> str:
    return ctx.step("work", lambda: "done")
"""

#: a command of each kind: plain, maintenance, and those that load an APP
COMMANDS = [
    ["runs", "list"],
    ["schedules", "list"],
    ["db", "upgrade"],
    ["worker", "APP"],
    ["tick", "APP"],
    ["serve", "APP", "--port", "0"],
]


def closed_port() -> int:
    """A local TCP port nothing listens on (bound, then let go)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def missing_database_url() -> str:
    """The test server's URL with a database name that does not exist there."""
    parts = urlsplit(base_url())
    return urlunsplit(parts._replace(path=f"/tw_missing_{uuid.uuid4().hex[:8]}"))


def run_tickwork(folder: Path, *args: str) -> subprocess.CompletedProcess[str]:
    app = folder / "app.py"
    app.write_text(APP)
    command = [str(app) + ":engine" if arg == "APP" else arg for arg in args]
    return subprocess.run(
        [sys.executable, "-m", "tickwork", *command],
        cwd=folder,
        capture_output=True,
        text=True,
        timeout=WAIT_S,  # TimeoutExpired fails the test: it did not answer in time
    )


def assert_said_in_one_line(result: subprocess.CompletedProcess[str], *names: str) -> str:
    assert result.returncode == EXIT_UNREACHABLE, (result.returncode, result.stderr)
    assert "Traceback" not in result.stderr + result.stdout
    lines = result.stderr.splitlines()
    assert len(lines) == 1, result.stderr
    line = lines[0]
    assert line.startswith("error: Cannot open "), line
    for name in names:
        assert name in line, (name, line)
    return line


@pytest.mark.postgres
@pytest.mark.parametrize("command", COMMANDS, ids=lambda c: " ".join(c[:2]))
def test_a_postgresql_database_that_does_not_exist_is_said_in_one_line(
    tmp_path: Path, command: list[str]
) -> None:
    url = missing_database_url()
    given = psycopg.conninfo.conninfo_to_dict(url)
    result = run_tickwork(tmp_path, *command, "--database", url)
    line = assert_said_in_one_line(
        result, str(given["dbname"]), str(given.get("host", "")), "does not exist"
    )
    assert "error connecting" not in result.stderr  # no pool attempts logged one by one
    assert line.count(str(given["dbname"])) >= 1


@pytest.mark.parametrize("command", COMMANDS, ids=lambda c: " ".join(c[:2]))
def test_a_closed_port_is_said_in_one_line(tmp_path: Path, command: list[str]) -> None:
    port = closed_port()
    url = f"postgresql://tickwork@127.0.0.1:{port}/appdb"
    result = run_tickwork(tmp_path, *command, "--database", url)
    assert_said_in_one_line(result, f"127.0.0.1:{port}", "'appdb'", "Connection refused")


def test_a_server_that_never_answers_is_given_up_on(tmp_path: Path) -> None:
    """A host that takes the connection and says nothing (a firewall, a hung server):
    libpq's connect_timeout of 2 s ends the wait, not the pool's 10 s."""
    with socket.socket() as silent:
        silent.bind(("127.0.0.1", 0))
        silent.listen()
        port = silent.getsockname()[1]
        url = f"postgresql://tickwork@127.0.0.1:{port}/appdb"
        result = run_tickwork(tmp_path, "runs", "list", "--database", url)
    assert_said_in_one_line(result, f"127.0.0.1:{port}", "timeout expired")


def test_a_password_is_never_said(tmp_path: Path) -> None:
    url = f"postgresql://someone:s3cret-pw@127.0.0.1:{closed_port()}/appdb"
    result = run_tickwork(tmp_path, "runs", "list", "--database", url)
    line = assert_said_in_one_line(result, "'someone'", "'appdb'")
    assert "s3cret-pw" not in line


def _missing_folder(folder: Path) -> Path:
    return folder / "no-such-folder" / "tickwork.db"


def _a_folder(folder: Path) -> Path:
    (folder / "a-folder.db").mkdir()
    return folder / "a-folder.db"


def _not_a_database(folder: Path) -> Path:
    path = folder / "notes.db"
    path.write_text("these are my notes, not a database\n" * 100)
    return path


SQLITE_TROUBLE: list[tuple[Callable[[Path], Path], str]] = [
    (_missing_folder, "does not exist"),
    (_a_folder, "unable to open database file"),
    (_not_a_database, "file is not a database"),
]


@pytest.mark.parametrize("command", [["runs", "list"], ["worker", "APP"]], ids=" ".join)
@pytest.mark.parametrize(
    ("make", "reason"), SQLITE_TROUBLE, ids=[m.__name__[1:] for m, _ in SQLITE_TROUBLE]
)
def test_a_broken_sqlite_path_is_said_in_one_line(
    tmp_path: Path, command: list[str], make: Callable[[Path], Path], reason: str
) -> None:
    path = make(tmp_path)
    before = path.read_bytes() if path.is_file() else None
    result = run_tickwork(tmp_path, *command, "--database", f"sqlite:///{path}")
    assert_said_in_one_line(result, str(path), reason)
    if before is not None:
        assert path.read_bytes() == before  # not a database: left as it was


# -- Python ----------------------------------------------------------------------------------


def test_python_gets_store_unreachable_naming_the_database() -> None:
    port = closed_port()
    url = f"postgresql://someone:s3cret-pw@127.0.0.1:{port}/appdb"
    with Engine(url) as engine, pytest.raises(StoreUnreachable) as caught:
        engine.list_runs()
    error = caught.value
    assert isinstance(error, StoreError) and error.transient
    assert error.code == "STORE_UNREACHABLE"
    assert f"127.0.0.1:{port}" in error.where and "appdb" in error.where
    assert "Connection refused" in error.reason
    assert "s3cret-pw" not in str(error)


@pytest.mark.postgres
def test_python_gets_the_servers_own_words() -> None:
    url = missing_database_url()
    with Engine(url) as engine, pytest.raises(StoreUnreachable, match="does not exist"):
        engine.migrate()


def test_a_worker_on_an_unreachable_database_raises_in_the_callers_thread(
    tmp_path: Path,
) -> None:
    with Engine(f"sqlite:///{_not_a_database(tmp_path)}") as engine:

        @engine.workflow
        def job(ctx: Context) -> None:
            return None

        with pytest.raises(StoreUnreachable, match="not a database"), engine.worker():
            pytest.fail("the worker started on a file that is not a database")
        with pytest.raises(StoreUnreachable, match="not a database"):
            engine.run_worker()


def test_the_dashboard_answers_an_outage_with_the_apis_503_and_message(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A session opened while the database answered, then a server whose database cannot
    be reached (nothing listens on its port): the dashboard's pages and its login answer
    503 with the error page and the words the API answers with, not a bare 500."""
    monkeypatch.setenv("TICKWORK_SECRET", "dashboard-outage-test-secret")  # shared sessions
    with ExitStack() as stack:
        up = stack.enter_context(Engine(f"sqlite:///{tmp_path / 'up.db'}"))
        key = up.create_api_key("dashboard")
        browser = Browser(create_app(up), stack)
        assert browser.login(key).status_code == 303
        unreachable = f"postgresql://postgres@127.0.0.1:{closed_port()}/tickwork"
        down = stack.enter_context(Engine(unreachable))
        outage = Browser(create_app(down), stack)
        outage.client.cookies = browser.client.cookies  # the same session, on this server

        api = outage.get("/api/v1/schedules", headers={"Authorization": f"Bearer {key}"})
        assert api.status_code == 503
        message = api.json()["error"]["message"]
        for page in (outage.get("/"), outage.get("/runs")):
            assert page.status_code == 503
            assert page.headers["content-type"].startswith("text/html")
            assert "Content-Security-Policy" in page.headers
            shown = html.unescape(page.text)
            assert "Database unavailable" in shown and message in shown

        stranger = Browser(create_app(down), stack)  # no session yet: logs in
        token = CSRF.findall(stranger.get("/login").text)[0]
        login = stranger.post("/login", data={"key": key, "csrf": token, "next": "/"})
        assert login.status_code == 503 and message in html.unescape(login.text)
