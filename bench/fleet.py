"""Fleet throughput with 1, 2 and 4 worker processes on one PostgreSQL server: tickwork vs
DBOS Transact on the same server (and tickwork on one SQLite file, for comparison).

Two measures, each taken with N = 1, 2, 4 processes started fresh for every trial, on a
fresh database (a new PostgreSQL schema, or a new SQLite file). The processes get ready
first (imports, connection, warm-up query), then wait for a "go" file; the clock starts
when the driver creates it.

(1) firings/s: M schedules (10,000) each with exactly one occurrence due, fired by N
    processes at once; firings/s = M / (go -> the last process has nothing left to fire).
    tickwork: M hourly interval schedules registered under a ``FakeClock`` at T0; every
    process loops ``engine.tick()`` at T0 + 1 h until it starts nothing (all of them
    fire in the same transactions a worker's scheduler uses: ``FOR UPDATE SKIP LOCKED``
    batches of 100). With ``--against``, also the CPU those processes and the PostgreSQL
    server processes serving them used per 1,000 firings (``/proc/<pid>/schedstat``, the
    server on this machine): on a machine shared with other work, a steadier figure than
    the rate. DBOS: what its scheduler does
    for each occurrence (``dbos/_scheduler.py``, ``_ScheduleThread._loop``): look the
    deterministic workflow id ``sched-<name>-<time>`` up, enqueue the workflow if it is
    not there (``_enqueue_scheduled_workflow``). DBOS runs one thread per schedule in
    every process, so every process fires every occurrence (the workflow id makes the
    second insert a no-op); here each process does it for the M occurrences, shuffled,
    on 8 threads. The runs go to a queue no process listens to, so neither side executes
    anything while firing.
(2) completed runs/s: M runs (2,000) of a 3-step workflow stored first, with no worker
    running; N worker processes (8 threads each) drain them; runs/s = M / (go -> the
    driver sees M completed runs; it polls every 10 ms). Steps are trivial functions
    returning ``{"n": 1}``, ``{"n": 2}``, ``{"n": 3}`` (as in ``bench/runs.py``).
    tickwork: ``with engine.worker(threads=8)`` in each process. DBOS: the runs enqueued
    on a queue (``worker_concurrency=8``, ``polling_interval_sec=0.01``: its default 1 s
    poll would bound it to a few runs per second), each process calling
    ``DBOS.launch()`` at "go" (DBOS starts its queue runners at launch; the launch time is
    included and printed apart).

Durability is the same: both commit every checkpoint to the same PostgreSQL server with
its defaults (``synchronous_commit=on``). tickwork's SQLite rows use its default WAL +
``synchronous=normal`` (see "## runs" in ``bench/README.md``), processes sharing one file.

Usage (from the repository root; PostgreSQL from ``--postgres``, or
``TICKWORK_BENCH_POSTGRES_URL`` / ``TICKWORK_TEST_POSTGRES_URL``)::

    python3 -m venv bench/.venv
    bench/.venv/bin/pip install -e '.[postgres]' dbos
    bench/.venv/bin/python bench/fleet.py            # about 10 minutes on 2 cores
    bench/.venv/bin/python bench/fleet.py --quick    # about 2 minutes, smaller M, 1 repetition
    bench/.venv/bin/python bench/fleet.py --against main   # tickwork rows: this tree vs main
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import platform
import random
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any
from urllib.parse import quote

from floor import first, following, three_steps  # bench/floor.py, beside this script

INSTALL = "bench/.venv/bin/pip install -e '.[postgres]' dbos"
DEFAULT_PG = "postgresql://postgres@127.0.0.1:5432/test"
T0 = datetime(2030, 1, 1, tzinfo=UTC)  # tickwork's fake registration instant
THREADS = 8
POLL_S = 0.01
WAIT_S = 600.0  # a trial that takes longer than this is broken

# -- the work itself, identical for both libraries: bench/floor.py's steps -------------


# -- coordination between the driver and its children --------------------------------


def _ready_and_wait(folder: Path, index: int) -> None:
    (folder / f"ready.{index}").touch()
    while not (folder / "go").exists():
        time.sleep(0.001)


def _wait_for_stop(folder: Path) -> None:
    while not (folder / "stop").exists():
        time.sleep(0.01)


def _emit(result: dict[str, Any]) -> None:
    print(json.dumps(result), flush=True)


def _tickwork_file() -> str:
    """Where this process imported tickwork from (``--against`` checks it)."""
    import tickwork

    return tickwork.__file__


# -- tickwork children ---------------------------------------------------------------


def _tickwork_engine(url: str, clock: Any = None) -> Any:
    from tickwork import Engine

    engine = Engine(url, clock=clock)

    # (``ctx: Any``: annotations are resolved in this module's globals)
    @engine.workflow("noop")
    def _noop(ctx: Any, input: Any = None) -> None:
        return None

    engine.workflow("three-steps")(three_steps)

    engine.migrate()
    engine.get_run("warm-up")  # a connection is open before "go"
    return engine


def _server_cpu_ns(url: str, name: str) -> dict[int, int]:
    """CPU time so far (ns, ``/proc/<pid>/schedstat``) of each PostgreSQL server process
    serving a connection named ``name``; none when the server runs on another machine."""
    import psycopg

    with psycopg.connect(url, autocommit=True) as conn:
        pids = conn.execute(
            "SELECT pid FROM pg_stat_activity WHERE application_name = %s "
            "AND pid <> pg_backend_pid()",
            (name,),
        ).fetchall()
    found = {}
    for (pid,) in pids:
        with contextlib.suppress(OSError, ValueError):  # no /proc, or a process gone
            found[pid] = int(Path(f"/proc/{pid}/schedstat").read_text().split()[0])
    return found


def child_tickwork_fire(spec: dict[str, Any]) -> None:
    from tickwork.testing import FakeClock

    clock = FakeClock(T0 + timedelta(hours=1, seconds=1))
    # Its connections named, so that the CPU of the server processes serving them is read.
    url, name, postgres = spec["url"], f"fleet-{os.getpid()}", spec["url"].startswith("postgres")
    if postgres:
        url = f"{url}{'&' if '?' in url else '?'}application_name={name}"
    engine = _tickwork_engine(url, clock)
    server = _server_cpu_ns(spec["url"], name) if postgres else {}
    _ready_and_wait(Path(spec["dir"]), spec["index"])
    cpu = time.process_time_ns()
    fired = 0
    while started := engine.tick():
        fired += len(started)
    end = time.time()
    cpu = time.process_time_ns() - cpu
    after = _server_cpu_ns(spec["url"], name) if postgres else {}
    server_ns = sum(ns - server.get(pid, 0) for pid, ns in after.items())
    _emit({"end": end, "fired": fired, "cpu_ns": cpu, "server_cpu_ns": server_ns,
           "tickwork_file": _tickwork_file()})  # fmt: skip
    engine.close()


def child_tickwork_run(spec: dict[str, Any]) -> None:
    engine = _tickwork_engine(spec["url"])
    folder = Path(spec["dir"])
    _ready_and_wait(folder, spec["index"])
    began = time.time()
    with engine.worker(threads=spec["threads"]):
        started = time.time() - began
        _wait_for_stop(folder)
    _emit({"startup_s": started, "tickwork_file": _tickwork_file()})
    engine.close()


# -- DBOS children -------------------------------------------------------------------


def _dbos(spec: dict[str, Any], *, listen: list[str] | None) -> Any:
    from dbos import DBOS

    @DBOS.workflow(name="noop")
    def noop(scheduled_at: Any = None, context: Any = None) -> None:
        return None

    @DBOS.step(name="one")
    def step_one() -> dict[str, int]:
        return first()

    @DBOS.step(name="next")
    def step_next(previous: dict[str, int]) -> dict[str, int]:
        return following(previous)

    @DBOS.workflow(name="three-steps")
    def three_steps() -> dict[str, int]:
        return step_next(step_next(step_one()))  # type: ignore[no-any-return]

    DBOS(config={
        "name": "tickwork-fleet-bench", "log_level": "WARNING",
        "system_database_url": spec["dbos_url"], "dbos_system_schema": spec["schema"],
        "application_version": "bench", "sys_db_pool_size": 10,
    })  # fmt: skip
    if listen is not None:
        DBOS.listen_queues(listen)
    return three_steps


def child_dbos_fire(spec: dict[str, Any]) -> None:
    from dbos import DBOS
    from dbos._dbos import _get_dbos_instance
    from dbos._scheduler import _enqueue_scheduled_workflow

    _dbos(spec, listen=[])
    DBOS.launch()
    sys_db = _get_dbos_instance()._sys_db
    when = datetime.fromisoformat(spec["when"])
    names = [f"s{i}" for i in range(spec["m"])]
    random.Random(spec["index"]).shuffle(names)
    sys_db.get_workflow_status("warm-up")
    _ready_and_wait(Path(spec["dir"]), spec["index"])

    def fire(name: str) -> int:
        workflow_id = f"sched-{name}-{when.isoformat()}"
        if sys_db.get_workflow_status(workflow_id):
            return 0
        _enqueue_scheduled_workflow(sys_db, "noop", when, workflow_id, name, None, None, "fire")
        return 1

    with ThreadPoolExecutor(spec["threads"]) as pool:
        fired = sum(pool.map(fire, names))
    _emit({"end": time.time(), "fired": fired})
    DBOS.destroy()


def child_dbos_enqueue(spec: dict[str, Any]) -> None:
    from dbos import DBOS

    three_steps = _dbos(spec, listen=[])
    DBOS.launch()
    queue = DBOS.register_queue("bench", worker_concurrency=spec["threads"],
                                polling_interval_sec=POLL_S)  # fmt: skip
    began = time.perf_counter()
    for _ in range(spec["m"]):
        queue.enqueue(three_steps)
    _emit({"enqueue_s": time.perf_counter() - began})
    DBOS.destroy()


def child_dbos_run(spec: dict[str, Any]) -> None:
    from dbos import DBOS

    _dbos(spec, listen=None)
    folder = Path(spec["dir"])
    _ready_and_wait(folder, spec["index"])
    began = time.time()
    DBOS.launch()
    launch_s = time.time() - began
    _wait_for_stop(folder)
    DBOS.destroy()
    _emit({"startup_s": launch_s})


CHILDREN = {
    "tickwork-fire": child_tickwork_fire,
    "tickwork-run": child_tickwork_run,
    "dbos-fire": child_dbos_fire,
    "dbos-enqueue": child_dbos_enqueue,
    "dbos-run": child_dbos_run,
}

# -- the driver ----------------------------------------------------------------------


class Database:
    """A fresh place for one trial: a PostgreSQL schema or a SQLite file."""

    def __init__(self, backend: str, pg_url: str, folder: Path) -> None:
        self.backend = backend
        self.pg_url = pg_url
        self.schema = f"bench_{uuid.uuid4().hex[:10]}"
        self._conn: Any = None
        if backend == "sqlite":
            self.url = f"sqlite:///{folder / 'tickwork.db'}"
            self.path = folder / "tickwork.db"
        else:
            import psycopg

            with psycopg.connect(pg_url, autocommit=True) as conn:
                conn.execute(f"CREATE SCHEMA {self.schema}")
            separator = "&" if "?" in pg_url else "?"
            self.url = f"{pg_url}{separator}options={quote(f'-csearch_path={self.schema}')}"

    def count(self, query: str) -> int:
        """One number, on a connection kept for the trial: the driver polls every 10 ms,
        and a connection per poll (a PostgreSQL backend forked each time) would load the
        2 cores it measures."""
        if self.backend == "sqlite":
            with sqlite3.connect(f"file:{self.path}?mode=ro", uri=True) as conn:
                return int(conn.execute(query).fetchone()[0])
        import psycopg

        if self._conn is None:
            self._conn = psycopg.connect(self.url, autocommit=True)
        row = self._conn.execute(query).fetchone()
        assert row is not None
        return int(row[0])

    def drop(self) -> None:
        if self._conn is not None:
            self._conn.close()
        if self.backend != "sqlite":
            import psycopg

            with psycopg.connect(self.pg_url, autocommit=True) as conn:
                conn.execute(f"DROP SCHEMA IF EXISTS {self.schema} CASCADE")


def _spawn(role: str, spec: dict[str, Any]) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, __file__, "--child", json.dumps({**spec, "role": role})],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        env={**os.environ, "PYTHONHASHSEED": "0"},
    )  # fmt: skip


def _finish(procs: list[subprocess.Popen[str]]) -> list[dict[str, Any]]:
    results = []
    for proc in procs:
        out, err = proc.communicate(timeout=WAIT_S)
        if proc.returncode != 0:
            raise SystemExit(f"a child failed ({proc.returncode}):\n{out}\n{err}")
        results.append(json.loads(out.strip().splitlines()[-1]))
    return results


def _run_children(
    role: str, spec: dict[str, Any], n: int, folder: Path, done: Any = None
) -> tuple[float, list[dict[str, Any]]]:
    """Start ``n`` children, release them together; (go time, their results).

    With ``done`` (a callable), wait until it returns true, note the time, then tell the
    children to stop; the elapsed time is then (that time - go).
    """
    procs = [_spawn(role, {**spec, "dir": str(folder), "index": i}) for i in range(n)]
    try:
        deadline = time.monotonic() + WAIT_S
        while len(list(folder.glob("ready.*"))) < n:
            if any(p.poll() is not None for p in procs) or time.monotonic() > deadline:
                _finish(procs)  # raises with the child's output
                raise SystemExit(f"{role}: children did not get ready")
            time.sleep(0.005)
        go = time.time()
        (folder / "go").touch()
        end = None
        if done is not None:
            while not done():
                if any(p.poll() is not None for p in procs) or time.monotonic() > deadline:
                    _finish(procs)
                    raise SystemExit(f"{role}: the work was not done")
                time.sleep(POLL_S)
            end = time.time()
            (folder / "stop").touch()
        results = _finish(procs)
    finally:
        for proc in procs:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
    if end is None:
        end = max(r["end"] for r in results)
    return end - go, results


def trial(spec: dict[str, Any], pg_url: str) -> dict[str, Any]:
    """One measurement: a fresh database, N fresh processes; rate and extra figures."""
    lib, measure, backend, n, m = (spec[k] for k in ("lib", "measure", "backend", "n", "m"))
    with tempfile.TemporaryDirectory(prefix="tickwork-fleet-") as name:
        folder = Path(name)
        db = Database(backend, pg_url, folder)
        try:
            if lib == "tickwork":
                return _tickwork_trial(measure, db, n, m, folder)
            return _dbos_trial(measure, db, n, m, folder, pg_url)
        finally:
            db.drop()


def _tickwork_trial(measure: str, db: Database, n: int, m: int, folder: Path) -> dict[str, Any]:
    from tickwork.testing import FakeClock

    # Schedules are registered at the fake T0 (and fired at T0 + 1 h); runs at the real now.
    engine = _tickwork_engine(db.url, FakeClock(T0) if measure == "firings" else None)
    began = time.perf_counter()
    if measure == "firings":
        for i in range(m):
            engine.schedule("noop", every="1h", key=f"s{i}")
    else:
        for _ in range(m):
            engine.start("three-steps")
    setup_rate = m / (time.perf_counter() - began)
    engine.close()
    spec = {"url": db.url, "threads": THREADS}
    if measure == "firings":
        elapsed, results = _run_children("tickwork-fire", spec, n, folder)
        runs = db.count("SELECT COUNT(*) FROM tickwork_runs")
        if runs != m or sum(r["fired"] for r in results) != m:
            raise SystemExit(f"tickwork fired {runs} runs, reported {results}, expected {m}")
        cpu_ns = sum(r["cpu_ns"] + r["server_cpu_ns"] for r in results)
        return {"rate": m / elapsed, "setup_rate": setup_rate, "startup_s": 0.0,
                "cpu_ms_per_1000": cpu_ns / 1e6 / m * 1000, **_files(results)}  # fmt: skip

    # Done when no run is unfinished (all M were stored before "go"): a count of
    # tickwork_queue, which holds one row per unfinished run and shrinks as they
    # complete, not over every run.
    def done() -> bool:
        return db.count("SELECT COUNT(*) FROM tickwork_queue") == 0

    elapsed, results = _run_children("tickwork-run", spec, n, folder, done)
    completed = db.count("SELECT COUNT(*) FROM tickwork_runs WHERE status = 'completed'")
    if completed != m:
        raise SystemExit(f"tickwork completed {completed} runs, expected {m}")
    startup = statistics.median(r["startup_s"] for r in results)
    return {"rate": m / elapsed, "setup_rate": setup_rate, "startup_s": startup,
            **_files(results)}  # fmt: skip


def _files(results: list[dict[str, Any]]) -> dict[str, str]:
    """Where the trial's driver and each of its processes imported tickwork from."""
    files = {f"process_{i}_tickwork_file": r["tickwork_file"] for i, r in enumerate(results)}
    return {"tickwork_file": _tickwork_file(), **files}


