"""Harness for acceptance tests: real ``tickwork worker`` processes on one SQLite file.

Tests never assert how long anything took. They *wait* for a state of the database (or of
the log of step executions) with a generous deadline, and fail with the workers' logs when
it does not come; a worker that dies while it is expected to run fails the wait at once.
Every process a test starts is killed and reaped when the test ends, pass or fail.
"""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import time
import uuid
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from contextlib import closing
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

import pytest
from tests.acceptance.neighbours import load_neighbour

from tickwork import Engine, RunInfo

HERE = Path(__file__).parent
APP = f"{HERE / 'acceptance_app.py'}:engine"
WAIT = 60.0  # seconds: generous, only ever reached when something is broken
# A run's row and its lease, from its queue row while it is unfinished (migration 0011).
RAW_RUN = """
SELECT r.*, q.available_at, q.lease_token, q.cancel_requested
FROM tickwork_runs r LEFT JOIN tickwork_queue q ON q.id = r.id WHERE r.id = %s
"""
T = TypeVar("T")


workflows = load_neighbour("acceptance_workflows")  # the workers import it as a file


def tickwork_command() -> list[str]:
    """The ``tickwork`` console script of this interpreter's environment."""
    script = Path(sys.executable).parent / "tickwork"
    return [str(script)] if script.exists() else [sys.executable, "-m", "tickwork"]


@dataclass(frozen=True)
class Execution:
    """One line of ``executions.log``: a step function was entered."""

    run_id: str
    attempt: int
    step: str
    pid: int


class WorkerProcess:
    """A ``tickwork worker`` process; its stdout and stderr go to a file."""

    def __init__(self, name: str, args: list[str], env: dict[str, str], log_path: Path) -> None:
        self.name = name
        self.log_path = log_path
        with open(log_path, "wb") as log:
            self.proc = subprocess.Popen(
                args, env=env, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT
            )
        self.pid = self.proc.pid

    @property
    def returncode(self) -> int | None:
        return self.proc.poll()

    def log(self) -> str:
        return self.log_path.read_text(errors="replace")

    def kill(self) -> None:
        """SIGKILL: the process dies at once, with no chance to clean up."""
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGKILL)
        self.proc.wait()

    def terminate(self) -> None:
        """SIGTERM: ask the worker to stop (it drains, then exits)."""
        self.proc.send_signal(signal.SIGTERM)

    def wait_exit(self, timeout: float = WAIT) -> int:
        """The exit status, once the process has exited (fails after ``timeout``)."""
        try:
            return self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            pytest.fail(f"worker {self.name} did not exit within {timeout:.0f}s\n{self.log()}")

    def __repr__(self) -> str:
        return f"<worker {self.name} pid={self.pid} rc={self.proc.poll()}>"


