"""Registering declared schedules at start-up: N schedules per second, PostgreSQL and SQLite.

A deployment declares N schedules (``Engine(schedules=[...])``, the same path as
``@engine.workflow(schedule=...)`` and tickwork.toml); every worker registers them when it
starts. Three rows per backend, each a fresh subprocess on a fresh database (a new
PostgreSQL schema, dropped afterwards, or a new SQLite file):

- *one at a time*: ``engine.add_schedule(spec)`` for each declared spec in a loop, what
  ``sync_schedules()`` did before schedules were registered in bulk (and what a user's
  loop over ``engine.schedule(...)`` still does);
- *sync_schedules, new*: ``engine.sync_schedules()`` on the empty schema: N inserts;
- *sync_schedules, again*: a second ``sync_schedules()`` of the same N, nothing changed
  (every later start of a worker).

schedules/s = N / wall time of the call(s), after the schema was migrated and the specs
built (``Engine(...)`` validates the declarations; that is not timed). The registering
process's CPU time per schedule is printed beside it: on a loaded machine it says what the
wall time would be with a core to itself (the database server's work is not in it).
The schedules are intervals from 1 to 50 minutes and a few crons, each with its own key
and input. Each configuration runs ``--repeat`` times, interleaved; the median is printed
with min-max.

Usage (from the repository root; PostgreSQL from ``--postgres``,
``TICKWORK_BENCH_POSTGRES_URL`` or ``TICKWORK_TEST_POSTGRES_URL``)::

    bench/.venv/bin/pip install -e '.[postgres]'
    PYTHONPATH=$PWD/src bench/.venv/bin/python bench/registration.py     # 3-10 min
    PYTHONPATH=$PWD/src bench/.venv/bin/python bench/registration.py -n 2000 --repeat 1
    bench/.venv/bin/python bench/registration.py --modes new,again \\
        --src after=$PWD/src --src before=/tmp/old/src      # two trees, interleaved
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path
from urllib.parse import quote

DEFAULT_PG = "postgresql://postgres@127.0.0.1:5432/test"
MODES = ("one", "new", "again")
LABELS = {
    "one": "one at a time (add_schedule loop)",
    "new": "sync_schedules(), new",
    "again": "sync_schedules(), again",
}


def declarations(n: int) -> list[dict[str, object]]:
    """N declared schedules of one workflow: intervals and crons, each with its input."""
    found: list[dict[str, object]] = []
    for i in range(n):
        entry: dict[str, object] = {"workflow": "job", "key": f"s{i:06d}", "input": {"n": i}}
        if i % 10 == 9:
            entry["cron"] = f"{i % 60} {i % 24} * * *"
        else:
            entry["every"] = f"{1 + i % 50}m"
        found.append(entry)
    return found


def trial(url: str, n: int, mode: str) -> tuple[float, float]:
    """Wall and CPU seconds (this process's) to register N declared schedules the way
    ``mode`` says."""
    from tickwork import Engine

    with Engine(url, schedules=declarations(n)) as engine:

        @engine.workflow("job")
        def job(ctx: object, input: dict[str, int] | None = None) -> None:
            return None

        engine.migrate()
        if mode == "again":
            engine.sync_schedules()
        specs = engine._declarations.specs(engine._registry)  # what sync_schedules registers
        started, cpu = time.perf_counter(), time.process_time()
        if mode == "one":
            for spec in specs:
                engine.add_schedule(spec)
        else:
            engine.sync_schedules()
        elapsed, cpu = time.perf_counter() - started, time.process_time() - cpu
        assert len(engine.list_schedules()) == n
    return elapsed, cpu


class FreshDatabase:
    """A new PostgreSQL schema (dropped on exit) or a new SQLite file."""

    def __init__(self, backend: str, pg_url: str, directory: Path) -> None:
        self.backend, self.pg_url = backend, pg_url
        self.schema = f"bench_{uuid.uuid4().hex[:10]}"
        self.url = f"sqlite:///{directory / (self.schema + '.db')}"

    def __enter__(self) -> str:
        if self.backend == "postgresql":
            import psycopg

            with psycopg.connect(self.pg_url, autocommit=True) as conn:
                conn.execute(f"CREATE SCHEMA {self.schema}")  # type: ignore[arg-type]
            separator = "&" if "?" in self.pg_url else "?"
            option = quote(f"-csearch_path={self.schema}")
            self.url = f"{self.pg_url}{separator}options={option}"
        return self.url

    def __exit__(self, *exc: object) -> None:
        if self.backend == "postgresql":
            import psycopg

            with psycopg.connect(self.pg_url, autocommit=True) as conn:
                conn.execute(f"DROP SCHEMA IF EXISTS {self.schema} CASCADE")  # type: ignore[arg-type]


def measure(
    backend: str, mode: str, n: int, pg_url: str, directory: Path, src: str | None
) -> tuple[float, float]:
    """schedules/s of one trial, in a fresh subprocess on a fresh database (importing
    tickwork from ``src`` when given), and that process's CPU microseconds per schedule."""
    env = dict(os.environ) if src is None else {**os.environ, "PYTHONPATH": src}
    with FreshDatabase(backend, pg_url, directory) as url:
        done = subprocess.run(
            [sys.executable, __file__, "--trial", json.dumps([url, n, mode])],
            check=True,
            capture_output=True,
            text=True,
            env=env,
        )
    elapsed, cpu = json.loads(done.stdout.strip().splitlines()[-1])
    return n / elapsed, cpu * 1e6 / n


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("-n", type=int, default=10_000, help="schedules (default 10,000)")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--postgres", help="PostgreSQL URL (a database the bench may use)")
    parser.add_argument("--only", choices=["postgresql", "sqlite"], help="one backend")
    parser.add_argument("--modes", default=",".join(MODES), help="one,new,again")
    parser.add_argument(
        "--src",
        action="append",
        metavar="LABEL=PATH",
        help="compare source trees (a src directory each), interleaved; default: as installed",
    )
    parser.add_argument("--trial", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.trial:
        url, n, mode = json.loads(args.trial)
        print(json.dumps(trial(url, n, mode)))
        return
    pg_url = (
        args.postgres
        or os.environ.get("TICKWORK_BENCH_POSTGRES_URL")
        or os.environ.get("TICKWORK_TEST_POSTGRES_URL")
        or DEFAULT_PG
    )
    backends = [args.only] if args.only else ["postgresql", "sqlite"]
    modes = args.modes.split(",")
    trees = [tuple(tree.split("=", 1)) for tree in args.src] if args.src else [("", None)]
    rates: dict[tuple[str, str, str], list[float]] = {}
    cpus: dict[tuple[str, str, str], list[float]] = {}
    with tempfile.TemporaryDirectory() as directory:
        for _ in range(args.repeat):  # interleaved: load changes hit every row alike
            for backend in backends:
                for mode in modes:
                    for label, src in trees:
                        row = (label, backend, mode)
                        rate, cpu = measure(backend, mode, args.n, pg_url, Path(directory), src)
                        rates.setdefault(row, []).append(rate)
                        cpus.setdefault(row, []).append(cpu)
    print(f"{args.n:,} declared schedules, {args.repeat} repetitions; schedules/s")
    print(f"{'backend':<11} {'what':<46} {'median':>8}  {'min-max':<14} client CPU µs each")
    for (label, backend, mode), found in rates.items():
        what = f"{LABELS[mode]} [{label}]" if label else LABELS[mode]
        spread = f"{min(found):,.0f}-{max(found):,.0f}"
        median, cpu = statistics.median(found), statistics.median(cpus[label, backend, mode])
        print(f"{backend:<11} {what:<46} {median:>8,.0f}  {spread:<14} {cpu:,.0f}")
    print(f"load average: {os.getloadavg()[0]:.1f} {os.getloadavg()[1]:.1f}")


if __name__ == "__main__":
    main()
