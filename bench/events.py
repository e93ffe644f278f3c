"""Events: tickwork vs DBOS (issue 31).

1. **Emit-started runs.** tickwork: a workflow subscribed to ``order.paid`` (one
   subscription), the process's worker running (``with engine.worker(threads=8)``); emit N
   events one after another, wait until their N runs are completed. DBOS: the same
   workflow started with ``DBOS.start_workflow`` once per event (what a DBOS user writes
   for "start a run when this happens"), waited for. runs/s = N / (first emit -> last
   completion); the emit share of it is printed too.
2. **Wake-up latency.** A run waits (tickwork ``ctx.wait_for_event("order.paid",
   match={"order_id": n})``; DBOS ``DBOS.recv("order.paid")``); once it is waiting, the
   event is emitted (``engine.emit``; ``DBOS.send``) and the time to the run's next step
   is measured, K times one after another: p50 and p99 in ms.

3. **Wake-up across processes** (``--part cross``): a worker process (``python -m
   tickwork worker``) executes the waiting runs; this process starts each, waits until it
   is ``waiting``, emits, and the run's next step records ``time.monotonic()`` (one clock
   for every process of this machine): emit -> next step, p50/p99. On PostgreSQL the
   worker hears the emit by LISTEN/NOTIFY; on SQLite (no notifications between
   processes) by its poll (1 s by default). DBOS beside it on PostgreSQL: a DBOS process
   runs the workflow (``DBOS.recv``), this one ``DBOSClient.send``s.
4. **Waiting runs cost nothing** (``--part waiting``): 0 and 100,000 runs ``waiting`` for
   ``order.paid`` (each its own ``order_id``: the waits registered as ``wait_for_event``
   leaves them, put in bulk, not timed). A worker process serves them; its CPU (with its
   PostgreSQL server processes) over ``--idle`` seconds is the **idle cost**; then this
   process emits ``order.paid`` events that match no waiting run, one after another:
   the **emit cost** (p50, mean) beside the same with none waiting.

Durability as in ``bench/runs.py``: DBOS opens SQLite with its defaults (rollback
journal, ``synchronous=FULL``); tickwork is measured with its default (WAL,
``synchronous=normal``) and with ``?synchronous=full``, the setting that compares like
with like. Each measure runs in a fresh subprocess on a fresh database file.

Usage (from the repository root)::

    .venv/bin/pip install dbos
    .venv/bin/python bench/events.py            # about a minute
    .venv/bin/python bench/events.py --quick
    bench/.venv/bin/python bench/events.py --part cross,waiting \
        --postgres postgresql://postgres@127.0.0.1:5432/test   # parts 3 and 4, ~3 min
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from tickwork import Context, Engine, On, RunStatus

DEFAULT_PG = "postgresql://postgres@127.0.0.1:5432/test"

# -- tickwork ----------------------------------------------------------------------------


def tickwork_emits(folder: Path, n: int, sync: str) -> dict[str, Any]:
    url = f"sqlite:///{folder / 'tw.db'}" + ("?synchronous=full" if sync == "full" else "")
    engine = Engine(url)

    @engine.workflow("fulfil", on=On("order.paid"))
    def fulfil(ctx: Context, input: dict[str, Any]) -> int:
        return int(input["n"])

    with engine.worker(threads=8):
        began = time.perf_counter()
        run_ids = [engine.emit("order.paid", {"n": i})[0] for i in range(n)]
        emitted = time.perf_counter() - began
        assert len(run_ids) == n
        while len(engine.list_runs(status="completed", limit=n)) < n:
            time.sleep(0.001)
        total = time.perf_counter() - began
    engine.close()
    return {"n": n, "emit_s": emitted, "total_s": total}


def tickwork_wakeups(folder: Path, k: int, sync: str) -> dict[str, Any]:
    url = f"sqlite:///{folder / 'tw.db'}" + ("?synchronous=full" if sync == "full" else "")
    engine = Engine(url)
    woke: dict[int, float] = {}
    done = threading.Condition()

    @engine.workflow("fulfil")
    def fulfil(ctx: Context, input: int) -> None:
        ctx.wait_for_event("order.paid", match={"order_id": input})
        with done:
            woke.setdefault(input, time.perf_counter())
            done.notify_all()

    latencies = []
    with engine.worker(threads=8):
        for i in range(k):
            handle = engine.start("fulfil", i)
            while handle.status() is not RunStatus.WAITING:
                time.sleep(0.0005)
            sent = time.perf_counter()
            engine.emit("order.paid", {"order_id": i})
            with done:
                done.wait_for(lambda i=i: i in woke, timeout=10)
            latencies.append((woke[i] - sent) * 1000)
    engine.close()
    return {"k": k, "latencies_ms": latencies}


# -- DBOS --------------------------------------------------------------------------------


def _dbos(folder: Path) -> Any:
    from dbos import DBOS

    DBOS(config={"name": "tickwork-bench", "log_level": "WARNING",
                 "system_database_url": f"sqlite:///{folder / 'dbos.sqlite'}"})  # fmt: skip
    return DBOS


def dbos_starts(folder: Path, n: int) -> dict[str, Any]:
    from dbos import DBOS

    @DBOS.workflow(name="fulfil")
    def fulfil(payload: dict[str, Any]) -> int:
        return int(payload["n"])

    _dbos(folder)
    DBOS.launch()
    began = time.perf_counter()
    handles = [DBOS.start_workflow(fulfil, {"n": i}) for i in range(n)]
    started = time.perf_counter() - began
    for handle in handles:
        handle.get_result()
    total = time.perf_counter() - began
    DBOS.destroy()
    return {"n": n, "emit_s": started, "total_s": total}


def dbos_wakeups(folder: Path, k: int) -> dict[str, Any]:
    from dbos import DBOS

    woke: dict[int, float] = {}

    @DBOS.workflow(name="fulfil")
    def fulfil(n: int) -> None:
        DBOS.recv("order.paid", timeout_seconds=60)
        woke.setdefault(n, time.perf_counter())

    _dbos(folder)
    DBOS.launch()
    latencies = []
    for i in range(k):
        handle = DBOS.start_workflow(fulfil, i)
        time.sleep(0.02)  # let it reach recv (DBOS shows no "waiting" status to poll)
        sent = time.perf_counter()
        DBOS.send(handle.get_workflow_id(), "paid", "order.paid")
        handle.get_result()
        latencies.append((woke[i] - sent) * 1000)
    DBOS.destroy()
    return {"k": k, "latencies_ms": latencies}


# -- across processes --------------------------------------------------------------------

#: the worker process's app: a run waits, then its next step says when it woke
WAKE_APP = """
import time
from tickwork import Engine