class Harness:
    """Start workers and runs, look at the database and the execution log, wait."""

    def __init__(self, tmp_path: Path) -> None:
        self.dir = tmp_path
        self.db_path = tmp_path / "tickwork.db"
        self.url = f"sqlite:///{self.db_path}"
        self.workers: list[WorkerProcess] = []
        self.engine = Engine(self.url)
        workflows.define(self.engine)
        self.engine.migrate()  # the schema exists before any worker starts

    # -- processes -----------------------------------------------------------------------

    def worker(
        self,
        *,
        lease: str = "30s",
        hold: str | None = None,
        clock_offset: str | None = None,
        drain_timeout: str = "30s",
        threads: int = 8,
        env: dict[str, str] | None = None,
        serve: bool = False,
    ) -> WorkerProcess:
        """Start ``tickwork worker`` on the acceptance app (see ``acceptance_workflows``);
        ``serve``: ``tickwork serve --worker`` instead (on a port the system picks, with
        serve's own drain timeout).

        ``env`` adds variables to the worker's environment.
        """
        environ = {k: v for k, v in os.environ.items() if not k.startswith("ACCEPT_")}
        environ.update(
            TICKWORK_DATABASE_URL=self.url, ACCEPT_DIR=str(self.dir), ACCEPT_LEASE=lease,
            PYTHONUNBUFFERED="1",
        )  # fmt: skip
        if hold is not None:
            environ["ACCEPT_HOLD"] = hold
        if clock_offset is not None:
            environ["ACCEPT_CLOCK_OFFSET"] = clock_offset
        environ.update(env or {})
        name = f"w{len(self.workers) + 1}"
        if serve:  # serve has no --drain-timeout
            command = ["serve", APP, "--worker", "--port", "0"]
        else:
            command = ["worker", APP, "--drain-timeout", drain_timeout]
        args = [
            *tickwork_command(), *command, "--threads", str(threads), "--log-level", "INFO",
        ]  # fmt: skip
        worker = WorkerProcess(name, args, environ, self.dir / f"{name}.log")
        self.workers.append(worker)
        return worker

    def close(self) -> None:
        for worker in self.workers:
            worker.kill()
        self.engine.close()

    def release(self, name: str) -> None:
        """Create ``ACCEPT_DIR/name``: workers holding until ``file:name`` go on."""
        (self.dir / name).touch()

    # -- runs ----------------------------------------------------------------------------

    def start(self, n: int, *, nap: str = "10ms", run_id: str | None = None) -> str:
        """Start a run of ``three-steps`` with input ``n``; its id."""
        handle = self.engine.start(
            workflows.WORKFLOW, {"n": n, "nap": nap}, run_id=run_id or f"run-{n}"
        )
        return handle.id

    @staticmethod
    def expected(n: int) -> dict[str, int]:
        """The result of a run of ``three-steps`` with input ``n``."""
        return workflows.expected_result(n)  # type: ignore[no-any-return]

    def run(self, run_id: str) -> RunInfo:
        run = self.engine.get_run(run_id)
        assert run is not None, f"run {run_id} is not in the database"
        return run

    def status(self, run_id: str) -> str:
        return str(self.run(run_id).status)

    def completed_steps(self, run_id: str) -> list[str]:
        """Names of the run's checkpoints stored as completed, in order."""
        return [s.name for s in self.engine.list_steps(run_id) if s.status == "completed"]

    def raw_run(self, run_id: str) -> dict[str, Any]:
        """The run's row as stored, with its lease (its queue row's columns, None once
        it ended) (read-only connection)."""
        uri = f"file:{self.db_path}?mode=ro"
        with closing(sqlite3.connect(uri, uri=True)) as conn:
            conn.row_factory = sqlite3.Row
            row = conn.execute(RAW_RUN.replace("%s", "?"), (run_id,)).fetchone()
        assert row is not None, f"run {run_id} is not in the database"
        return dict(row)

    # -- the execution log ---------------------------------------------------------------

    def executions(self, run_id: str | None = None) -> list[Execution]:
        """Every step execution logged so far (of one run, when given), in log order."""
        path = self.dir / workflows.EXECUTIONS
        if not path.exists():
            return []
        lines = path.read_text().splitlines()
        found = []
        for line in lines:
            rid, attempt, step, pid = line.split(" ")
            if run_id is None or rid == run_id:
                found.append(Execution(rid, int(attempt), step, int(pid)))
        return found

    def counts(self, run_id: str) -> dict[str, int]:
        """How many times each step of the run was executed (every step listed)."""
        counted = Counter(e.step for e in self.executions(run_id))
        return {step: counted[step] for step in workflows.STEPS}

    def executed_by(self, run_id: str) -> list[tuple[str, int]]:
        """(step, pid) of each execution of the run, in log order."""
        return [(e.step, e.pid) for e in self.executions(run_id)]

    # -- waiting -------------------------------------------------------------------------

    def wait_until(
        self,
        predicate: Callable[[], T],
        what: str,
        *,
        alive: Iterable[WorkerProcess] = (),
        timeout: float = WAIT,
    ) -> T:
        """Poll ``predicate`` until it is truthy and return its value.

        Fails when ``timeout`` passes first, or at once when a worker in ``alive`` exits.
        """
        alive = list(alive)
        deadline = time.monotonic() + timeout
        while True:
            value = predicate()
            if value:
                return value
            for worker in alive:
                if worker.returncode is not None:
                    pytest.fail(
                        f"worker {worker.name} exited ({worker.returncode}) while waiting "
                        f"until {what}\n{self.logs()}"
                    )
            if time.monotonic() > deadline:
                pytest.fail(f"waited {timeout:.0f}s, yet not {what}\n{self.logs()}")
            time.sleep(0.02)

    def wait_for_status(
        self, run_id: str, status: str, *, alive: Iterable[WorkerProcess] = ()
    ) -> RunInfo:
        self.wait_until(
            lambda: self.status(run_id) == status, f"run {run_id} is {status}", alive=alive
        )
        return self.run(run_id)

    def stop_cleanly(self, workers: Iterable[WorkerProcess]) -> None:
        """SIGTERM each worker once it is running, and expect each to exit 0 (drained).

        A worker still importing its app has no handler yet and dies of the signal: under
        load one can still be starting when the others have done all the test's work.
        """
        workers = list(workers)
        for worker in workers:
            self.wait_until(
                lambda w=worker: "started (pools" in w.log(), f"{worker.name} runs", alive=[worker]
            )
            worker.terminate()
        for worker in workers:
            assert worker.wait_exit() == 0, worker.log()

    def logs(self) -> str:
        return "\n".join(f"--- {w!r}\n{w.log()}" for w in self.workers)


