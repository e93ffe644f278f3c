"""The physical floor: a hand-written durable 3-step run on SQLite, tickwork's settings.

What a durable workflow run cannot do without, written by hand on one connection, single
thread, with the SQLite settings tickwork's store uses (``src/tickwork/_store/sqlite.py``:
pages of 1 KiB, WAL, ``synchronous`` as chosen (``normal`` by default), ``foreign_keys=ON``,
every write in ``BEGIN IMMEDIATE``, the writer checkpointing only past 64 MiB of log while
a thread of its own runs a passive checkpoint 0.25 s after commits). Two tables: ``runs`` and
``steps``. A run is

- started: one transaction inserts it ``pending``;
- claimed: one transaction picks the oldest pending run and marks it ``running``;
- executed: three trivial steps (``{"n": 1}``, ``{"n": 2}``, ``{"n": 3}``, as in
  ``bench/runs.py``), each checkpointed (its output stored) and then
- completed: one transaction stores the output and marks it ``completed``.

Two rows: (a) each step checkpointed in its own transaction (6 commits per run, what a
durable run needs so that a crash between steps does not run a finished step again);
(b) the steps batched into the completing transaction (3 commits per run: a crash re-runs
all the steps). runs/s = N / (start all N + claim, execute and complete them all), on a
fresh database file after a warm-up batch in the same file.

``measure(...)`` is what other benchmarks call to measure the floor in the same run as
tickwork (``bench/runs.py`` runs it interleaved with its own rows). Alone::

    bench/.venv/bin/python bench/floor.py                 # 2 minutes on a busy 2-core machine
    bench/.venv/bin/python bench/floor.py --sync normal   # seconds: full's syncs are the slow part
    bench/.venv/bin/python bench/floor.py --quick
"""

from __future__ import annotations

import argparse
import json
import sqlite3
import statistics
import sys
import tempfile
import threading
import time
import uuid
from pathlib import Path
from typing import Any

# tickwork's settings (src/tickwork/_store/sqlite.py, sqlite_checkpoints.py)
PRAGMAS = (
    "PRAGMA page_size = 1024",  # first: it applies to a new file only
    "PRAGMA journal_mode=WAL",
    "PRAGMA synchronous={level}",
    "PRAGMA foreign_keys=ON",
)
WRITER_PRAGMAS = ("PRAGMA busy_timeout = 0", "PRAGMA wal_autocheckpoint = 65536")  # 64 MiB
CHECKPOINT = "PRAGMA wal_checkpoint(PASSIVE)"
CHECKPOINT_AFTER_S = 0.25

SCHEMA = (
    """CREATE TABLE runs (
        id TEXT PRIMARY KEY, workflow TEXT NOT NULL, status TEXT NOT NULL,
        output TEXT, created_at INTEGER NOT NULL, started_at INTEGER, ended_at INTEGER)""",
    "CREATE INDEX runs_pending ON runs (created_at) WHERE status = 'pending'",
    """CREATE TABLE steps (
        run_id TEXT NOT NULL REFERENCES runs (id), name TEXT NOT NULL, output TEXT NOT NULL,
        PRIMARY KEY (run_id, name))""",
)
INSERT_RUN = "INSERT INTO runs (id, workflow, status, created_at) VALUES (?, ?, 'pending', ?)"
SELECT_PENDING = "SELECT id FROM runs WHERE status = 'pending' ORDER BY created_at LIMIT 1"
MARK_RUNNING = "UPDATE runs SET status = 'running', started_at = ? WHERE id = ?"
INSERT_STEP = "INSERT INTO steps (run_id, name, output) VALUES (?, ?, ?)"
MARK_COMPLETED = "UPDATE runs SET status = 'completed', output = ?, ended_at = ? WHERE id = ?"
STEPS = ("one", "two", "three")

ROWS = {False: "floor (a) one transaction per step", True: "floor (b) steps batched"}


def first() -> dict[str, int]:
    return {"n": 1}


def following(previous: dict[str, int]) -> dict[str, int]:
    return {"n": previous["n"] + 1}


def three_steps(ctx: Any) -> dict[str, int]:
    """The same run as a tickwork workflow, each step checkpointed by ``ctx`` (the bench
    scripts register it as "three-steps")."""
    one = ctx.step("one", first)
    two = ctx.step("two", following, one)
    return ctx.step("three", following, two)  # type: ignore[no-any-return]


def _now_ms() -> int:
    return time.time_ns() // 1_000_000


def _connect(path: Path, synchronous: str) -> sqlite3.Connection:
    conn = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
    for pragma in PRAGMAS:
        conn.execute(pragma.format(level=synchronous))
    return conn


class _Checkpoints:
    """Passive checkpoints on a connection and thread of their own, as tickwork's store
    runs them: ``CHECKPOINT_AFTER_S`` after a commit, never while idle."""

    def __init__(self, path: Path, synchronous: str) -> None:
        self._conn = _connect(path, synchronous)
        self._wrote, self._stop = threading.Event(), threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def wrote(self) -> None:
        self._wrote.set()

    def _run(self) -> None:
        while not self._stop.is_set():
            if self._wrote.wait(0.5) and not self._stop.wait(CHECKPOINT_AFTER_S):
                self._wrote.clear()
                self._conn.execute(CHECKPOINT).fetchall()

    def close(self) -> None:
        self._stop.set()
        self._thread.join()
        self._conn.close()


