"""How much of a 3-step run's cost on SQLite is its SQL alone: tickwork's statements for N
runs, recorded, then replayed bare beside the floor.

tickwork starts N of ``bench/runs.py``'s 3-step runs with ``engine.start`` and drains them
with ``run_until_idle()`` on a fresh file, while every statement its writer connection
sends (with its parameters) and every commit is recorded. The same sequence is then sent
again, statement by statement from a plain loop, to a fresh file migrated the same way
and opened with the store's settings (WAL, ``synchronous=normal``, ``foreign_keys=ON``,
the writer's ``wal_autocheckpoint``): what the run costs with no Python of tickwork's
around its SQL. ``bench/floor.py``'s (a) is measured in the same process, so the report
says how far the SQL alone bounds tickwork's share of the floor::

    bench/.venv/bin/python bench/sql_replay.py --n 3000 --repeat 3
    bench/.venv/bin/python bench/sql_replay.py --n 3000 --statements   # each statement's cost
    bench/.venv/bin/python bench/sql_replay.py --drop tickwork_runs_created \
        --skip "INSERT INTO tickwork_counters"   # the same without an index, a statement

(The replay runs no passive-checkpoint thread; the WAL grows to its autocheckpoint, as
in the recording's file between the store's checkpoints.)
"""

from __future__ import annotations

import argparse
import sqlite3
import statistics
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))
import floor  # bench/floor.py, beside this script

Op = tuple[int, str, str | None, tuple[Any, ...]]  # connection, kind, statement, parameters
RECORDED: list[Op] = []
RECORDING = [False]
_connect = sqlite3.connect


class _Cursor(sqlite3.Cursor):
    def execute(self, sql: str, params: Any = ()) -> Any:  # type: ignore[override]
        if RECORDING[0]:
            RECORDED.append((id(self.connection), "execute", sql, tuple(params)))
        return super().execute(sql, params)

    def executemany(self, sql: str, rows: Any) -> Any:  # type: ignore[override]
        rows = [tuple(row) for row in rows]
        if RECORDING[0]:
            RECORDED.append((id(self.connection), "executemany", sql, tuple(rows)))
        return super().executemany(sql, rows)


class _Connection(sqlite3.Connection):
    def cursor(self, factory: Any = _Cursor) -> Any:  # type: ignore[override]
        return super().cursor(factory)

    def execute(self, sql: str, params: Any = ()) -> Any:  # type: ignore[override]
        return self.cursor().execute(sql, params)

    def commit(self) -> None:
        if RECORDING[0]:
            RECORDED.append((id(self), "commit", None, ()))
        super().commit()


def _recording_connect(*args: Any, **kwargs: Any) -> sqlite3.Connection:
    return _connect(*args, **{**kwargs, "factory": _Connection})


def _engine(folder: Path) -> tuple[Any, Any]:
    """A migrated engine on a new file, with the floor's 3-step workflow (its step
    functions: the same work as floor (a) and bench/runs.py)."""
    from tickwork import Engine

    engine = Engine(f"sqlite:///{folder / 'tickwork.db'}")

    three_steps = engine.workflow("three-steps")(floor.three_steps)

    engine.migrate()
    return engine, three_steps


def record(n: int) -> tuple[float, list[Op]]:
    """tickwork's wall seconds for N runs (start + drain) and its writer's statements."""
    sqlite3.connect = _recording_connect  # type: ignore[assignment]
    try:
        engine, workflow = _engine(Path(tempfile.mkdtemp(prefix="tickwork-replay-")))
    finally:
        sqlite3.connect = _connect
    RECORDED.clear()
    RECORDING[0] = True
    began = time.perf_counter()
    for _ in range(n):
        engine.start(workflow)
    assert engine.run_until_idle() == n
    took = time.perf_counter() - began
    RECORDING[0] = False
    engine.close()
    writer = next(c for c, _, sql, _ in RECORDED if sql and sql.startswith("BEGIN IMMEDIATE"))
    return took, [
        op for op in RECORDED if op[0] == writer and not (op[2] or "").startswith("PRAGMA")
    ]


def replay(
    ops: list[Op],
    costs: Counter[str] | None = None,
    drop: Sequence[str] = (),
    skip: Sequence[str] = (),
) -> float:
    """Send ``ops`` to a fresh migrated file from a plain loop; the wall seconds. ``drop``:
    indexes dropped from that file first; ``skip``: statements that begin so left out
    (what the run would cost without them)."""
    if skip:
        ops = [op for op in ops if not (op[2] or "").startswith(tuple(skip))]
    folder = Path(tempfile.mkdtemp(prefix="tickwork-replay-"))
    engine, _ = _engine(folder)
    engine.close()
    conn = _connect(folder / "tickwork.db", isolation_level=None, check_same_thread=False)
    for index in drop:
        conn.execute(f"DROP INDEX {index}")  # a name given on the command line
    for pragma in (*floor.PRAGMAS, *floor.WRITER_PRAGMAS):
        conn.execute(pragma.format(level="normal"))
    cursor, last = conn.cursor(), "?"
    began = time.perf_counter()
    for _, kind, sql, params in ops:
        at = time.perf_counter()
        if kind == "commit":
            conn.commit()
            name = f"COMMIT after {last}"
        else:
            assert sql is not None
            if kind == "executemany":
                cursor.executemany(sql, params)
            else:
                cursor.execute(sql, params).fetchall()
            name = last = " ".join(sql.split())[:64]
        if costs is not None:
            costs[name] += time.perf_counter() - at
    took = time.perf_counter() - began
    conn.close()
    return took


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--n", type=int, default=3000, help="runs per repetition")
    parser.add_argument("--repeat", type=int, default=3, help="repetitions (medians)")
    parser.add_argument("--statements", action="store_true", help="each statement's cost")
    parser.add_argument(
        "--drop", action="append", default=[], metavar="INDEX",
        help="also replay with this index dropped (repeatable: all dropped together)",
    )  # fmt: skip
    parser.add_argument(
        "--skip", action="append", default=[], metavar="PREFIX",
        help="... and without the statements that begin with PREFIX (repeatable)",
    )  # fmt: skip
    args = parser.parse_args()
    import tickwork

    n, rows = args.n, {"tickwork": [], "its SQL replayed bare": [], "floor (a)": []}
    without = "... without " + ", ".join([*args.drop, *(f"{p}..." for p in args.skip)])
    if args.drop or args.skip:
        rows[without] = []
    costs: Counter[str] = Counter()
    for _ in range(args.repeat):
        took, ops = record(n)
        rows["tickwork"].append(took)
        rows["its SQL replayed bare"].append(replay(ops, costs if args.statements else None))
        if args.drop or args.skip:
            rows[without].append(replay(ops, drop=args.drop, skip=args.skip))
        measured = floor.measure(n, batched=False, synchronous="normal")
        rows["floor (a)"].append(measured["total_s"])
    print(f"tickwork from {tickwork.__file__}; {n} runs, median of {args.repeat}; "
          f"{len(ops) / n:.1f} statements and commits a run")  # fmt: skip
    floor_s = statistics.median(rows["floor (a)"])
    for name, seconds in rows.items():
        median = statistics.median(seconds)
        print(f"  {name:<28} {median / n * 1e6:7.0f} µs a run  {n / median:7.0f} runs/s  "
              f"{floor_s / median:5.0%} of floor (a)")  # fmt: skip
    if args.statements:
        print("per run, by statement (summed over the repetitions' replays):")
        for name, seconds in costs.most_common():
            print(f"  {seconds / (n * args.repeat) * 1e6:6.1f} µs  {name}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
