"""The scheduler side by side: tickwork vs APScheduler 3 (SQLAlchemy job store), both on SQLite.

Four measures, each taken in a fresh subprocess on a fresh database file:

(a) registrations/s: register 10,000 and 100,000 cron schedules one call at a time
    (tickwork ``engine.schedule(wf, cron=..., key=...)``; APScheduler ``add_job(fn,
    CronTrigger.from_crontab(...), id=..., replace_existing=True)`` on a started, paused
    scheduler, so each call writes to the job store). APScheduler is capped at
    ``--aps-cap`` timed calls (a few hundred per second would take minutes): the store is
    first filled to the target size minus the cap by a bulk insert of pickled jobs, then the
    cap is timed and the rate is reported as measured on that full store.
(b) idle CPU: a worker whose database holds the schedules of (a), none due for weeks
    (yearly crons in January; the date is printed). tickwork: the real ``tickwork worker
    app.py:engine`` process; APScheduler: a ``BackgroundScheduler`` on the job store.
    CPU = user + system time of the whole process from /proc over the window, after start-up.
(c) firings/s with 10,000 schedules due at once. tickwork: registered under a
    ``FakeClock``, the clock advanced one interval, ``engine.tick()`` timed (3 rounds, the
    median). APScheduler: the jobs stored already due (bulk insert, ``misfire_grace_time``
    unbounded), the scheduler started and the time to its N-th ``EVENT_JOB_SUBMITTED``
    taken (its firing also hands each job to the thread pool and updates the store).
(d) firing lateness for 50 and 1,000 schedules every second, for ``--seconds`` of real
    time, all aligned to the same whole second (the hardest case: all due at once), no-op
    job. tickwork: ``created_at - scheduled_for`` of the runs (the instant the firing pass
    began; every run of a pass has the same ``created_at``) and ``started_at -
    scheduled_for`` (when the run began executing, with the worker's default 8 threads).
    APScheduler: listener time at ``EVENT_JOB_SUBMITTED`` - scheduled run time, and at
    ``EVENT_JOB_EXECUTED`` (a no-op job, so about when it started). Occurrences in the
    first second are left out (warm-up). Missed or undecided occurrences are counted.
    ``--fire-ahead 500ms`` runs tickwork's workers with ``Engine(fire_ahead=...)``: its
    ``allow`` occurrences are decided that long before they come, so their lateness is
    negative (created, visible) until a pass takes longer than that.

Usage (from the repository root)::

    python3 -m venv bench/.venv
    bench/.venv/bin/pip install -e . 'apscheduler<4' sqlalchemy
    bench/.venv/bin/python bench/scheduler.py            # full: about 6 minutes on 2 cores
    bench/.venv/bin/python bench/scheduler.py --quick    # about 1.5 minutes, smaller sizes
    bench/.venv/bin/python bench/scheduler.py --against main   # tickwork: this tree vs main
    bench/.venv/bin/python bench/scheduler.py --only d --fire-ahead 500ms \
        --postgres postgresql://postgres@127.0.0.1:5432/test   # (d) with fire_ahead

Exits non-zero only when a tickwork measurement fails; a missing peer is skipped.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import math
import os
import pickle
import platform
import signal
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from types import SimpleNamespace
from typing import Any
from urllib.parse import quote

WATCH_MS = 5
IMPORTED_FROM = "tickwork imported from"
INSTALL = "bench/.venv/bin/pip install -e . 'apscheduler<4' sqlalchemy"
TICKWORK_CLI = Path(sys.executable).parent / "tickwork"
# A tickwork app for the worker processes: one no-op workflow; the database comes from
# TICKWORK_DATABASE_URL. It logs where tickwork was imported from (``--against`` checks it).
APP = """
import sys

import tickwork
from tickwork import Engine

print("{marker}", tickwork.__file__, file=sys.stderr, flush=True)

engine = Engine({options})


@engine.workflow("noop")
def noop(ctx, input=None):
    return None
"""


def noop() -> None:
    """The APScheduler job (module-level so the job store can pickle a reference to it)."""


def cron_for(i: int) -> str:
    """Distinct yearly crons in January: none is due for weeks from December."""
    return f"{i % 60} {(i // 60) % 24} {1 + (i // 1440) % 28} 1 *"


def cpu_seconds(pid: int) -> float:
    """User + system CPU time of a whole process (all threads) from /proc."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def lateness_summary(values: list[float]) -> dict[str, float | None]:
    if not values:
        return {"p50": None, "p99": None, "max": None}
    return {"p50": percentile(values, 0.5), "p99": percentile(values, 0.99), "max": max(values)}