@pytest.fixture
def harness(tmp_path: Path) -> Iterator[Harness]:
    """A fresh database in ``tmp_path``; every worker started through it dies with the test."""
    harness = Harness(tmp_path)
    try:
        yield harness
    finally:
        harness.close()


# -- PostgreSQL ----------------------------------------------------------------------------
#
# The same harness on a fresh schema of TICKWORK_TEST_POSTGRES_URL (``tests/pg.py``: skipped
# without it, a failure under CI). Each worker connects with its own ``application_name``
# (``<harness tag>-<worker name>``), so a test can find that worker's backends in
# ``pg_stat_activity`` even while other suites share the server.


def local_cluster(base_url: str) -> tuple[str, str] | None:
    """(version, name) of the local Debian cluster serving ``base_url`` (``pg_lsclusters``,
    matched by port), or None when there is none this process can control."""
    import psycopg

    params = psycopg.conninfo.conninfo_to_dict(base_url)
    if str(params.get("host", "localhost")) not in ("localhost", "127.0.0.1", "::1"):
        return None
    try:
        listed = subprocess.run(
            ["pg_lsclusters", "--no-header"], check=True, capture_output=True, text=True
        ).stdout
    except (OSError, subprocess.CalledProcessError):
        return None
    for line in listed.splitlines():
        version, name, port, *_ = line.split()
        if port == str(params.get("port", "5432")):
            return version, name
    return None


def _with_query(url: str, **params: str) -> str:
    separator = "&" if "?" in url else "?"
    return url + separator + "&".join(f"{k}={v}" for k, v in params.items())


def postgres_ready(base_url: str) -> bool:
    """True when the server accepts connections (a plain ``SELECT 1`` goes through)."""
    import psycopg

    try:
        with psycopg.connect(base_url, autocommit=True, connect_timeout=2) as conn:
            conn.execute("SELECT 1")
        return True
    except psycopg.Error:
        return False


def ensure_postgres_running(base_url: str, timeout: float = WAIT) -> None:
    """Start the cluster if it is down, and wait until it accepts connections.

    Every test that stops or restarts PostgreSQL calls it when it ends, pass or fail, so
    the server is never left down for the suites that share it.
    """
    deadline = time.monotonic() + timeout
    started = False
    while not postgres_ready(base_url):
        cluster = local_cluster(base_url)
        if not started and cluster is not None:
            subprocess.run(
                ["pg_ctlcluster", "--skip-systemctl-redirect", *cluster, "start"],
                check=False, capture_output=True,
            )  # fmt: skip
            started = True
        if time.monotonic() > deadline:
            raise RuntimeError(f"PostgreSQL at {base_url} did not come back within {timeout}s")
        time.sleep(0.2)


