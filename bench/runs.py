"""Completed 3-step workflow runs per second on SQLite, one worker process: tickwork vs DBOS.

Every workflow run has three steps, each a trivial function returning a small JSON value
(``{"n": 1}``, then ``{"n": 2}``, ``{"n": 3}``), and returns the last one.

What is timed, the same way for both libraries (the "live" shape): in one process, with
that process's worker already running (tickwork: ``with engine.worker(threads=T)``;
DBOS: ``DBOS.launch()``), start N runs one after another and wait until all N are
completed. runs/s = N / (first start -> last completion). The enqueue share of that time
is printed too. tickwork is also timed on a "backlog": N runs stored first with no worker
running, then drained by ``engine.run_until_idle()`` or ``engine.worker(threads=T)``;
runs/s there = N / (enqueue + drain).

Each measurement runs in a fresh subprocess on a fresh database file, after a warm-up
batch in the same process and database; each is repeated and the median is printed.

Durability is matched, not assumed. DBOS opens its SQLite system database with SQLite's
defaults (rollback journal, ``synchronous=FULL``: every commit survives a power cut); the
script reads both PRAGMAs back from DBOS's own engine and prints them. tickwork uses WAL
with ``synchronous=normal`` by default (survives any process crash; a power cut may lose
the last commits) and ``?synchronous=full`` matches DBOS's power-cut durability. Both
tickwork settings are measured; the ratio that compares like with like is the
``synchronous=full`` one. ``--dbos-wal`` additionally times DBOS switched to WAL +
``synchronous=NORMAL`` (tickwork's default), for a comparison at the lower setting.

Usage (from the repository root)::

    python3 -m venv bench/.venv
    bench/.venv/bin/pip install -e . dbos
    bench/.venv/bin/python bench/runs.py            # about 5 minutes on 2 cores
    bench/.venv/bin/python bench/runs.py --quick    # one repetition, smaller N
    bench/.venv/bin/python bench/runs.py --against main --repeat 5   # this tree vs main

The floor (``bench/floor.py``: the same 3-step run written by hand on the same SQLite
settings) is measured in the same run, interleaved with the other rows, and every
tickwork row is printed as a share of it. ``--against REV`` measures tickwork's rows on a
copy of this tree and a copy of REV, interleaved (``bench/revisions.py``), and prints
this, REV, their ratio and the noise for each (no DBOS rows).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))
import floor  # bench/floor.py, beside this script: the work itself, the same for all

INSTALL = "bench/.venv/bin/pip install -e . dbos"

# -- one measurement, in a child process ---------------------------------------------


def _tickwork_trial(spec: dict[str, Any], folder: Path) -> dict[str, Any]:
    import tickwork
    from tickwork import Engine

    url = f"sqlite:///{folder / 'tickwork.db'}?synchronous={spec['sync']}"
    engine = Engine(url)

    three_steps = engine.workflow("three-steps")(floor.three_steps)

    lock = threading.Lock()
    state = {"done": 0, "target": 0}
    all_done = threading.Event()

    @engine.on_run_completed
    def _count(_info: Any) -> None:
        with lock:
            state["done"] += 1
            if state["done"] >= state["target"]:
                all_done.set()

    def expect(count: int) -> None:
        with lock:
            state["done"], state["target"] = 0, count
            all_done.clear()

    def start_all(count: int) -> float:
        began = time.perf_counter()
        for _ in range(count):
            engine.start(three_steps)
        return time.perf_counter() - began

    engine.migrate()
    n, warmup, threads = spec["n"], spec["warmup"], spec["threads"]
    journal, synchronous = _sqlite_pragmas(engine)

    if spec["mode"] == "live":
        with engine.worker(threads=threads):
            expect(warmup)
            start_all(warmup)
            all_done.wait()
            expect(n)
            began = time.perf_counter()
            enqueue_s = start_all(n)
            all_done.wait()
            total_s = time.perf_counter() - began
    else:  # backlog: store everything first, then drain it
        expect(warmup)
        start_all(warmup)
        if threads == 0:
            engine.run_until_idle()
        else:
            with engine.worker(threads=threads):
                all_done.wait()
        expect(n)
        enqueue_s = start_all(n)
        began = time.perf_counter()
        if threads == 0:
            executed = engine.run_until_idle()
            assert executed == n, executed
        else:
            with engine.worker(threads=threads):
                all_done.wait()
        total_s = enqueue_s + time.perf_counter() - began

    completed = len(engine.list_runs(status="completed", limit=10_000))
    engine.close()
    if completed != n + warmup:
        raise SystemExit(f"only {completed} of {n + warmup} tickwork runs completed")
    return {"n": n, "enqueue_s": enqueue_s, "total_s": total_s,
            "journal_mode": journal, "synchronous": synchronous,
            "tickwork_file": tickwork.__file__}  # fmt: skip


def _sqlite_pragmas(engine: Any) -> tuple[str, str]:
    """What a tickwork connection really runs with (read from one of its connections)."""
    conn = engine._runtime.store._connection()  # a peek inside, for the report only
    journal = conn.execute("PRAGMA journal_mode").fetchone()[0]
    synchronous = conn.execute("PRAGMA synchronous").fetchone()[0]
    return str(journal), _SYNC_NAMES.get(int(synchronous), str(synchronous))


_SYNC_NAMES = {0: "off", 1: "normal", 2: "full", 3: "extra"}


def _dbos_trial(spec: dict[str, Any], folder: Path) -> dict[str, Any]:
    import sqlalchemy as sa
    from dbos import DBOS

    if spec["wal"]:
        # DBOS has no setting for this: every SQLAlchemy engine in this process (DBOS's
        # system database is the only one) gets tickwork's default WAL + NORMAL.
        @sa.event.listens_for(sa.engine.Engine, "connect")
        def _wal(dbapi_conn: Any, _record: Any) -> None:
            dbapi_conn.execute("PRAGMA journal_mode=WAL")
            dbapi_conn.execute("PRAGMA synchronous=NORMAL")

    @DBOS.step()
    def step_one() -> dict[str, int]:
        return floor.first()

    @DBOS.step()
    def step_next(previous: dict[str, int]) -> dict[str, int]:
        return floor.following(previous)

    @DBOS.workflow()
    def three_steps() -> dict[str, int]:
        return step_next(step_next(step_one()))

    DBOS(config={"name": "tickwork-bench", "log_level": "WARNING",
                 "system_database_url": f"sqlite:///{folder / 'dbos.sqlite'}"})  # fmt: skip
    DBOS.launch()
    from dbos._dbos import _get_dbos_instance

    with _get_dbos_instance()._sys_db.engine.connect() as conn:
        journal = conn.execute(sa.text("PRAGMA journal_mode")).scalar()
        synchronous = conn.execute(sa.text("PRAGMA synchronous")).scalar()

    queue = None
    if spec["mode"] == "queue":
        queue = DBOS.register_queue(
            "bench", worker_concurrency=spec["threads"], polling_interval_sec=spec["poll"]
        )

    def start_all(count: int) -> tuple[float, list[Any]]:
        began = time.perf_counter()
        if queue is not None:
            handles = [queue.enqueue(three_steps) for _ in range(count)]
        else:
            handles = [DBOS.start_workflow(three_steps) for _ in range(count)]
        return time.perf_counter() - began, handles

    def wait_all(handles: list[Any]) -> None:
        for handle in handles:
            if queue is not None:  # a queued run's handle polls the database
                result = handle.get_result(polling_interval_sec=0.01)
            else:  # a started run's handle waits on an in-process future
                result = handle.get_result()
            assert result == {"n": 3}, result

    n, warmup = spec["n"], spec["warmup"]
    _, handles = start_all(warmup)
    wait_all(handles)
    began = time.perf_counter()
    enqueue_s, handles = start_all(n)
    wait_all(handles)
    total_s = time.perf_counter() - began
    DBOS.destroy()
    return {"n": n, "enqueue_s": enqueue_s, "total_s": total_s,
            "journal_mode": str(journal),
            "synchronous": _SYNC_NAMES.get(int(synchronous), str(synchronous))}  # fmt: skip


def _trial(spec: dict[str, Any]) -> dict[str, Any]:
    if spec["lib"] == "floor":
        import floor  # bench/floor.py, beside this script

        return floor.measure(spec["n"], batched=spec["batched"], synchronous=spec["sync"],
                             warmup=spec["warmup"])  # fmt: skip
    with tempfile.TemporaryDirectory(prefix="tickwork-bench-") as folder:
        if spec["lib"] == "tickwork":
            return _tickwork_trial(spec, Path(folder))
        return _dbos_trial(spec, Path(folder))


# -- the driver ----------------------------------------------------------------------


def _trial_in_child(spec: dict[str, Any], env: dict[str, str] | None = None) -> dict[str, Any]:
    out = subprocess.run(
        [sys.executable, __file__, "--trial", json.dumps(spec)],
        capture_output=True, text=True, check=False,
        env=env or {**os.environ, "PYTHONHASHSEED": "0"},
    )  # fmt: skip
    if out.returncode != 0:
        raise SystemExit(f"trial {spec} failed:\n{out.stdout}\n{out.stderr}")
    return json.loads(out.stdout.strip().splitlines()[-1])  # type: ignore[no-any-return]


def _summary(spec: dict[str, Any], results: list[dict[str, Any]]) -> dict[str, Any]:
    rates = sorted(r["n"] / r["total_s"] for r in results)
    return {
        "spec": spec,
        "rate": statistics.median(rates),
        "low": rates[0],
        "high": rates[-1],
        "enqueue_rate": statistics.median(r["n"] / r["enqueue_s"] for r in results),
        "journal_mode": results[0]["journal_mode"],
        "synchronous": results[0]["synchronous"],
    }


def _label(spec: dict[str, Any]) -> str:
    if spec["lib"] == "floor":
        return "floor    " + (
            "(b) steps batched" if spec["batched"] else "(a) one transaction per step"
        )
    if spec["lib"] == "tickwork":
        how = "run_until_idle()" if spec["threads"] == 0 else f"worker(threads={spec['threads']})"
        return f"tickwork {spec['mode']:<7} {how}"
    how = (
        "start_workflow()"
        if spec["mode"] == "start"
        else f"queue(worker_concurrency={spec['threads']}, poll={spec['poll']}s)"
    )
    return f"DBOS     {spec['mode']:<7} {how}{' +WAL/NORMAL' if spec['wal'] else ''}"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--trial", help=argparse.SUPPRESS)
    parser.add_argument("--repeat", type=int, default=5, help="repetitions per row (median)")
    parser.add_argument("--n", type=int, default=2000, help="tickwork runs per repetition")
    parser.add_argument("--dbos-n", type=int, default=300, help="DBOS runs per repetition")
    parser.add_argument("--warmup", type=int, default=50, help="warm-up runs per process")
    parser.add_argument("--dbos-wal", action="store_true",
                        help="also time DBOS on WAL + synchronous=NORMAL")  # fmt: skip
    parser.add_argument("--quick", action="store_true", help="1 repetition, N=500/100")
    parser.add_argument("--against", metavar="REV",
                        help="compare with a copy of REV, interleaved (no DBOS rows)")  # fmt: skip
    args = parser.parse_args()

    if args.trial:
        print(json.dumps(_trial(json.loads(args.trial))))
        return 0

    try:
        if not args.against:
            import dbos  # noqa: F401

        import tickwork  # noqa: F401
    except ImportError as exc:
        print(f"bench/runs.py needs tickwork and dbos installed ({exc.name} is missing).\n"
              f"From the repository root:\n    python3 -m venv bench/.venv\n    {INSTALL}\n"
              "then run it with bench/.venv/bin/python bench/runs.py", file=sys.stderr)  # fmt: skip
        return 2
    if args.quick:
        args.repeat, args.n, args.dbos_n = 1, 500, 100

    tw = {"lib": "tickwork", "n": args.n, "warmup": args.warmup}
    db = {"lib": "dbos", "n": args.dbos_n, "warmup": 20, "threads": 8, "poll": 0.01}
    specs = []
    for sync in ("normal", "full"):
        specs += [
            {**tw, "sync": sync, "mode": "live", "threads": 1},
            {**tw, "sync": sync, "mode": "live", "threads": 8},
            {**tw, "sync": sync, "mode": "backlog", "threads": 0},
            {**tw, "sync": sync, "mode": "backlog", "threads": 1},
            {**tw, "sync": sync, "mode": "backlog", "threads": 8},
            # the floor, measured in the same run (bench/floor.py)
            {**tw, "lib": "floor", "sync": sync, "batched": False},
            {**tw, "lib": "floor", "sync": sync, "batched": True},
        ]
    if args.against:
        return _against(args, specs)
    specs += [{**db, "mode": "start", "wal": False}, {**db, "mode": "queue", "wal": False}]
    if args.dbos_wal:
        specs += [{**db, "mode": "start", "wal": True}, {**db, "mode": "queue", "wal": True}]

    print(f"3-step workflow runs on SQLite, one process; median of {args.repeat} "
          f"(tickwork N={args.n}, DBOS N={args.dbos_n}, warm-up {args.warmup}/20)")  # fmt: skip
    print(f"python {platform.python_version()}, {os.cpu_count()} CPUs, "
          f"dbos {_version('dbos')}, tickwork {_version('tickwork')}, "
          f"sqlite {__import__('sqlite3').sqlite_version}")  # fmt: skip
    print()
    header = (
        f"{'configuration':<66} {'journal/sync':<13} {'runs/s':>8} {'(min-max)':>15} {'start/s':>8}"
    )
    print(header)
    print("-" * len(header))
    # Repetitions are interleaved (every configuration once, then again) so that a change
    # in the machine's load during the run falls on every row alike.
    results: list[list[dict[str, Any]]] = [[] for _ in specs]
    for repetition in range(args.repeat):
        print(f"repetition {repetition + 1}/{args.repeat} ", end="", file=sys.stderr, flush=True)
        for index, spec in enumerate(specs):
            results[index].append(_trial_in_child(spec))
            print(".", end="", file=sys.stderr, flush=True)
        print(file=sys.stderr)
    rows = [_summary(spec, found) for spec, found in zip(specs, results, strict=True)]
    for row in rows:
        spread = f"({row['low']:.0f}-{row['high']:.0f})"
        setting = f"{row['journal_mode']}/{row['synchronous']}"
        print(f"{_label(row['spec']):<66} {setting:<13} {row['rate']:>8.1f} {spread:>15} "
              f"{row['enqueue_rate']:>8.0f}")  # fmt: skip

    print()
    floors = {_floor_key(r["spec"]): r["rate"] for r in rows if r["spec"]["lib"] == "floor"}
    tickwork_rows = [(r["spec"], r["rate"]) for r in rows if r["spec"]["lib"] == "tickwork"]
    for line in _floor_shares(tickwork_rows, floors):
        print(line)

    dbos_default = [r for r in rows if r["spec"]["lib"] == "dbos" and not r["spec"]["wal"]]
    best_dbos = max(dbos_default, key=lambda r: r["rate"])
    print()
    best_label = " ".join(_label(best_dbos["spec"]).split())
    print(f"Ratios against DBOS's faster default row, {best_label} "
          f"({best_dbos['rate']:.1f} runs/s, {best_dbos['journal_mode']}/"
          f"{best_dbos['synchronous']}):")  # fmt: skip
    for row in rows:
        if row["spec"]["lib"] == "tickwork":
            same = " (same durability)" if row["synchronous"] == best_dbos["synchronous"] else ""
            print(f"  {_label(row['spec']):<40} sync={row['synchronous']:<7}"
                  f"{row['rate'] / best_dbos['rate']:>7.1f}x{same}")  # fmt: skip
    dbos_wal = [r for r in rows if r["spec"]["lib"] == "dbos" and r["spec"]["wal"]]
    if dbos_wal:
        best_wal = max(dbos_wal, key=lambda r: r["rate"])
        print(f"Against DBOS on WAL/normal ({best_wal['rate']:.1f} runs/s):")
        for row in rows:
            if row["spec"]["lib"] == "tickwork" and row["synchronous"] == "normal":
                print(f"  {_label(row['spec']):<40} sync={row['synchronous']:<7}"
                      f"{row['rate'] / best_wal['rate']:>7.1f}x (same durability)")  # fmt: skip
    return 0


def _floor_key(spec: dict[str, Any]) -> tuple[str, bool]:
    return spec["sync"], spec["batched"]


def _floor_shares(
    rows: list[tuple[dict[str, Any], float]], floors: dict[tuple[str, bool], float]
) -> list[str]:
    """tickwork's runs/s as a share of the floor measured in the same run, same sync."""
    lines = ["tickwork's share of the floor (bench/floor.py) measured in this run, same "
             "synchronous setting: (a) one transaction per step, (b) steps batched"]  # fmt: skip
    for spec, rate in rows:
        a, b = floors[(spec["sync"], False)], floors[(spec["sync"], True)]
        lines.append(f"  {_label(spec):<40} sync={spec['sync']:<7} {100 * rate / a:>5.0f}% of (a)"
                     f" {a:>8,.0f}/s  {100 * rate / b:>5.0f}% of (b) {b:>8,.0f}/s")  # fmt: skip
    return lines