def _dbos_trial(
    measure: str, db: Database, n: int, m: int, folder: Path, pg_url: str
) -> dict[str, Any]:
    spec = {"dbos_url": pg_url, "schema": db.schema, "m": m, "threads": THREADS}
    status = f"{db.schema}.workflow_status"
    if measure == "firings":
        when = datetime(2030, 1, 1, 1, tzinfo=UTC).isoformat()
        elapsed, results = _run_children("dbos-fire", {**spec, "when": when}, n, folder)
        fired = db.count(f"SELECT COUNT(*) FROM {status} WHERE queue_name = 'fire'")
        if fired != m:
            raise SystemExit(f"DBOS fired {fired} workflows, expected {m}")
        return {"rate": m / elapsed, "setup_rate": 0.0, "startup_s": 0.0}
    enqueue = _spawn("dbos-enqueue", {**spec, "dir": str(folder), "index": 0})
    (setup,) = _finish([enqueue])

    def done() -> bool:
        return (
            db.count(
                f"SELECT COUNT(*) FROM {status} WHERE queue_name = 'bench' AND status = 'SUCCESS'"
            )
            >= m
        )

    elapsed, results = _run_children("dbos-run", spec, n, folder, done)
    startup = statistics.median(r["startup_s"] for r in results)
    return {"rate": m / elapsed, "setup_rate": m / setup["enqueue_s"], "startup_s": startup}


