"""SQLite's write lock held by another process: a write waits its turn (polling, not in
SQLite's backing-off busy handler), up to the URL's timeout, then fails as transient."""

from __future__ import annotations

import sqlite3
import threading
from pathlib import Path

import pytest

from tickwork._store import NewRun
from tickwork._store.sqlite import SQLiteStore
from tickwork.errors import StoreError

T0 = 1_772_366_400_000


def new_run(run_id: str) -> NewRun:
    return NewRun(run_id, "wf", "1", None, 0, "default", T0, T0)


def locked_store(tmp_path: Path, options: str = "") -> tuple[SQLiteStore, sqlite3.Connection]:
    """A migrated store, and another connection (SQLite locks per connection, as for
    another process) holding the file's write lock until it commits."""
    store = SQLiteStore(f"sqlite:///{tmp_path / 'w.db'}{options}")
    store.migrate()
    other = sqlite3.connect(tmp_path / "w.db", isolation_level=None, check_same_thread=False)
    other.execute("BEGIN IMMEDIATE")
    return store, other


def test_a_write_waits_for_another_writer_and_goes_through_once_it_commits(
    tmp_path: Path,
) -> None:
    store, other = locked_store(tmp_path)
    order: list[str] = []
    writer = threading.Thread(
        target=lambda: (store.runs.insert_run(new_run("waited")), order.append("written"))
    )
    writer.start()
    writer.join(0.3)  # it waits: the lock is not free
    assert writer.is_alive() and order == []
    order.append("released")
    other.execute("COMMIT")
    writer.join(10)
    assert order == ["released", "written"]
    assert store.runs.get_run("waited") is not None
    other.close()
    store.close()


def test_a_write_that_never_gets_the_lock_fails_after_the_timeout_and_writes_nothing(
    tmp_path: Path,
) -> None:
    store, other = locked_store(tmp_path, "?timeout=0.2")
    with pytest.raises(StoreError, match="database is locked") as failed:
        store.runs.insert_run(new_run("never"))
    assert failed.value.transient  # the caller may try again later
    other.execute("ROLLBACK")
    assert store.runs.get_run("never") is None
    store.runs.insert_run(new_run("later"))  # the writer connection is usable again
    assert store.runs.get_run("later") is not None
    other.close()
    store.close()