def fresh_db(folder: Path, name: str) -> Path:
    path = folder / name
    for suffix in ("", "-wal", "-shm", "-journal"):
        Path(f"{path}{suffix}").unlink(missing_ok=True)
    return path


# -- tickwork children ---------------------------------------------------------------


def tw_url(db: Path | str) -> str:
    """A store's URL: a PostgreSQL URL as given (measure (d) with --postgres), or a file."""
    return str(db) if str(db).startswith("postgresql") else f"sqlite:///{db}"


def tw_engine(db: Path | str, clock: Any = None) -> Any:
    from tickwork import Engine

    engine = Engine(tw_url(db), clock=clock)

    @engine.workflow("noop")
    def _noop(ctx: Any, input: Any = None) -> None:
        return None

    engine.migrate()
    return engine


def engine_file() -> str:
    import tickwork

    return tickwork.__file__


def tw_register(db: str, n: int) -> dict[str, Any]:
    engine = tw_engine(Path(db))
    start = time.perf_counter()
    for i in range(n):
        engine.schedule("noop", cron=cron_for(i), key=f"s{i}")
    elapsed = time.perf_counter() - start
    engine.close()
    return {"rate": n / elapsed, "n": n, "seconds": elapsed, "tickwork_file": engine_file()}


def start_worker(
    db: Path | str, folder: Path, fire_ahead: str | None = None
) -> subprocess.Popen[bytes]:
    app = folder / "bench_app.py"
    options = f"fire_ahead={fire_ahead!r}" if fire_ahead else ""
    app.write_text(APP.format(options=options, marker=IMPORTED_FROM))
    env = {k: v for k, v in os.environ.items() if not k.startswith("TICKWORK_")}
    env.update(TICKWORK_DATABASE_URL=tw_url(db), PYTHONUNBUFFERED="1")
    log = open(folder / "worker.log", "wb")  # noqa: SIM115 - closed with the process
    return subprocess.Popen(
        [str(TICKWORK_CLI), "worker", f"{app}:engine", "--log-level", "INFO"],
        env=env, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
    )  # fmt: skip