def _summary(found: list[dict[str, Any]]) -> dict[str, Any]:
    rates = sorted(r["rate"] for r in found)
    return {
        "rate": statistics.median(rates),
        "low": rates[0],
        "high": rates[-1],
        "setup_rate": statistics.median(r["setup_rate"] for r in found),
        "startup_s": statistics.median(r["startup_s"] for r in found),
    }


def _trial_in_child(spec: dict[str, Any], pg_url: str, env: dict[str, str]) -> dict[str, Any]:
    """``trial`` in a fresh interpreter with ``env`` (its processes inherit it)."""
    out = subprocess.run(
        [sys.executable, __file__, "--trial", json.dumps({"spec": spec, "pg_url": pg_url})],
        capture_output=True, text=True, check=False, env=env, timeout=4 * WAIT_S,
    )  # fmt: skip
    if out.returncode != 0:
        raise SystemExit(f"trial {spec} failed:\n{out.stdout}\n{out.stderr}")
    return json.loads(out.stdout.strip().splitlines()[-1])  # type: ignore[no-any-return]


def _against(
    args: argparse.Namespace, specs: list[dict[str, Any]], pg_url: str, counts: list[int]
) -> int:
    """This tree against a copy of ``args.against``: tickwork's rows, interleaved, each trial
    (its setup and its processes) importing tickwork from its copy."""
    import revisions

    def run(spec: dict[str, Any], tree: revisions.Tree) -> dict[str, Any]:
        return _trial_in_child(spec, pg_url, tree.env())

    def figures(spec: dict[str, Any], result: dict[str, Any]) -> dict[str, float | None]:
        where = f"{spec['measure']} {spec['backend']}"
        found: dict[str, float | None] = {f"{where} {spec['n']} procs, /s": result["rate"]}
        if result.get("cpu_ms_per_1000"):  # PostgreSQL on this machine: lower is better
            cpu = f"{where} {spec['n']} procs, CPU ms per 1,000 (lower is better)"
            found[cpu] = result["cpu_ms_per_1000"]
        if spec["n"] == counts[0]:
            setup = "schedules registered" if spec["measure"] == "firings" else "runs stored"
            found[f"{where} {setup} one call at a time, /s"] = result["setup_rate"]
        return found

    with revisions.trees(args.against) as (this, other):
        print(f"Fleet throughput, tickwork: this tree against {args.against}, median of "
              f"{args.repeat}; firings: M={args.schedules:,}; runs: M={args.runs:,}, "
              f"{THREADS} threads per process")  # fmt: skip
        print(f"python {platform.python_version()}, {os.cpu_count()} CPUs, "
              f"sqlite {sqlite3.sqlite_version}")  # fmt: skip
        print(revisions.describe(this, other), flush=True)
        print()
        jobs = [revisions.Job(spec) for spec in specs]
        found = revisions.interleave(
            jobs, this, other, args.repeat, run, figures, lambda name: "lower is better" in name
        )
    for line in revisions.table(found, args.against):
        print(line)
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--child", help=argparse.SUPPRESS)
    parser.add_argument("--trial", help=argparse.SUPPRESS)
    parser.add_argument(
        "--against", metavar="REV", help="compare with a copy of REV, interleaved (no DBOS)"
    )
    parser.add_argument("--postgres", help="PostgreSQL URL (a database the bench may use)")
    parser.add_argument("--workers", default="1,2,4", help="process counts, comma-separated")
    parser.add_argument("--schedules", type=int, default=10_000, help="M for firings/s")
    parser.add_argument("--runs", type=int, default=2_000, help="M for runs/s")
    parser.add_argument(
        "--dbos-schedules",
        type=int,
        default=3_000,
        help="M for DBOS's firings/s (it fires a few hundred a second)",
    )
    parser.add_argument("--dbos-runs", type=int, default=1_000, help="M for DBOS's runs/s")
    parser.add_argument("--repeat", type=int, default=3, help="repetitions per row (median)")
    parser.add_argument("--only", choices=["firings", "runs"], help="one measure only")
    parser.add_argument("--no-dbos", action="store_true", help="tickwork rows only")
    parser.add_argument("--no-sqlite", action="store_true", help="PostgreSQL rows only")
    parser.add_argument(
        "--quick", action="store_true", help="1 repetition, M of 3,000/1,000 and 1,000/500"
    )
    args = parser.parse_args()

    if args.child:
        spec = json.loads(args.child)
        CHILDREN[spec["role"]](spec)
        return 0
    if args.trial:
        given = json.loads(args.trial)
        print(json.dumps(trial(given["spec"], given["pg_url"])))
        return 0

    try:
        import psycopg

        import tickwork  # noqa: F401
    except ImportError as exc:
        print(f"bench/fleet.py needs tickwork with psycopg ({exc.name} is missing).\n"
              f"From the repository root:\n    python3 -m venv bench/.venv\n    {INSTALL}",
              file=sys.stderr)  # fmt: skip
        return 2
    with_dbos = not args.no_dbos and not args.against
    if with_dbos:
        try:
            import dbos  # noqa: F401
        except ImportError:
            print(f"DBOS is not installed: its column is skipped ({INSTALL})", file=sys.stderr)
            with_dbos = False
    if args.quick:
        args.repeat = 1
        args.schedules, args.dbos_schedules = min(args.schedules, 3_000), 1_000
        args.runs, args.dbos_runs = min(args.runs, 1_000), 500
    pg_url = (
        args.postgres
        or os.environ.get("TICKWORK_BENCH_POSTGRES_URL")
        or os.environ.get("TICKWORK_TEST_POSTGRES_URL")
        or DEFAULT_PG
    )
    counts = [int(n) for n in args.workers.split(",")]
    measures = [args.only] if args.only else ["firings", "runs"]
    backends = ["postgresql"] + ([] if args.no_sqlite else ["sqlite"])

    specs = []
    sizes = {
        ("tickwork", "firings"): args.schedules, ("tickwork", "runs"): args.runs,
        ("dbos", "firings"): args.dbos_schedules, ("dbos", "runs"): args.dbos_runs,
    }  # fmt: skip
    for measure in measures:
        for backend in backends:
            for n in counts:
                for lib in ("tickwork", "dbos"):
                    if lib == "dbos" and (not with_dbos or backend != "postgresql"):
                        continue
                    specs.append({"lib": lib, "measure": measure, "backend": backend, "n": n,
                                  "m": sizes[(lib, measure)]})  # fmt: skip

    if args.against:
        return _against(args, specs, pg_url, counts)
    with psycopg.connect(pg_url, autocommit=True) as conn:
        server = conn.execute("SHOW server_version").fetchone()[0]  # type: ignore[index]
        sync = conn.execute("SHOW synchronous_commit").fetchone()[0]  # type: ignore[index]
    print(f"Fleet throughput, median of {args.repeat}; firings: M={args.schedules:,} due "
          f"schedules (DBOS {args.dbos_schedules:,}); runs: M={args.runs:,} 3-step runs "
          f"(DBOS {args.dbos_runs:,}), {THREADS} threads per process")  # fmt: skip
    print(f"python {platform.python_version()}, {os.cpu_count()} CPUs, PostgreSQL {server} "
          f"(synchronous_commit={sync}), sqlite {sqlite3.sqlite_version}, "
          f"tickwork {_version('tickwork')}"
          + (f", dbos {_version('dbos')}" if with_dbos else ""))  # fmt: skip
    print()
    # Interleaved repetitions: a change in the machine's load falls on every row alike.
    results: list[list[dict[str, Any]]] = [[] for _ in specs]
    for repetition in range(args.repeat):
        print(f"repetition {repetition + 1}/{args.repeat} ", end="", file=sys.stderr, flush=True)
        for index, spec in enumerate(specs):
            results[index].append(trial(spec, pg_url))
            print(".", end="", file=sys.stderr, flush=True)
        print(file=sys.stderr)
    _print_table(specs, [_summary(found) for found in results], counts)
    return 0