class PgHarness(Harness):
    """``Harness`` on PostgreSQL: ``url`` names a fresh schema (``tests.pg.fresh_schema``)."""

    def __init__(self, tmp_path: Path, url: str, base_url: str) -> None:
        self.dir = tmp_path
        self.url = url
        self.base_url = base_url
        self.tag = f"twa-{uuid.uuid4().hex[:8]}"
        self.workers = []
        self.engine = Engine(url)
        workflows.define(self.engine)
        self.engine.migrate()  # the schema exists before any worker starts

    def worker_url(self, name: str) -> str:
        """The database URL of worker ``name``: its backends carry its name."""
        return _with_query(self.url, application_name=f"{self.tag}-{name}")

    def worker(self, **options: Any) -> WorkerProcess:
        """``Harness.worker`` (the acceptance app), connected as ``<tag>-<name>``."""
        env = dict(options.pop("env", None) or {})
        env.setdefault("TICKWORK_DATABASE_URL", self.worker_url(f"w{len(self.workers) + 1}"))
        return super().worker(env=env, **options)

    def app_worker(
        self, app: str, *, env: dict[str, str] | None = None, threads: int = 8, name: str = ""
    ) -> WorkerProcess:
        """``tickwork worker APP`` for another app module than the acceptance app.

        The environment is the test's without ``ACCEPT_``/``TICKWORK_`` variables, plus
        ``ACCEPT_DIR``, the worker's database URL and ``env``.
        """
        name = name or f"w{len(self.workers) + 1}"
        environ = {
            k: v for k, v in os.environ.items() if not k.startswith(("ACCEPT_", "TICKWORK_"))
        }
        environ.update(
            TICKWORK_DATABASE_URL=self.worker_url(name), ACCEPT_DIR=str(self.dir),
            PYTHONUNBUFFERED="1",
        )  # fmt: skip
        environ.update(env or {})
        args = [*tickwork_command(), "worker", app, "--threads", str(threads),
                "--log-level", "INFO"]  # fmt: skip
        worker = WorkerProcess(name, args, environ, self.dir / f"{name}.log")
        self.workers.append(worker)
        return worker

    def sql(self, query: str, *params: Any) -> list[tuple[Any, ...]]:
        """Rows of one statement on a fresh autocommit connection to the server."""
        import psycopg

        with psycopg.connect(self.base_url, autocommit=True, connect_timeout=5) as conn:
            cursor = conn.execute(query, params)
            return cursor.fetchall() if cursor.description else []

    def backends(self, worker: WorkerProcess, query: str | None = None) -> list[int]:
        """Backend pids of ``worker``'s connections (running ``query`` last, when given)."""
        rows = self.sql(
            "SELECT pid, query FROM pg_stat_activity WHERE application_name = %s",
            f"{self.tag}-{worker.name}",
        )
        return sorted(pid for pid, last in rows if query is None or last == query)

    def raw_run(self, run_id: str) -> dict[str, Any]:
        """The run's row as stored, with its lease (as the SQLite harness's)."""
        import psycopg
        from psycopg.rows import dict_row

        with psycopg.connect(self.url, autocommit=True, row_factory=dict_row) as conn:
            row = conn.execute(RAW_RUN, (run_id,)).fetchone()
        assert row is not None, f"run {run_id} is not in the database"
        return dict(row)

    def close(self) -> None:
        for worker in self.workers:
            worker.kill()
        ensure_postgres_running(self.base_url)  # a test may have stopped it
        self.engine.close()


@pytest.fixture
def pg_harness(tmp_path: Path) -> Iterator[PgHarness]:
    """``harness`` on a fresh PostgreSQL schema; PostgreSQL is running again when it ends."""
    from tests.pg import base_url, fresh_schema

    base = base_url()
    ensure_postgres_running(base)
    with fresh_schema() as url:
        harness = PgHarness(tmp_path, url, base)
        try:
            yield harness
        finally:
            harness.close()