def wait_for_log(folder: Path, proc: subprocess.Popen[bytes], text: str, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    log = folder / "worker.log"
    while text not in log.read_text(errors="replace"):
        if proc.poll() is not None or time.monotonic() > deadline:
            raise RuntimeError(f"worker did not start:\n{log.read_text(errors='replace')}")
        time.sleep(0.05)


def worker_file(folder: Path) -> str:
    """The ``tickwork.__file__`` the worker process logged."""
    for line in (folder / "worker.log").read_text(errors="replace").splitlines():
        if line.startswith(IMPORTED_FROM):
            return line.removeprefix(IMPORTED_FROM).strip()
    return "(not logged)"


def stop(proc: subprocess.Popen[bytes]) -> None:
    proc.send_signal(signal.SIGTERM)
    try:
        proc.wait(60)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


def measure_idle(pid: int, seconds: float) -> float:
    """Percent of one core used by ``pid`` over ``seconds``."""
    before, t0 = cpu_seconds(pid), time.monotonic()
    time.sleep(seconds)
    after, t1 = cpu_seconds(pid), time.monotonic()
    return 100 * (after - before) / (t1 - t0)


def tw_idle(db: str, seconds: float) -> dict[str, Any]:
    folder = Path(db).parent
    proc = start_worker(db, folder)
    try:
        wait_for_log(folder, proc, "started", 120)
        time.sleep(1.0)  # let start-up settle
        percent = measure_idle(proc.pid, seconds)
        if proc.poll() is not None:
            raise RuntimeError("worker exited during the idle measurement")
    finally:
        stop(proc)
    return {"cpu_percent": percent, "worker_tickwork_file": worker_file(folder)}


def tw_fire(db: str, n: int, rounds: int) -> dict[str, Any]:
    from tickwork.testing import FakeClock

    clock = FakeClock(datetime(2026, 11, 30, tzinfo=UTC))
    engine = tw_engine(Path(db), clock)
    for i in range(n):
        engine.schedule("noop", every="1h", key=f"s{i}")
    rates = []
    for _ in range(rounds):
        clock.advance("1h")
        start = time.perf_counter()
        fired = engine.tick()
        elapsed = time.perf_counter() - start
        if len(fired) != n:
            raise RuntimeError(f"tick fired {len(fired)} runs, expected {n}")
        rates.append(n / elapsed)
    engine.close()
    return {"rate": statistics.median(rates), "rates": rates, "tickwork_file": engine_file()}


def watch_runs(db: Path | str, seen: dict[str, float], done: threading.Event) -> None:
    """Note when each run first becomes visible in the database (a committed firing).

    Polls every ``WATCH_MS`` for rows past the highest rowid seen, on a read-only
    connection (WAL: it never blocks the worker). Reads tickwork's table directly: the
    instant a run's transaction committed is stored nowhere. PostgreSQL: the rows created
    since the newest ``created_at`` seen (a firing pass stamps its runs with the time it
    began, and a worker's passes follow one another, so later commits are not older).
    """
    if tw_url(db).startswith("postgresql"):
        watch_postgres_runs(str(db), seen, done)
        return
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    last = 0
    while not done.is_set():
        rows = conn.execute(
            "SELECT rowid, id FROM tickwork_runs WHERE rowid > ? ORDER BY rowid", (last,)
        ).fetchall()
        now = time.time()
        for rowid, run_id in rows:
            seen.setdefault(run_id, now)
            last = rowid
        time.sleep(WATCH_MS / 1000)
    conn.close()


def watch_postgres_runs(url: str, seen: dict[str, float], done: threading.Event) -> None:
    import psycopg

    with psycopg.connect(url, autocommit=True) as conn:
        since = 0
        while not done.is_set():
            rows = conn.execute(
                "SELECT id, created_at FROM tickwork_runs WHERE created_at >= %s", (since,)
            ).fetchall()
            now = time.time()
            for run_id, created in rows:
                seen.setdefault(run_id, now)
                since = max(since, created)
            time.sleep(WATCH_MS / 1000)


def tw_lateness(db: str, n: int, seconds: float, fire_ahead: str | None = None) -> dict[str, Any]:
    folder = Path(db).parent if not db.startswith("postgresql") else Path(tempfile.mkdtemp())
    engine = tw_engine(db)
    # Aligned to a whole second a little ahead, past registration and worker start-up.
    first = math.ceil(time.time() + n / 1000 + 3)
    start_at = datetime.fromtimestamp(first, UTC)
    for i in range(n):
        engine.schedule("noop", every="1s", key=f"s{i}", start_at=start_at)
    proc = start_worker(db, folder, fire_ahead)
    seen: dict[str, float] = {}
    done = threading.Event()
    watcher = threading.Thread(target=watch_runs, args=(db, seen, done), daemon=True)
    try:
        wait_for_log(folder, proc, "started", 120)
        watcher.start()
        cpu0 = cpu_seconds(proc.pid)
        window_start = max(first + 1, math.ceil(time.time())) + 1  # warm-up left out
        window_end = window_start + seconds
        while time.time() < window_end + 1.5:
            time.sleep(0.2)
        cpu = 100 * (cpu_seconds(proc.pid) - cpu0) / (time.time() - window_start + 1)
    finally:
        done.set()
        stop(proc)
    watcher.join()
    created, started, visible, count = [], [], [], 0
    lo = datetime.fromtimestamp(window_start, UTC)
    hi = datetime.fromtimestamp(window_end, UTC)
    for i in range(n):
        for run in engine.list_runs(schedule_key=f"s{i}", limit=10_000):
            if run.scheduled_for is None or not lo <= run.scheduled_for < hi:
                continue
            count += 1
            if run.id in seen:
                visible.append(1000 * seen[run.id] - run.scheduled_for.timestamp() * 1000)
            created.append((run.created_at - run.scheduled_for) / timedelta(milliseconds=1))
            if run.started_at is not None:
                started.append((run.started_at - run.scheduled_for) / timedelta(milliseconds=1))
    engine.close()
    expected = n * int(seconds)
    return {
        "created": lateness_summary(created), "started": lateness_summary(started),
        "visible": lateness_summary(visible), "fired": count, "expected": expected,
        "not_started": count - len(started), "worker_cpu_percent": cpu,
        "tickwork_file": engine_file(), "worker_tickwork_file": worker_file(folder),
    }  # fmt: skip


# -- APScheduler children ------------------------------------------------------------


def aps_scheduler(db: Path, **job_defaults: Any) -> Any:
    from apscheduler.jobstores.sqlalchemy import SQLAlchemyJobStore
    from apscheduler.schedulers.background import BackgroundScheduler

    store = SQLAlchemyJobStore(url=f"sqlite:///{db}")
    return BackgroundScheduler(
        jobstores={"default": store}, timezone=UTC, job_defaults=job_defaults
    )


def aps_bulk_fill(db: Path, n: int, trigger: Any, next_run: datetime, **job_defaults: Any) -> None:
    """Store ``n`` pickled jobs in one transaction (building a big store, not timed).

    No scheduler runs here: one that is shut down may still process due jobs once.
    """
    from apscheduler.job import Job
    from apscheduler.jobstores.sqlalchemy import SQLAlchemyJobStore
    from apscheduler.util import datetime_to_utc_timestamp

    options: dict[str, Any] = {"misfire_grace_time": 1, "coalesce": False, **job_defaults}
    owner = SimpleNamespace(timezone=UTC)  # all a Job asks of its scheduler here
    template = Job(owner, id="template", func=noop, trigger=trigger, executor="default",
                   args=(), kwargs={}, name="noop", max_instances=1, next_run_time=next_run,
                   **options).__getstate__()  # fmt: skip
    store = SQLAlchemyJobStore(url=f"sqlite:///{db}")
    store.jobs_t.create(store.engine, checkfirst=True)
    rows = []
    for i in range(n):
        state = dict(template, id=f"bulk{i}")
        rows.append({
            "id": state["id"], "next_run_time": datetime_to_utc_timestamp(next_run),
            "job_state": pickle.dumps(state, store.pickle_protocol),
        })  # fmt: skip
    with store.engine.begin() as conn:
        conn.execute(store.jobs_t.insert(), rows)
    store.engine.dispose()


def aps_register(db: str, total: int, cap: int) -> dict[str, Any]:
    from apscheduler.triggers.cron import CronTrigger

    far = datetime(2027, 1, 1, tzinfo=UTC)
    if total > cap:
        aps_bulk_fill(Path(db), total - cap, CronTrigger.from_crontab("0 0 1 1 *", UTC), far)
    scheduler = aps_scheduler(Path(db))
    scheduler.start(paused=True)  # started, so add_job writes to the store at once
    start = time.perf_counter()
    for i in range(cap):
        scheduler.add_job(noop, CronTrigger.from_crontab(cron_for(i), UTC), id=f"s{i}",
                          replace_existing=True)  # fmt: skip
    elapsed = time.perf_counter() - start
    scheduler.shutdown(wait=False)
    return {"rate": cap / elapsed, "n": cap, "seconds": elapsed}


def aps_idle_process(db: str) -> None:
    """Child of ``aps_idle``: a BackgroundScheduler on the store until SIGTERM."""
    stopped = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stopped.set())
    scheduler = aps_scheduler(Path(db))
    scheduler.start()
    print("started", flush=True)
    stopped.wait()
    scheduler.shutdown(wait=False)