class _Floor:
    """The hand-written durable runs on one database file."""

    def __init__(self, path: Path, synchronous: str, batched: bool) -> None:
        self.conn = _connect(path, synchronous)
        for pragma in WRITER_PRAGMAS:
            self.conn.execute(pragma)
        for statement in SCHEMA:
            self.conn.execute(statement)
        self.checkpoints = _Checkpoints(path, synchronous)
        self.batched = batched

    def _write(self, *statements: tuple[str, tuple[Any, ...]]) -> sqlite3.Cursor:
        """One write transaction; the cursor of its last statement."""
        cursor = self.conn.cursor()
        cursor.execute("BEGIN IMMEDIATE")
        for sql, params in statements:
            cursor.execute(sql, params)
        self.conn.commit()
        self.checkpoints.wrote()
        return cursor

    def start(self) -> None:
        self._write((INSERT_RUN, (uuid.uuid4().hex, "three-steps", _now_ms())))

    def _claim(self) -> str | None:
        cursor = self.conn.cursor()
        cursor.execute("BEGIN IMMEDIATE")
        row = cursor.execute(SELECT_PENDING).fetchone()
        if row is not None:
            cursor.execute(MARK_RUNNING, (_now_ms(), row[0]))
        self.conn.commit()
        self.checkpoints.wrote()
        return None if row is None else str(row[0])

    def execute(self, run_id: str) -> None:
        """Its steps, each checkpointed by its own commit (a) or by the completing one (b)."""
        batch: list[tuple[str, tuple[Any, ...]]] = []
        result = first()
        for index, name in enumerate(STEPS):
            if index:
                result = following(result)
            step = (INSERT_STEP, (run_id, name, json.dumps(result)))
            if self.batched:
                batch.append(step)
            else:
                self._write(step)
        self._write(*batch, (MARK_COMPLETED, (json.dumps(result), _now_ms(), run_id)))

    def drain(self) -> int:
        done = 0
        while (run_id := self._claim()) is not None:
            self.execute(run_id)
            done += 1
        return done

    def close(self) -> None:
        self.checkpoints.close()
        self.conn.close()


def measure(
    n: int, *, batched: bool, synchronous: str = "normal", warmup: int = 50
) -> dict[str, Any]:
    """N hand-written durable 3-step runs on a fresh file: started, then drained.

    Returns ``n``, ``enqueue_s`` (starting them), ``total_s`` (starting and draining) and
    the ``journal_mode``/``synchronous`` read back, in ``bench/runs.py``'s result shape.
    """
    with tempfile.TemporaryDirectory(prefix="tickwork-floor-") as folder:
        floor = _Floor(Path(folder) / "floor.db", synchronous, batched)
        try:
            for _ in range(warmup):
                floor.start()
            floor.drain()
            began = time.perf_counter()
            for _ in range(n):
                floor.start()
            enqueue_s = time.perf_counter() - began
            executed = floor.drain()
            total_s = time.perf_counter() - began
            journal = floor.conn.execute("PRAGMA journal_mode").fetchone()[0]
            level = floor.conn.execute("PRAGMA synchronous").fetchone()[0]
            (completed,) = floor.conn.execute(
                "SELECT COUNT(*) FROM runs WHERE status = 'completed'"
            ).fetchone()
        finally:
            floor.close()
    if executed != n or completed != n + warmup:
        raise RuntimeError(f"the floor completed {completed} runs, expected {n + warmup}")
    names = {0: "off", 1: "normal", 2: "full", 3: "extra"}
    return {"n": n, "enqueue_s": enqueue_s, "total_s": total_s, "journal_mode": str(journal),
            "synchronous": names.get(int(level), str(level))}  # fmt: skip


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--n", type=int, default=2000, help="runs per repetition")
    parser.add_argument("--repeat", type=int, default=5, help="repetitions per row (median)")
    parser.add_argument("--sync", default="normal,full", help="synchronous settings measured")
    parser.add_argument("--quick", action="store_true", help="1 repetition, N=500")
    args = parser.parse_args()
    if args.quick:
        args.repeat, args.n = 1, 500
    rows = [(sync, batched) for sync in args.sync.split(",") for batched in (False, True)]
    rates: dict[tuple[str, bool], list[float]] = {row: [] for row in rows}
    for _ in range(args.repeat):  # interleaved: a change of load falls on every row alike
        for sync, batched in rows:
            found = measure(args.n, batched=batched, synchronous=sync)
            rates[(sync, batched)].append(found["n"] / found["total_s"])
    print(f"The floor: hand-written durable 3-step runs on SQLite, one thread; N={args.n}, "
          f"median of {args.repeat}; sqlite {sqlite3.sqlite_version}")  # fmt: skip
    for sync, batched in rows:
        ordered = sorted(rates[(sync, batched)])
        print(f"  {ROWS[batched]:<38} wal/{sync:<7} {statistics.median(ordered):>9,.0f} runs/s "
              f"({ordered[0]:,.0f}-{ordered[-1]:,.0f})")  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
