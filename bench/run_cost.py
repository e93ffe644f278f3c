"""What one 3-step run costs on SQLite, in counts that do not depend on the machine's load.

Wall-clock rates on a shared 2-core machine move by ±20 % from one minute to the next;
these counts do not. For N runs of ``bench/runs.py``'s 3-step workflow (started one at a
time with ``engine.start``, then drained by ``engine.run_until_idle()`` on the calling
thread), per run:

- SQL statements sent to SQLite, by their first word (a ``sqlite3`` trace callback on
  every connection the store opens), and the transactions (``BEGIN``) and commits;
- round trips through the write combiner (``WriteCombiner.write`` calls);
- Python function calls (``cProfile``'s count, the run's whole path in the process).

Run it on this tree, or on another revision's copy through ``PYTHONPATH`` (it imports
whatever ``tickwork`` the path gives)::

    bench/.venv/bin/python bench/run_cost.py --n 500
    git archive 889a70e | tar -x -C /tmp/base
    PYTHONPATH=/tmp/base/src bench/.venv/bin/python bench/run_cost.py --n 500

``--profile`` prints the functions with the most calls per run, for finding where they go.
Instructions (repeatable whatever the load): run ``--bare`` (start and drain only) under
``valgrind --tool=callgrind`` with two values of ``--n``; the difference of the totals
divided by the difference of N is the cost of one run (start and drain), imports and
warm-up cancelling out. Add ``--separate-threads=yes`` and take the first thread's file
for the calling thread alone: the checkpoint thread's share follows the wall clock
(a passive checkpoint 0.25 s after commits), so the whole process's figure moves by a few
per cent between runs of the same code under callgrind, the calling thread's much less.
"""

from __future__ import annotations

import argparse
import collections
import cProfile
import json
import pstats
import re
import sqlite3
import sys
import tempfile
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))
import floor  # bench/floor.py, beside this script

_connect = sqlite3.connect
STATEMENTS: collections.Counter[str] = collections.Counter()
CONNECTIONS: list[sqlite3.Connection] = []
TRACING = [True]
SHOW = [False]
TEXTS: collections.Counter[str] = collections.Counter()
# The trace sees statements with their values in: take them out to group alike ones.
_LITERALS = re.compile(r"'[^']*'|\b\d+\b")


def _traced_connect(*args: Any, **kwargs: Any) -> sqlite3.Connection:
    conn = _connect(*args, **kwargs)
    CONNECTIONS.append(conn)
    conn.set_trace_callback(_trace if TRACING[0] else None)
    return conn


def _tracing(on: bool) -> None:
    """The trace callback on every connection, or none (cProfile would count its calls)."""
    TRACING[0] = on
    for conn in CONNECTIONS:
        conn.set_trace_callback(_trace if on else None)


def _trace(statement: str) -> None:
    words = statement.split(None, 2)
    first = words[0].upper() if words else ""
    if first in ("INSERT", "UPDATE", "DELETE", "SELECT", "WITH") and len(words) > 1:
        STATEMENTS[first] += 1
    else:
        STATEMENTS[" ".join(words[:2]).upper()] += 1
    STATEMENTS["(all)"] += 1
    if SHOW[0]:
        TEXTS[_LITERALS.sub("?", " ".join(statement.split()))[:110]] += 1


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--n", type=int, default=500, help="runs measured (after 50 warm-up)")
    parser.add_argument("--profile", action="store_true", help="the 25 most-called functions")
    parser.add_argument("--phase", choices=("both", "drain"), default="both")
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--statements", action="store_true", help="each statement's count")
    parser.add_argument(
        "--bare", action="store_true", help="only start and drain, nothing counted (callgrind)"
    )
    args = parser.parse_args()
    SHOW[0] = args.statements
    if not args.bare:
        sqlite3.connect = _traced_connect  # type: ignore[assignment]

    import tickwork
    from tickwork import Engine
    from tickwork._store import write_combiner

    writes = collections.Counter[str]()
    original_write = write_combiner.WriteCombiner.write

    def counted_write(self: Any, work: Any) -> Any:
        writes["write"] += 1
        return original_write(self, work)

    write_combiner.WriteCombiner.write = counted_write  # type: ignore[method-assign]

    folder = Path(tempfile.mkdtemp(prefix="tickwork-cost-"))
    engine = Engine(f"sqlite:///{folder / 'tickwork.db'}")

    three_steps = engine.workflow("three-steps")(floor.three_steps)

    engine.migrate()
    for _ in range(50):
        engine.start(three_steps)
    engine.run_until_idle()

    results: dict[str, Any] = {"tickwork": tickwork.__file__, "n": args.n}

    def do(phase: str) -> None:
        if phase == "start":
            for _ in range(args.n):
                engine.start(three_steps)
        else:
            assert engine.run_until_idle() == args.n

    if args.bare:  # instructions per run: the difference between two values of --n
        do("start")
        do("drain")
        engine.close()
        return 0
    # Two passes: statements counted, then calls profiled (with no trace callback).
    for phase in ("start", "drain"):
        STATEMENTS.clear()
        writes.clear()
        TEXTS.clear()
        do(phase)
        if args.statements:
            print(f"--- {phase}: statements per run")
            for text, count in TEXTS.most_common():
                print(f"{count / args.n:6.2f}  {text}")
        results[phase] = {
            "statements": {k: v / args.n for k, v in sorted(STATEMENTS.items())},
            "combiner_writes": writes["write"] / args.n,
            "python_calls": None,
        }
    _tracing(False)
    write_combiner.WriteCombiner.write = original_write  # type: ignore[method-assign]
    for phase in ("start", "drain"):
        measured = args.phase == "both" or phase == "drain"
        profile = cProfile.Profile()
        if measured:
            profile.enable()
        do(phase)
        if not measured:
            continue
        profile.disable()
        stats = pstats.Stats(profile)
        calls = sum(entry[1] for entry in stats.stats.values())  # type: ignore[attr-defined]
        results[phase]["python_calls"] = calls / args.n
        if args.profile:
            print(f"--- {phase}: most calls per run")
            ranked = sorted(stats.stats.items(), key=lambda item: -item[1][1])  # type: ignore[attr-defined]
            for (file, line, name), entry in ranked[:90]:
                print(f"{entry[1] / args.n:8.1f}  {name}  {Path(file).name}:{line}")
    engine.close()
    if args.json:
        print(json.dumps(results))
        return 0
    print(f"tickwork from {results['tickwork']}, {args.n} runs")
    for phase in ("start", "drain"):
        found = results[phase]
        print(f"{phase}: per run")
        for key, value in found["statements"].items():
            print(f"  {key:<24} {value:7.2f}")
        print(f"  {'combiner writes':<24} {found['combiner_writes']:7.2f}")
        if found["python_calls"] is not None:
            print(f"  {'python calls':<24} {found['python_calls']:7.0f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