def aps_idle(db: str, n: int, seconds: float) -> dict[str, Any]:
    from apscheduler.triggers.cron import CronTrigger

    aps_bulk_fill(Path(db), n, CronTrigger.from_crontab("0 0 1 1 *", UTC),
                  datetime(2027, 1, 1, tzinfo=UTC))  # fmt: skip
    folder = Path(db).parent
    log = open(folder / "worker.log", "wb")  # noqa: SIM115
    proc = subprocess.Popen([sys.executable, __file__, "--child", "aps_idle_process",
                             json.dumps([db])], stdout=log, stderr=subprocess.STDOUT)  # fmt: skip
    try:
        wait_for_log(folder, proc, "started", 120)
        time.sleep(1.0)
        percent = measure_idle(proc.pid, seconds)
    finally:
        stop(proc)
    return {"cpu_percent": percent}


def aps_fire(db: str, n: int) -> dict[str, Any]:
    from apscheduler.events import EVENT_JOB_SUBMITTED
    from apscheduler.triggers.interval import IntervalTrigger

    now = datetime.now(UTC)
    aps_bulk_fill(Path(db), n, IntervalTrigger(hours=1, start_date=now - timedelta(hours=1)),
                  now - timedelta(seconds=1), misfire_grace_time=None)  # fmt: skip
    done = threading.Event()
    submitted = [0]

    def on_submitted(event: Any) -> None:
        submitted[0] += 1
        if submitted[0] == n:
            done.set()

    scheduler = aps_scheduler(Path(db))
    scheduler.add_listener(on_submitted, EVENT_JOB_SUBMITTED)
    start = time.perf_counter()
    scheduler.start()
    finished = done.wait(600)
    elapsed = time.perf_counter() - start
    scheduler.shutdown(wait=False)
    if not finished:
        raise RuntimeError(f"only {submitted[0]} of {n} jobs submitted")
    return {"rate": n / elapsed}


