"""Child runs per second, tickwork vs DBOS side by side: a parent fanning out over N
children of one trivial step each and joining them (issue 49, DESIGN §10).

tickwork: ``ctx.map("leaf", range(N))``, the N children inserted in one transaction,
counted off the parent's join as each ends. DBOS: ``DBOS.start_workflow(leaf, n)`` per
child from the parent workflow, then ``get_result()`` on each handle (its documented
fan-out). Both in one process with their worker running, on a fresh SQLite database each
(DBOS's SQLite system database, tickwork's default file); with ``--pg URL`` also on
PostgreSQL (a fresh schema each).

Printed per N: children/s = N / (parent started -> parent completed), the cost per child
(µs), and the parent's wake-up: from its last child's end to the parent resumed, median
and p99 over ``--wakes`` parents of one child each (tickwork only: DBOS's parent polls).
Each trial runs in a fresh subprocess; the median of ``--repeat`` trials is printed.

Usage (from the repository root)::

    python3 -m venv bench/.venv
    bench/.venv/bin/pip install -e . dbos
    bench/.venv/bin/python bench/children.py                 # N = 100 and 10,000
    bench/.venv/bin/python bench/children.py --big           # and 100,000 (tickwork)
    bench/.venv/bin/python bench/children.py --pg postgresql://postgres@127.0.0.1:5432/test
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
from pathlib import Path
from typing import Any

from tickwork import Context, Engine

INSTALL = "bench/.venv/bin/pip install -e . dbos"


def _tickwork_trial(spec: dict[str, Any], folder: Path) -> dict[str, Any]:
    url = spec.get("url") or f"sqlite:///{folder / 'tickwork.db'}"
    engine = Engine(url)
    engine.migrate()
    woke: dict[str, float] = {}

    @engine.workflow("leaf")
    def leaf(ctx: Context, n: int) -> int:
        return ctx.step("double", lambda: n * 2)

    @engine.workflow("parent")
    def parent(ctx: Context, count: int) -> int:
        results = ctx.map("leaf", list(range(count)))
        woke.setdefault(ctx.run_id, time.time())
        return len(results)

    n = spec["n"]
    with engine.worker(threads=8, poll_interval="50ms"):
        began = time.perf_counter()
        handle = engine.start("parent", n)
        assert handle.result(timeout=3600) == n
        total_s = time.perf_counter() - began
        wakes = []
        for k in range(spec["wakes"]):
            one = engine.start("parent", 1, run_id=f"wake-{k}")
            one.result(timeout=60)
            (child,) = engine.list_runs(parent=one.id)
            assert child.finished_at is not None
            wakes.append(woke[one.id] - child.finished_at.timestamp())
    engine.close()
    return {"n": n, "total_s": total_s, "wakes_ms": [w * 1000 for w in wakes]}


def _dbos_trial(spec: dict[str, Any], folder: Path) -> dict[str, Any]:
    from dbos import DBOS

    @DBOS.step()
    def double(n: int) -> int:
        return n * 2

    @DBOS.workflow()
    def leaf(n: int) -> int:
        return double(n)

    @DBOS.workflow()
    def parent(count: int) -> int:
        handles = [DBOS.start_workflow(leaf, n) for n in range(count)]
        return len([h.get_result() for h in handles])

    url = spec.get("url") or f"sqlite:///{folder / 'dbos.sqlite'}"
    DBOS(config={"name": "tickwork-bench", "log_level": "WARNING",
                 "system_database_url": url})  # fmt: skip
    DBOS.launch()
    n = spec["n"]
    began = time.perf_counter()
    assert DBOS.start_workflow(parent, n).get_result() == n
    total_s = time.perf_counter() - began
    DBOS.destroy()
    return {"n": n, "total_s": total_s, "wakes_ms": []}


def _fresh_pg(base: str) -> str:
    """A fresh database on the server of ``base`` (each trial its own)."""
    import uuid

    import psycopg

    name = f"bench_children_{uuid.uuid4().hex[:12]}"
    with psycopg.connect(base, autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    return base.rsplit("/", 1)[0] + "/" + name


def _trial(spec: dict[str, Any]) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="tickwork-children-") as folder:
        if spec.get("pg"):
            url = _fresh_pg(spec["pg"])
            spec = {**spec, "url": url.replace("postgresql://", "postgresql+psycopg://")
                    if spec["lib"] == "dbos" else url}  # fmt: skip
        if spec["lib"] == "tickwork":
            return _tickwork_trial(spec, Path(folder))
        return _dbos_trial(spec, Path(folder))


def _in_child(spec: dict[str, Any]) -> dict[str, Any]:
    out = subprocess.run(
        [sys.executable, __file__, "--trial", json.dumps(spec)],
        capture_output=True, text=True, check=False, env={**os.environ, "PYTHONHASHSEED": "0"},
    )  # fmt: skip
    if out.returncode != 0:
        raise SystemExit(f"trial {spec} failed:\n{out.stdout}\n{out.stderr}")
    return json.loads(out.stdout.strip().splitlines()[-1])  # type: ignore[no-any-return]


def _p99(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--trial", help=argparse.SUPPRESS)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--big", action="store_true", help="also N = 100,000 (tickwork)")
    parser.add_argument("--dbos-max", type=int, default=10_000, help="largest N for DBOS")
    parser.add_argument("--wakes", type=int, default=50, help="one-child parents timed")
    parser.add_argument("--pg", help="also on PostgreSQL: a server URL (fresh databases)")
    args = parser.parse_args()
    if args.trial:
        print(json.dumps(_trial(json.loads(args.trial))))
        return
    try:
        import dbos  # noqa: F401
    except ImportError:
        raise SystemExit(f"bench/children.py needs dbos: {INSTALL}") from None
    sizes = [100, 10_000] + ([100_000] if args.big else [])
    backends = [("sqlite", None)] + ([("postgres", args.pg)] if args.pg else [])
    print(f"children/s: a parent joining N one-step children; median of {args.repeat}; "
          f"python {sys.version.split()[0]}, {os.cpu_count()} CPUs")  # fmt: skip
    print(f"{'backend':9} {'N':>8}  {'tickwork/s':>11} {'µs/child':>9}  {'dbos/s':>9} "
          f"{'ratio':>7}  {'wake p50 ms':>11} {'p99 ms':>7}")  # fmt: skip
    for backend, pg in backends:
        for n in sizes:
            rows: dict[str, list[dict[str, Any]]] = {"tickwork": [], "dbos": []}
            for _ in range(args.repeat):  # interleaved: the machine's noise on both
                for lib in ("tickwork", "dbos"):
                    if lib == "dbos" and n > args.dbos_max:
                        continue
                    wakes = args.wakes if lib == "tickwork" and n == sizes[0] else 0
                    spec = {"lib": lib, "n": n, "wakes": wakes, "pg": pg}
                    rows[lib].append(_in_child(spec))
            ours = statistics.median(n / r["total_s"] for r in rows["tickwork"])
            theirs = (
                statistics.median(n / r["total_s"] for r in rows["dbos"]) if rows["dbos"] else None
            )
            wakes = [w for r in rows["tickwork"] for w in r["wakes_ms"]]
            print(
                f"{backend:9} {n:>8,}  {ours:>11,.0f} {1e6 / ours:>9,.0f}  "
                + (f"{theirs:>9,.0f} {ours / theirs:>6.1f}x" if theirs else f"{'—':>9} {'—':>7}")
                + (f"  {statistics.median(wakes):>11.1f} {_p99(wakes):>7.1f}" if wakes else "")
            )


if __name__ == "__main__":
    main()
