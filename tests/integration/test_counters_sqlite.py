"""SQLite's combined writes and the counters: a write that fails inside a shared
transaction takes its metric increments with it, and the others keep theirs."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest

from tickwork._store import counters
from tickwork._store.sqlite import SQLiteStore
from tickwork._store.stats import COUNT_UNFINISHED
from tickwork._store.transaction import Transaction


def test_a_failed_write_in_a_combined_batch_counts_nothing(tmp_path: Path) -> None:
    store = SQLiteStore(f"sqlite:///{tmp_path / 'c.db'}")
    store.migrate()
    inside, release = threading.Event(), threading.Event()

    def holding(tx: Transaction) -> None:
        counters.count_firings(tx, "held", 1)
        inside.set()
        release.wait()

    def failing(tx: Transaction) -> None:
        counters.count_firings(tx, "lost", 1)
        counters.count_firings(tx, "kept", 100)
        raise ValueError("this write fails after counting")

    def counting(tx: Transaction) -> None:
        counters.count_firings(tx, "kept", 1)

    errors: list[BaseException] = []

    def write(work: object) -> None:
        try:
            store._write(work)  # type: ignore[arg-type]
        except BaseException as exc:
            errors.append(exc)

    first = threading.Thread(target=write, args=(holding,))
    first.start()
    assert inside.wait(10)
    queued = [threading.Thread(target=write, args=(w,)) for w in (failing, counting)]
    for thread in queued:
        thread.start()
    deadline = time.monotonic() + 10
    while len(store._sqlite._combiner._queue) < 2:  # both wait to join the next batch
        assert time.monotonic() < deadline
        time.sleep(0.001)
    release.set()
    for thread in (first, *queued):
        thread.join(10)
    assert [type(e) for e in errors] == [ValueError]
    assert store.read_stats(now_ms=0).firings == {"held": 1, "kept": 1}
    store.close()


@pytest.mark.parametrize("shard", [0, 5])
def test_increments_of_one_transaction_are_summed_into_one_row_each(
    tmp_path: Path, shard: int
) -> None:
    store = SQLiteStore(f"sqlite:///{tmp_path / 'c.db'}")
    store.migrate()

    def work(tx: Transaction) -> None:
        for _ in range(3):
            counters.count_firings(tx, "started", 2)
            counters.observe_step(tx, "completed", 0, 7)
        counters.flush(tx, shard)
        assert tx.counts == []  # flushed once: the commit writes nothing more

    store._write(work)
    rows = store._connection().execute("SELECT * FROM tickwork_counters ORDER BY 1, 3").fetchall()
    assert rows == [
        ("firings", "started", 0, shard, 6, 0),
        ("step_ends", "completed", 2, shard, 3, 21),  # 7 ms: above 5, at most 10
    ]
    store.close()


def test_the_unfinished_runs_gauge_reads_the_queue_not_every_run(tmp_path: Path) -> None:
    store = SQLiteStore(f"sqlite:///{tmp_path / 'c.db'}")
    store.migrate()
    plan = " / ".join(
        row[-1] for row in store._connection().execute(f"EXPLAIN QUERY PLAN {COUNT_UNFINISHED}")
    )
    # The runs in flight, in their own table: never a walk of all runs.
    assert "tickwork_queue" in plan and "tickwork_runs" not in plan, plan
    store.close()