def aps_lateness(db: str, n: int, seconds: float) -> dict[str, Any]:
    from apscheduler.events import (
        EVENT_JOB_EXECUTED,
        EVENT_JOB_MISSED,
        EVENT_JOB_SUBMITTED,
    )  # fmt: skip
    from apscheduler.triggers.interval import IntervalTrigger

    submitted: list[tuple[float, float]] = []
    executed: list[tuple[float, float]] = []
    missed: list[float] = []
    lock = threading.Lock()

    def listener(event: Any) -> None:
        now = time.time()
        with lock:
            if event.code == EVENT_JOB_SUBMITTED:
                submitted.extend((t.timestamp(), now) for t in event.scheduled_run_times)
            elif event.code == EVENT_JOB_EXECUTED:
                executed.append((event.scheduled_run_time.timestamp(), now))
            else:
                missed.append(event.scheduled_run_time.timestamp())

    first = math.ceil(time.time() + n / 150 + 3)  # add_job runs at a few hundred per second
    start_date = datetime.fromtimestamp(first, UTC)
    scheduler = aps_scheduler(Path(db))
    scheduler.add_listener(listener, EVENT_JOB_SUBMITTED | EVENT_JOB_EXECUTED | EVENT_JOB_MISSED)
    scheduler.start(paused=True)
    for i in range(n):
        scheduler.add_job(noop, IntervalTrigger(seconds=1, start_date=start_date), id=f"s{i}")
    scheduler.resume()
    cpu0 = time.process_time()
    window_start = max(first + 1, math.ceil(time.time())) + 1
    window_end = window_start + seconds
    while time.time() < window_end + 1.5:
        time.sleep(0.2)
    cpu = 100 * (time.process_time() - cpu0) / (time.time() - window_start + 1)
    scheduler.shutdown(wait=False)

    def window(pairs: list[tuple[float, float]]) -> list[float]:
        return [1000 * (at - due) for due, at in pairs if window_start <= due < window_end]

    in_missed = [due for due in missed if window_start <= due < window_end]
    sub = window(submitted)
    return {
        "created": lateness_summary(sub), "started": lateness_summary(window(executed)),
        "fired": len(sub), "expected": n * int(seconds), "missed": len(in_missed),
        "worker_cpu_percent": cpu,
    }  # fmt: skip


CHILDREN = {
    f.__name__: f
    for f in (
        tw_register,
        tw_idle,
        tw_fire,
        tw_lateness,
        aps_register,
        aps_idle_process,
        aps_idle,
        aps_fire,
        aps_lateness,
    )
}


# -- the parent ----------------------------------------------------------------------


def child(
    name: str, *args: Any, timeout: float = 1800, env: dict[str, str] | None = None
) -> dict[str, Any]:
    """Run one measurement in a fresh interpreter; its result, or {"error": ...}."""
    proc = subprocess.run(
        [sys.executable, __file__, "--child", name, json.dumps(args)],
        capture_output=True, text=True, timeout=timeout, env=env,
    )  # fmt: skip
    lines = proc.stdout.strip().splitlines()
    if proc.returncode != 0 or not lines:
        return {"error": (proc.stderr or proc.stdout).strip().splitlines()[-1:] or ["failed"]}
    return json.loads(lines[-1])  # type: ignore[no-any-return]


def peer_available() -> str | None:
    """APScheduler 3's version, or None when it (or SQLAlchemy) is missing."""
    probe = ("import apscheduler, sqlalchemy; v = apscheduler.__version__; "
             "assert v.startswith('3.'), v; print(v)")  # fmt: skip
    proc = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True)
    return proc.stdout.strip() if proc.returncode == 0 else None


def machine() -> str:
    model = "unknown CPU"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return (f"{platform.system()} {platform.machine()}, {os.cpu_count()} cores ({model}), "
            f"Python {platform.python_version()}, SQLite {sqlite3.sqlite_version}")  # fmt: skip


def fmt_rate(result: dict[str, Any] | None) -> str:
    if result is None:
        return "skipped"
    if "error" in result:
        return "FAILED"
    return f"{result['rate']:,.0f}/s"


def fmt_late(result: dict[str, Any] | None, kind: str) -> str:
    if result is None:
        return "skipped"
    if "error" in result:
        return "FAILED"
    late = result[kind]
    if late["p50"] is None:
        return "no firings"
    return f"{late['p50']:.0f} / {late['p99']:.0f} ms"