engine = Engine()

@engine.workflow("fulfil")
def fulfil(ctx, input):
    ctx.wait_for_event("order.paid", match={"order_id": input})
    return ctx.step("woke", time.monotonic)
"""


def _waiter(engine: Engine) -> None:
    """The same workflow, registered here so that this process can start it."""

    @engine.workflow("fulfil")
    def fulfil(ctx: Context, input: int) -> float:
        ctx.wait_for_event("order.paid", match={"order_id": input})
        return float(ctx.step("woke", time.monotonic))


def tickwork_cross(url: str, k: int) -> dict[str, Any]:
    """Emit here, wake a run executed by a worker process (see the module's docstring)."""
    import waiting

    engine = Engine(url)
    _waiter(engine)
    engine.migrate()
    latencies = []
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        proc = waiting.start_worker(url, folder, WAKE_APP)
        try:
            waiting.wait_started(folder, proc)
            for i in range(k):
                handle = engine.start("fulfil", i)
                while handle.status() is not RunStatus.WAITING:
                    time.sleep(0.001)
                sent = time.monotonic()
                engine.emit("order.paid", {"order_id": i})
                latencies.append((handle.result(timeout=60) - sent) * 1000)
        finally:
            waiting.stop(proc)
    engine.close()
    return {"k": k, "latencies_ms": latencies}


#: DBOS's worker process: the workflow waits in DBOS.recv, then says when it woke
DBOS_APP = """
import sys, threading, time
from dbos import DBOS

DBOS(config={"name": "tickwork-bench-events", "log_level": "WARNING",
             "system_database_url": sys.argv[1]})

@DBOS.workflow(name="fulfil")
def fulfil(n):
    DBOS.recv("order.paid", timeout_seconds=60)
    return time.monotonic()

DBOS.launch()
DBOS.register_queue("bench")
print("started", flush=True)
threading.Event().wait()
"""


def dbos_cross(url: str, k: int) -> dict[str, Any]:
    """``DBOSClient.send`` here, ``DBOS.recv`` in a DBOS process, on PostgreSQL."""
    import waiting
    from dbos import DBOSClient

    proc = subprocess.Popen(
        [sys.executable, "-c", DBOS_APP, url], stdout=subprocess.PIPE, stderr=subprocess.STDOUT
    )
    try:
        assert proc.stdout is not None
        for line in proc.stdout:
            if b"started" in line:
                break
        else:
            raise RuntimeError("the DBOS process stopped before it started")
        client = DBOSClient(system_database_url=url)
        latencies = []
        for i in range(k):
            handle = client.enqueue({"queue_name": "bench", "workflow_name": "fulfil"}, i)
            while handle.get_status().status != "PENDING":
                time.sleep(0.005)
            time.sleep(0.1)  # let it reach recv (DBOS shows no "waiting" status to poll)
            sent = time.monotonic()
            client.send(handle.get_workflow_id(), "paid", "order.paid")
            latencies.append((handle.get_result() - sent) * 1000)
        client.destroy()
    finally:
        waiting.stop(proc)  # type: ignore[arg-type]
    return {"k": k, "latencies_ms": latencies}


# -- waiting runs cost nothing -------------------------------------------------------------

# ``size`` runs waiting for order.paid, each for its own order_id, as wait_for_event
# leaves them: the run, its queue row (due never), its wait and the wait's shape.
# {numbers} yields n = 1..size; ? is now_ms (twice).
WAITING_RUNS = """
INSERT INTO tickwork_runs (id, workflow, version, status, input, attempt, priority, pool,
    created_at, started_at, attempt_started_at)
SELECT 'wait-' || n, 'fulfil', '1', 'waiting', CAST(n AS TEXT), 1, 0, 'default', ?, ?, ?
FROM {numbers}
"""
WAITING_QUEUE = """
INSERT INTO tickwork_queue (id, workflow, pool, priority, status, available_at, created_at)
SELECT id, workflow, pool, priority, status, 253402300799999, created_at
FROM tickwork_runs WHERE id LIKE 'wait-%'
"""
WAITS = """
INSERT INTO tickwork_waits (run_id, name, paths, match_key, step)
SELECT id, 'order.paid', '["order_id"]', '[' || input || ']', 'order.paid'
FROM tickwork_runs WHERE id LIKE 'wait-%'
"""
SHAPE = "INSERT INTO tickwork_wait_shapes (name, paths) VALUES ('order.paid', '[\"order_id\"]')"


def fill_waiting(url: str, size: int) -> None:
    import sqlite3

    import waiting

    now_ms = int(time.time() * 1000)
    if url.startswith("sqlite:///"):
        path = url.removeprefix("sqlite:///")
        with sqlite3.connect(path) as conn:
            conn.execute(SHAPE)
            if size:
                numbers = waiting.SQLITE_NUMBERS
                conn.execute(WAITING_RUNS.format(numbers=numbers), (now_ms, now_ms, now_ms, size))
                conn.execute(WAITING_QUEUE)
                conn.execute(WAITS)
        with sqlite3.connect(path) as conn:
            conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        return
    import psycopg

    with psycopg.connect(url) as conn:
        conn.execute(SHAPE)  # type: ignore[arg-type]
        if size:
            runs = WAITING_RUNS.format(numbers=waiting.PG_NUMBERS).replace("?", "%s")
            conn.execute(runs, (now_ms, now_ms, now_ms, size))  # type: ignore[arg-type]
            conn.execute(WAITING_QUEUE.replace("%", "%%"))  # type: ignore[arg-type]
            conn.execute(WAITS.replace("%", "%%"))  # type: ignore[arg-type]
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("VACUUM ANALYZE")
        conn.execute("CHECKPOINT")


def tickwork_waiting(url: str, size: int, idle_s: float, emits: int) -> dict[str, Any]:
    """An idle worker's CPU and an emit's cost with ``size`` runs waiting."""
    import waiting

    engine = Engine(url)
    _waiter(engine)
    engine.migrate()
    fill_waiting(url, size)
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        proc = waiting.start_worker(url, folder, WAKE_APP)
        try:
            waiting.wait_started(folder, proc)
            time.sleep(2.0)  # start-up settles
            pids = [proc.pid, *waiting.backends(url)]
            before, t0 = waiting.cpu_of(pids), time.monotonic()
            time.sleep(idle_s)
            after = waiting.cpu_of(pids)
            spent = {p: 100 * (after[p] - before[p]) / (time.monotonic() - t0) for p in after}
            idle = sum(spent.values())
            costs = []
            for i in range(emits):  # matching no waiting run: what finding them costs
                began = time.perf_counter()
                engine.emit("order.paid", {"order_id": -1 - i})
                costs.append((time.perf_counter() - began) * 1000)
        finally:
            waiting.stop(proc)
    engine.close()
    return {
        "waiting": size,
        "idle_cpu_percent": idle,
        "worker_cpu_percent": spent.get(proc.pid, 0.0),  # the rest: its server processes
        "emit_ms": costs,
    }


# -- driver ------------------------------------------------------------------------------

MEASURES = {
    "tickwork_emits": tickwork_emits,
    "tickwork_wakeups": tickwork_wakeups,
    "dbos_starts": dbos_starts,
    "dbos_wakeups": dbos_wakeups,
}
#: measures on a store URL of their own rather than a folder (``_child_on``)
STORE_MEASURES = {
    "tickwork_cross": tickwork_cross,
    "dbos_cross": dbos_cross,
    "tickwork_waiting": tickwork_waiting,
}


def _child(name: str, args: list[Any]) -> dict[str, Any]:
    code = (
        "import json, sys; from pathlib import Path; sys.path.insert(0, 'bench');"
        "import events as b; name, args = sys.argv[1], json.loads(sys.argv[2]);"
        "print(json.dumps(b.MEASURES[name](Path(args[0]), *args[1:])))"
    )
    with tempfile.TemporaryDirectory() as folder:
        out = subprocess.run(
            [sys.executable, "-c", code, name, json.dumps([folder, *args])],
            check=True, capture_output=True, text=True,
        )  # fmt: skip
    return dict(json.loads(out.stdout.strip().splitlines()[-1]))


def _child_on(name: str, url: str, args: list[Any]) -> dict[str, Any]:
    """``STORE_MEASURES[name](url, *args)`` in a fresh subprocess."""
    code = (
        "import json, sys; sys.path.insert(0, 'bench');"
        "import events as b; name, args = sys.argv[1], json.loads(sys.argv[2]);"
        "print(json.dumps(b.STORE_MEASURES[name](*args)))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code, name, json.dumps([url, *args])],
        check=True, capture_output=True, text=True,
    )  # fmt: skip
    return dict(json.loads(out.stdout.strip().splitlines()[-1]))


@contextmanager
def _scratch_database(postgres: str, what: str) -> Iterator[str]:
    """A database of its own on the server of ``postgres``, dropped afterwards: NOTIFY
    reaches every listener of a database, so other sessions' tests on a shared one
    would wake the measured worker."""
    import psycopg

    name = f"tickwork_bench_{what}_{os.getpid()}"
    with psycopg.connect(postgres, autocommit=True) as conn:
        conn.execute(f"CREATE DATABASE {name}")
    try:
        yield postgres.rsplit("/", 1)[0] + f"/{name}"
    finally:
        with psycopg.connect(postgres, autocommit=True) as conn:
            conn.execute(f"DROP DATABASE {name} WITH (FORCE)")


def _percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def cross(options: argparse.Namespace) -> None:
    """Part 3: wake-up latency across processes."""
    import waiting

    # Fewer where each wake-up takes about a second (SQLite's poll, DBOS's queue poll).
    k, slow = (30, 10) if options.quick else (200, 50)
    rows = [("tickwork, PostgreSQL (LISTEN/NOTIFY)", "postgres", k)]
    rows.append(("tickwork, SQLite (the worker's 1 s poll)", "sqlite", slow))
    for label, backend, count in rows:
        with (
            _scratch_database(options.postgres, "events") as postgres,
            waiting.fresh_store(backend, postgres) as url,
        ):
            lat = _child_on("tickwork_cross", url, [count])["latencies_ms"]
        _print_latencies(f"{label} across processes", lat)
    with _scratch_database(options.postgres, "dbos") as url:
        lat = _child_on("dbos_cross", url, [slow * 2])["latencies_ms"]
    _print_latencies("DBOS send -> recv, PostgreSQL, across processes", lat)


def waiting_cost(options: argparse.Namespace) -> None:
    """Part 4: an idle worker's CPU and an emit's cost, 0 vs 100,000 runs waiting."""
    import waiting

    emits = 100 if options.quick else 500
    for backend in ("sqlite", "postgres"):
        found = []
        for size in (0, options.waiting):
            with (
                _scratch_database(options.postgres, "events") as postgres,
                waiting.fresh_store(backend, postgres) as url,
            ):
                found.append(_child_on("tickwork_waiting", url, [size, options.idle, emits]))
            got = found[-1]
            costs = got["emit_ms"]
            own = got["worker_cpu_percent"]
            print(
                f"{backend:<8} {size:>7,} waiting: idle worker {got['idle_cpu_percent']:5.2f} % "
                f"of a core (Python {own:.2f} %); emit p50 {statistics.median(costs):5.2f} ms, "
                f"mean {statistics.fmean(costs):5.2f} ms",
                flush=True,
            )
        none, many = (statistics.median(f["emit_ms"]) for f in found)
        print(f"  {backend}: emit with {options.waiting:,} waiting = {many / none:.2f}x none")


def _print_latencies(label: str, lat: list[float]) -> None:
    p50, p99 = statistics.median(lat), _percentile(lat, 0.99)
    print(f"{label:<58} p50 {p50:6.1f} ms  p99 {p99:6.1f} ms", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="smaller N and K")
    parser.add_argument(
        "--part", default="emits,wakeups", help="of emits, wakeups, cross, waiting (commas)"
    )
    parser.add_argument("--postgres", default=DEFAULT_PG, help="PostgreSQL URL (cross, waiting)")
    parser.add_argument("--waiting", type=int, default=100_000, help="runs waiting (waiting)")
    parser.add_argument("--idle", type=float, default=20.0, help="idle CPU window, seconds")
    parser.add_argument("--repeat", type=int, default=5, help="rounds of the emit rows")
    options = parser.parse_args()
    parts = set(options.part.split(","))
    if "emits" in parts or "wakeups" in parts:
        in_one_process(options, parts)
    if "cross" in parts:
        cross(options)
    if "waiting" in parts:
        waiting_cost(options)


def in_one_process(options: argparse.Namespace, parts: set[str]) -> None:
    """Parts 1 and 2, on SQLite in one process."""
    n, k = (300, 30) if options.quick else (2000, 200)
    if "emits" in parts:
        emit_rates(n, 1 if options.quick else options.repeat)
    if "wakeups" in parts:
        wakeups(k)


def emit_rates(n: int, repeat: int) -> None:
    """Each row ``repeat`` times, the rows interleaved round by round (a machine's slow
    spell falls on every row alike); the median of each row and its range."""
    rows = [
        ("tickwork emit (WAL, normal)", "tickwork_emits", [n, "normal"]),
        ("tickwork emit (WAL, full)", "tickwork_emits", [n, "full"]),
        ("DBOS start_workflow per event", "dbos_starts", [n]),
    ]
    rates: dict[str, list[float]] = {label: [] for label, _, _ in rows}
    shares: dict[str, list[float]] = {label: [] for label, _, _ in rows}
    for _ in range(repeat):
        for label, name, args in rows:
            result = _child(name, args)
            rates[label].append(result["n"] / result["total_s"])
            shares[label].append(result["emit_s"] / result["total_s"])
    medians = {label: statistics.median(values) for label, values in rates.items()}
    for label, values in rates.items():
        share = statistics.median(shares[label])
        print(
            f"{label:<34} {medians[label]:8.0f} runs/s  (range {min(values):.0f}-"
            f"{max(values):.0f}, emit share {share:.0%})"
        )
    dbos_rate = medians[rows[-1][0]]
    for label, _, _ in rows[:-1]:
        print(f"  {label}: {medians[label] / dbos_rate:.1f}x DBOS (medians of {repeat})")


def wakeups(k: int) -> None:
    for label, name, args in [
        ("tickwork wake-up (WAL, normal)", "tickwork_wakeups", [k, "normal"]),
        ("tickwork wake-up (WAL, full)", "tickwork_wakeups", [k, "full"]),
        ("DBOS send -> recv", "dbos_wakeups", [k]),
    ]:
        result = _child(name, args)
        lat = result["latencies_ms"]
        p50, p99 = statistics.median(lat), _percentile(lat, 0.99)
        print(f"{label:<34} p50 {p50:6.1f} ms  p99 {p99:6.1f} ms")


if __name__ == "__main__":
    main()