def _against(args: argparse.Namespace, specs: list[dict[str, Any]]) -> int:
    """This tree against a copy of ``args.against``: every tickwork row, interleaved; the
    floor measured alongside (it does not import tickwork: once per repetition)."""
    import revisions

    def run(spec: dict[str, Any], tree: revisions.Tree) -> dict[str, Any]:
        return _trial_in_child(spec, tree.env())

    def figures(spec: dict[str, Any], result: dict[str, Any]) -> dict[str, float | None]:
        return {_figure(spec): result["n"] / result["total_s"]}

    jobs = [revisions.Job(spec, compared=spec["lib"] == "tickwork") for spec in specs]
    with revisions.trees(args.against) as (this, other):
        print(f"3-step workflow runs on SQLite, one process, runs/s; median of {args.repeat} "
              f"(N={args.n}, warm-up {args.warmup}); python {platform.python_version()}, "
              f"{os.cpu_count()} CPUs, sqlite {__import__('sqlite3').sqlite_version}")  # fmt: skip
        print(revisions.describe(this, other), flush=True)
        print()
        found = revisions.interleave(jobs, this, other, args.repeat, run, figures)
    for line in revisions.table(found, args.against):
        print(line)
    by_name = {c.name: c for c in found}
    floors = {
        _floor_key(spec): statistics.median(by_name[_figure(spec)].this)
        for spec in specs
        if spec["lib"] == "floor"
    }
    for side, label in (("this", "this"), ("other", args.against)):
        medians = [
            (spec, statistics.median(getattr(by_name[_figure(spec)], side)))
            for spec in specs
            if spec["lib"] == "tickwork"
        ]
        print()
        print(f"[{label}] " + "\n".join(_floor_shares(medians, floors)))
    return 0


def _figure(spec: dict[str, Any]) -> str:
    return f"{' '.join(_label(spec).split())} sync={spec['sync']}"


def _version(name: str) -> str:
    from importlib.metadata import version

    return version(name)


if __name__ == "__main__":
    sys.exit(main())
