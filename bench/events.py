"""Events on SQLite, one process: tickwork vs DBOS (issue 31).

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

Durability as in ``bench/runs.py``: DBOS opens SQLite with its defaults (rollback
journal, ``synchronous=FULL``); tickwork is measured with its default (WAL,
``synchronous=normal``) and with ``?synchronous=full``, the setting that compares like
with like. Each measure runs in a fresh subprocess on a fresh database file.

Usage (from the repository root)::

    .venv/bin/pip install dbos
    .venv/bin/python bench/events.py            # about a minute
    .venv/bin/python bench/events.py --quick
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

from tickwork import Context, Engine, On, RunStatus

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


# -- driver ------------------------------------------------------------------------------

MEASURES = {
    "tickwork_emits": tickwork_emits,
    "tickwork_wakeups": tickwork_wakeups,
    "dbos_starts": dbos_starts,
    "dbos_wakeups": dbos_wakeups,
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


def _percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="smaller N and K")
    options = parser.parse_args()
    n, k = (300, 30) if options.quick else (2000, 200)
    rows = []
    for label, name, args in [
        ("tickwork emit (WAL, normal)", "tickwork_emits", [n, "normal"]),
        ("tickwork emit (WAL, full)", "tickwork_emits", [n, "full"]),
        ("DBOS start_workflow per event", "dbos_starts", [n]),
    ]:
        result = _child(name, args)
        rate = result["n"] / result["total_s"]
        rows.append((label, rate))
        share = result["emit_s"] / result["total_s"]
        print(f"{label:<34} {rate:8.0f} runs/s  (emit share {share:.0%})")
    dbos_rate = rows[-1][1]
    for label, rate in rows[:-1]:
        print(f"  {label}: {rate / dbos_rate:.1f}x DBOS")
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