def value(result: dict[str, Any] | None, *path: str) -> float | None:
    """``result[path[0]][path[1]]...``, or None when skipped, failed or empty."""
    current: Any = result
    for part in path:
        if not isinstance(current, dict) or part not in current:
            return None
        current = current[part]
    return current if isinstance(current, (int, float)) else None


def ratio(tw: float | None, aps: float | None, higher_is_better: bool) -> str:
    """How many times better tickwork is (> 1) or worse (< 1) than APScheduler."""
    if tw is None or aps is None:
        return "-"
    if higher_is_better:
        return f"{tw / aps:.1f}x" if aps else "-"
    tw, aps = max(tw, 0.5), max(aps, 0.5)  # below resolution (1 ms, 0.5%): counted as 0.5
    return f"{aps / tw:.1f}x"


@contextlib.contextmanager
def postgres_schema(base: str) -> Iterator[str]:
    """A URL on a fresh schema of the PostgreSQL at ``base``, dropped afterwards."""
    import psycopg

    schema = f"bench_sched_{os.getpid()}_{int(time.time() * 1000)}"
    with psycopg.connect(base, autocommit=True) as conn:
        conn.execute(f"CREATE SCHEMA {schema}")
    separator = "&" if "?" in base else "?"
    try:
        yield f"{base}{separator}options={quote(f'-csearch_path={schema}')}"
    finally:
        with psycopg.connect(base, autocommit=True) as conn:
            conn.execute(f"DROP SCHEMA {schema} CASCADE")