def _print_table(
    specs: list[dict[str, Any]], rows: list[dict[str, Any]], counts: list[int]
) -> None:
    by_key = {
        (s["lib"], s["measure"], s["backend"], s["n"]): r for s, r in zip(specs, rows, strict=True)
    }
    header = (
        f"{'measure':<9} {'backend':<10} {'procs':>5} {'tickwork/s':>11} {'(min-max)':>15} "
        f"{'vs 1 proc':>9} {'DBOS/s':>9} {'(min-max)':>13} {'tickwork/DBOS':>13}"
    )
    print(header)
    print("-" * len(header))
    for s, r in zip(specs, rows, strict=True):
        if s["lib"] != "tickwork":
            continue
        key = (s["measure"], s["backend"])
        one = by_key.get(("tickwork", *key, counts[0]))
        scale = f"{r['rate'] / one['rate']:.2f}x" if one else ""
        spread = f"({r['low']:,.0f}-{r['high']:,.0f})"
        line = (
            f"{s['measure']:<9} {s['backend']:<10} {s['n']:>5} {r['rate']:>11,.0f} {spread:>15} "
            f"{scale:>9}"
        )
        peer = by_key.get(("dbos", *key, s["n"]))
        if peer is not None:
            peer_spread = f"({peer['low']:,.0f}-{peer['high']:,.0f})"
            line += f" {peer['rate']:>9,.1f} {peer_spread:>13} {r['rate'] / peer['rate']:>12.1f}x"
        print(line)
    print()
    for s, r in zip(specs, rows, strict=True):
        if s["measure"] == "runs" and s["n"] == counts[0]:
            what = "start()" if s["lib"] == "tickwork" else "queue.enqueue()"
            print(f"{s['lib']:<8} {s['backend']:<10} backlog stored by {what}: "
                  f"{r['setup_rate']:,.0f}/s; worker start-up after go: "
                  f"{r['startup_s'] * 1000:.0f} ms (median)")  # fmt: skip
        if s["measure"] == "firings" and s["lib"] == "tickwork" and s["n"] == counts[0]:
            print(f"tickwork {s['backend']:<10} schedules registered one call at a time: "
                  f"{r['setup_rate']:,.0f}/s")  # fmt: skip


def _version(name: str) -> str:
    from importlib.metadata import version

    return version(name)


if __name__ == "__main__":
    sys.exit(main())
