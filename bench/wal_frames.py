"""WAL pages one 3-step run writes on SQLite, counted with checkpoints held off.

Every page a commit changes is appended to the ``-wal`` file as a frame (page + 24-byte
header), so with no checkpoint the log only grows and its size counts the pages written.
This script turns the store's checkpoints off (its ``Checkpointer`` thread and the
writer's ``wal_autocheckpoint`` backstop), keeps ``--history`` ended runs in the store
first (then copies them into the file and empties the log), and counts the frames
``--n`` runs of ``bench/runs.py``'s 3-step workflow add: started one at a time with
``engine.start``, drained by ``engine.run_until_idle()`` on the calling thread.

Then, if SQLite has ``dbstat``, the leaf pages of the six list indexes and how full they
are. The counts depend on the schema and SQLite's page balancing, not on the machine's
load.
Compare two revisions through ``PYTHONPATH`` (it imports whatever ``tickwork`` the path
gives)::

    .venv/bin/python bench/wal_frames.py
    git archive main | tar -x -C /tmp/base
    PYTHONPATH=/tmp/base/src .venv/bin/python bench/wal_frames.py
"""

from __future__ import annotations

import argparse
import os
import sqlite3
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
import floor  # bench/floor.py, beside this script

FRAME_HEADER = 24
WAL_HEADER = 32
HAS_DBSTAT = "SELECT COUNT(*) FROM pragma_module_list WHERE name = 'dbstat'"
# The leaf pages of the list indexes of tickwork_runs, and how full they are.
LIST_LEAVES = """
SELECT COUNT(*), SUM(pgsize - unused) * 1.0 / SUM(pgsize) FROM dbstat
WHERE pagetype = 'leaf' AND name IN ('tickwork_runs_created', 'tickwork_runs_workflow',
    'tickwork_runs_schedule', 'tickwork_runs_status_ended',
    'tickwork_runs_workflow_status_ended', 'tickwork_runs_schedule_status_ended')
"""


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--n", type=int, default=2000, help="runs measured")
    parser.add_argument("--history", type=int, default=20_000, help="ended runs kept first")
    args = parser.parse_args()

    import tickwork
    from tickwork import Engine
    from tickwork._store import sqlite as sqlite_store
    from tickwork._store import sqlite_checkpoints

    # No checkpoint at all while counting: the log then holds every frame written.
    sqlite_checkpoints.Checkpointer.wrote = lambda self: None  # type: ignore[method-assign]
    sqlite_store.backstop = lambda: "PRAGMA wal_autocheckpoint = 0"  # type: ignore[attr-defined]

    folder = Path(tempfile.mkdtemp(prefix="tickwork-wal-"))
    path = folder / "tickwork.db"
    wal = Path(f"{path}-wal")
    engine = Engine(f"sqlite:///{path}")

    three_steps = engine.workflow("three-steps")(floor.three_steps)

    version = engine.migrate()
    for done in range(0, args.history, 1000):
        for _ in range(min(1000, args.history - done)):
            engine.start(three_steps)
        engine.run_until_idle()
    # The history into the file and the log emptied (no reader holds it: all idle).
    conn = sqlite3.connect(path)
    page = conn.execute("PRAGMA page_size").fetchone()[0]
    busy, _, _ = conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()
    conn.close()
    assert not busy and wal.stat().st_size == 0, "the log was not emptied"

    sizes = {}
    for _ in range(args.n):
        engine.start(three_steps)
    sizes["start"] = wal.stat().st_size
    assert engine.run_until_idle() == args.n
    sizes["drain"] = wal.stat().st_size
    engine.close()
    conn = sqlite3.connect(path)
    has_dbstat = conn.execute(HAS_DBSTAT).fetchone()[0]
    leaves = conn.execute(LIST_LEAVES).fetchone() if has_dbstat else None
    conn.close()

    frames = {k: max(0, v - WAL_HEADER) / (page + FRAME_HEADER) for k, v in sizes.items()}
    print(f"tickwork from {tickwork.__file__}, schema version {version}")
    print(f"{args.history} ended runs kept, then {args.n} 3-step runs; page size {page}")
    print(f"  WAL frames per run: start {frames['start'] / args.n:.2f}, "
          f"drain {(frames['drain'] - frames['start']) / args.n:.2f}, "
          f"total {frames['drain'] / args.n:.2f}")  # fmt: skip
    if leaves:
        print(f"  list indexes: {leaves[0]} leaf pages, {leaves[1]:.0%} full")
    for name in os.listdir(folder):
        os.remove(folder / name)
    os.rmdir(folder)
    return 0


if __name__ == "__main__":
    sys.exit(main())