def against(args: argparse.Namespace, sizes: list[int], idle_seconds: float, seconds: float) -> int:
    """This tree against a copy of ``args.against``: tickwork's measures only (the peer is
    the same on both sides), each in fresh processes importing tickwork from its copy."""
    import revisions

    jobs: list[tuple[str, int, str]] = []  # (measure, size, backend)
    jobs += [("a", n, "sqlite") for n in sizes if "a" in args.only]
    jobs += [("b", sizes[-1], "sqlite")] if "b" in args.only else []
    jobs += [("c", 10_000, "sqlite")] if "c" in args.only else []
    for backend in ["sqlite"] + (["postgres"] if args.postgres else []):
        jobs += [("d", n, backend) for n in (50, 1_000) if "d" in args.only]

    def run(job: tuple[str, int, str], tree: revisions.Tree) -> dict[str, Any]:
        measure, n, backend = job
        env = tree.env()
        with tempfile.TemporaryDirectory(prefix="tw-sched-against-") as tmp:
            db = str(Path(tmp) / "tickwork.db")
            if measure == "a":
                result = child("tw_register", db, n, env=env)
            elif measure == "b":
                result = child("tw_register", db, n, env=env)
                if "error" not in result:
                    idle = child("tw_idle", db, idle_seconds, env=env)
                    result = {**idle, "tickwork_file": result["tickwork_file"]}
            elif measure == "c":
                result = child("tw_fire", db, n, 3, env=env)
            elif backend == "postgres":
                with postgres_schema(args.postgres) as url:
                    result = child("tw_lateness", url, n, seconds, args.fire_ahead, env=env)
            else:
                result = child("tw_lateness", db, n, seconds, args.fire_ahead, env=env)
        if "error" in result:
            raise SystemExit(f"{job} on {tree.label} failed: {result['error']}")
        return result

    def figures(job: tuple[str, int, str], r: dict[str, Any]) -> dict[str, float | None]:
        measure, n, backend = job
        if measure == "a":
            return {f"(a) register {n:,} cron schedules, /s": r["rate"]}
        if measure == "b":
            return {f"(b) idle worker CPU, {n:,} schedules, % core (lower is better)":
                    r["cpu_percent"]}  # fmt: skip
        if measure == "c":
            return {f"(c) firings/s, {n:,} due at once": r["rate"]}
        where = f"(d) {n:,} x every 1 s{', PostgreSQL' if backend == 'postgres' else ''}:"
        found: dict[str, float | None] = {
            f"{where} {kind} {q} ms (lower is better)": r[kind][q]
            for kind in ("created", "visible", "started")
            for q in ("p50", "p99")
        }
        found[f"{where} % of occurrences fired"] = 100 * r["fired"] / r["expected"]
        found[f"{where} worker CPU % (lower is better)"] = r["worker_cpu_percent"]
        return found

    repeat = args.repeat or (1 if args.quick else 3)
    with revisions.trees(args.against) as (this, other):
        print(f"# tickwork scheduler: this tree against {args.against} "
              f"({'quick' if args.quick else 'full'} sizes, median of {repeat})")  # fmt: skip
        print(f"date: {datetime.now(UTC):%Y-%m-%d %H:%M} UTC")
        print(f"machine: {machine()}")
        print(revisions.describe(this, other), flush=True)
        print()
        found = revisions.interleave(
            [revisions.Job(job) for job in jobs], this, other, repeat, run, figures,
            lower_is_better=lambda name: "lower is better" in name,
        )  # fmt: skip
    for line in revisions.table(found, args.against):
        print(line)
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="smaller sizes, shorter windows")
    parser.add_argument(
        "--aps-cap",
        type=int,
        default=None,
        help="APScheduler add_job calls timed in (a) (default 2000, quick 300)",
    )
    parser.add_argument(
        "--seconds", type=float, default=None, help="lateness window in (d) (default 30, quick 8)"
    )
    parser.add_argument("--only", default="abcd", help="which measures, e.g. 'ad'")
    parser.add_argument(
        "--postgres",
        help="also measure tickwork's (d) on this PostgreSQL (a schema of its own, dropped)",
    )
    parser.add_argument(
        "--fire-ahead",
        default=None,
        help="(d): tickwork's workers fire this long ahead, Engine(fire_ahead=...), e.g. 500ms",
    )
    parser.add_argument(
        "--against",
        metavar="REV",
        help="compare tickwork's measures with a copy of revision REV, interleaved",
    )
    parser.add_argument(
        "--repeat", type=int, default=None, help="--against: repetitions (default 3, quick 1)"
    )
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args, rest = parser.parse_known_args()
    if args.child:
        if args.child == "aps_idle_process":
            aps_idle_process(*json.loads(rest[0]))
            return 0
        print(json.dumps(CHILDREN[args.child](*json.loads(rest[0]))))
        return 0

    quick = args.quick
    sizes = [10_000] if quick else [10_000, 100_000]
    idle_n = sizes[-1]
    idle_seconds = 5.0 if quick else 20.0
    cap = args.aps_cap or (300 if quick else 2000)
    seconds = args.seconds or (8.0 if quick else 30.0)
    if args.against:
        return against(args, sizes, idle_seconds, seconds)
    aps_version = peer_available()
    print(f"# tickwork scheduler vs APScheduler 3 ({'quick' if quick else 'full'} run)")
    print(f"date: {datetime.now(UTC):%Y-%m-%d %H:%M} UTC")
    print(f"machine: {machine()}")
    if aps_version is None:
        print(f"APScheduler 3 + SQLAlchemy not installed: {INSTALL}  (its column is skipped)")
    else:
        print(f"peer: APScheduler {aps_version}, SQLAlchemyJobStore on SQLite (pysqlite defaults)")
    print("tickwork: SQLite WAL, synchronous=normal (its default)\n", flush=True)

    rows: list[tuple[str, str, str, str, str]] = []
    failed = False
    with tempfile.TemporaryDirectory(prefix="tw-sched-bench-") as tmp:
        folder = Path(tmp)
        big_tw_db = None
        if "a" in args.only or "b" in args.only:
            for n in sizes if "a" in args.only else [idle_n]:
                db = fresh_db(folder, f"tw-reg-{n}.db")
                tw = child("tw_register", str(db), n)
                big_tw_db = db if n == idle_n else big_tw_db
                aps = None
                if aps_version and "a" in args.only:
                    aps = child("aps_register", str(fresh_db(folder, f"aps-reg-{n}.db")), n,
                                min(cap, n))  # fmt: skip
                failed |= "error" in tw
                print(f"(a) {n:,}: tickwork {tw}  apscheduler {aps}", flush=True)
                if "a" in args.only:
                    rows.append((f"(a) register {n:,} cron schedules (higher is better)",
                                 fmt_rate(tw), fmt_rate(aps) + (f" [{min(cap, n):,} timed]"
                                 if aps and "error" not in aps else ""),
                                 ratio(value(tw, "rate"), value(aps, "rate"), True),
                                 ">= 5,000/s"))  # fmt: skip
        if "b" in args.only:
            tw = child("tw_idle", str(big_tw_db), idle_seconds)
            aps = None
            if aps_version:
                aps = child("aps_idle", str(fresh_db(folder, "aps-idle.db")), idle_n,
                            idle_seconds)  # fmt: skip
            failed |= "error" in tw
            print(f"(b) idle: tickwork {tw}  apscheduler {aps}", flush=True)

            def pct(r: dict[str, Any] | None) -> str:
                if r is None:
                    return "skipped"
                return "FAILED" if "error" in r else f"{r['cpu_percent']:.2f}% core"

            rows.append((f"(b) idle worker CPU, {idle_n:,} schedules, {idle_seconds:.0f} s "
                         "(lower is better)", pct(tw), pct(aps),
                         ratio(value(tw, "cpu_percent"), value(aps, "cpu_percent"), False),
                         "<= 0.5% core"))  # fmt: skip
        if "c" in args.only:
            n = 10_000
            tw = child("tw_fire", str(fresh_db(folder, "tw-fire.db")), n, 3)
            aps = None
            if aps_version:
                aps = child("aps_fire", str(fresh_db(folder, "aps-fire.db")), n if not quick
                            else 2_000)  # fmt: skip
            failed |= "error" in tw
            print(f"(c) fire: tickwork {tw}  apscheduler {aps}", flush=True)
            rows.append((f"(c) firings/s, {n:,} due at once (higher is better)", fmt_rate(tw),
                         fmt_rate(aps) + (" [2,000 due]" if quick and aps else ""),
                         ratio(value(tw, "rate"), value(aps, "rate"), True),
                         ">= 20,000/s"))  # fmt: skip
        if "d" in args.only:
            ahead = f", tickwork fire_ahead={args.fire_ahead}" if args.fire_ahead else ""
            for n, backend in [(50, "sqlite"), (1_000, "sqlite")] + (
                [(50, "postgres"), (1_000, "postgres")] if args.postgres else []
            ):
                if backend == "postgres":
                    with postgres_schema(args.postgres) as url:
                        tw = child("tw_lateness", url, n, seconds, args.fire_ahead)
                    print(f"(d) {n} on PostgreSQL: tickwork {tw}", flush=True)
                    failed |= "error" in tw
                    for kind in ("created", "visible", "started"):
                        rows.append((f"(d) {n:,} x every 1 s, {seconds:.0f} s{ahead}, PostgreSQL: "
                                     f"tickwork {kind} p50 / p99", fmt_late(tw, kind), "", "",
                                     ""))  # fmt: skip
                    continue
                tw = child("tw_lateness", str(fresh_db(folder, f"tw-late-{n}.db")), n, seconds,
                           args.fire_ahead)  # fmt: skip
                aps = None
                if aps_version:
                    aps = child("aps_lateness", str(fresh_db(folder, f"aps-late-{n}.db")), n,
                                seconds)  # fmt: skip
                failed |= "error" in tw
                print(f"(d) {n}: tickwork {tw}\n    apscheduler {aps}", flush=True)
                # (tickwork measure, APScheduler measure, label, target)
                for tw_kind, aps_kind, label, target in (
                    ("created", "created", "fired (tw: created_at; aps: submitted)",
                     "p50 <= 5, p99 <= 20 ms"),
                    ("visible", "created", f"fired (tw: run visible, polled {WATCH_MS} ms; "
                     "aps: submitted)", ""),
                    ("started", "started", "started (tw: started_at; aps: executed)", ""),
                ):  # fmt: skip
                    rows.append((f"(d) {n:,} x every 1 s, {seconds:.0f} s{ahead}: lateness {label} "
                                 "p50 / p99", fmt_late(tw, tw_kind), fmt_late(aps, aps_kind),
                                 ratio(value(tw, tw_kind, "p99"), value(aps, aps_kind, "p99"),
                                       False),
                                 target))  # fmt: skip

                def counts(r: dict[str, Any] | None) -> str:
                    if r is None or "error" in r:
                        return "-"
                    extra = f", {r['missed']} missed" if "missed" in r else ""
                    return (f"{r['fired']:,}/{r['expected']:,} fired{extra}, "
                            f"CPU {r['worker_cpu_percent']:.0f}%")  # fmt: skip

                rows.append((f"(d) {n:,}: occurrences fired / expected, process CPU",
                             counts(tw), counts(aps), "", ""))  # fmt: skip

    headers = ("measure", "tickwork", "APScheduler 3", "tickwork better by", "target")
    widths = [max(len(str(r[i])) for r in [headers, *rows]) for i in range(5)]
    print()
    for row in [headers, tuple("-" * w for w in widths), *rows]:
        print(" | ".join(str(c).ljust(w) for c, w in zip(row, widths, strict=True)).rstrip())
    print(
        "\n'tickwork better by': APScheduler / tickwork for lower-is-better measures, "
        "tickwork / APScheduler for higher-is-better ones; < 1.0x means tickwork is worse."
    )
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
