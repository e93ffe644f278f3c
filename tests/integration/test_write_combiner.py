"""SQLite's combined writes: a thread cut short while writing leaves no one stuck."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from tickwork._store import NewRun
from tickwork._store.sqlite import SQLiteStore
from tickwork._store.write_combiner import _Write

T0 = 1_772_366_400_000


def new_run(run_id: str) -> NewRun:
    return NewRun(run_id, "wf", "1", None, 0, "default", T0, T0)


def test_interrupted_waiting_writer_leaves_the_others_unblocked(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = SQLiteStore(f"sqlite:///{tmp_path / 'w.db'}")
    store.migrate()
    inside, release = threading.Event(), threading.Event()

    def slow_write() -> None:
        def work(tx: object) -> None:
            inside.set()
            release.wait()

        store._write(work)

    combiner = threading.Thread(target=slow_write)
    combiner.start()
    assert inside.wait(10)  # the first write holds the turn to write

    real_wait = _Write.wait

    def interrupted(self: _Write) -> None:
        if threading.current_thread() is threading.main_thread():
            raise KeyboardInterrupt  # what Ctrl-C does to a thread waiting on a lock
        real_wait(self)

    monkeypatch.setattr(_Write, "wait", interrupted)
    with pytest.raises(KeyboardInterrupt):
        store.runs.insert_run(new_run("abandoned"))

    later = threading.Thread(target=lambda: store.runs.insert_run(new_run("later")))
    later.start()
    release.set()
    combiner.join(10)
    later.join(10)
    assert not combiner.is_alive() and not later.is_alive()
    assert store.runs.get_run("later") is not None
    store.runs.insert_run(new_run("after"))  # the writer is free again
    assert store.runs.get_run("after") is not None
    store.close()


def test_transaction_left_open_on_the_writer_does_not_block_later_writes(
    tmp_path: Path,
) -> None:
    """Every thread's writes share one connection: a turn cut short between its BEGIN
    and its rollback must not leave that connection unusable."""
    store = SQLiteStore(f"sqlite:///{tmp_path / 'w.db'}")
    store.migrate()
    writer = store._writer()
    writer.execute("BEGIN IMMEDIATE")
    writer.execute(
        "INSERT INTO tickwork_runs (id, workflow, version, status, attempt, priority, pool,"
        " created_at) VALUES ('torn', 'wf', '1', 'pending', 1, 0, 'default', 0)"
    )
    store.runs.insert_run(new_run("next"))
    assert store.runs.get_run("next") is not None
    assert store.runs.get_run("torn") is None  # the cut-short turn's write is gone, as reported
    store.close()
