"""SQLite's log is copied back into the file on a thread of its own, not inside commits
(but past a backstop: ``_store/sqlite_checkpoints.py``), and starts over under a steady
stream of commits."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from tests.polling import wait_until

from tickwork import Context, Engine
from tickwork._services import pruning as _pruning
from tickwork._store import sqlite_checkpoints
from tickwork._store.sqlite import SQLiteDatabase
from tickwork._store.sqlite_checkpoints import Checkpointer
from tickwork._store.transaction import Transaction
from tickwork.testing import FakeClock

THREAD = "tickwork-sqlite-checkpoint"
PAGE = 4096


def _checkpoint_threads() -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name == THREAD]


@pytest.fixture
def database(tmp_path: Path) -> Iterator[SQLiteDatabase]:
    db = SQLiteDatabase(tmp_path / "log.db", "normal", 30.0)
    db.write(lambda tx: tx.execute("CREATE TABLE blobs (id INTEGER PRIMARY KEY, data BLOB)"))
    yield db
    db.close()


def _insert(data: bytes) -> Callable[[Transaction], None]:
    def work(tx: Transaction) -> None:
        tx.execute("INSERT INTO blobs (data) VALUES (?)", data)

    return work


def test_a_commit_checkpoints_the_log_only_as_a_backstop(database: SQLiteDatabase) -> None:
    pages = database.writer().execute("PRAGMA wal_autocheckpoint").fetchone()[0]
    page_size = database.writer().execute("PRAGMA page_size").fetchone()[0]
    assert pages * page_size == sqlite_checkpoints.BACKSTOP_BYTES
    assert pages > 1_000  # SQLite's default: 1,000


def test_the_log_is_copied_into_the_file_while_the_store_stays_open(
    tmp_path: Path, database: SQLiteDatabase
) -> None:
    file = tmp_path / "log.db"
    before = file.stat().st_size
    for _ in range(50):
        database.write(_insert(b"x" * 20_000))  # 1 MB in all, through the log
    # Nothing but the checkpoints' thread copies pages into the file while it is open.
    wait_until(lambda: file.stat().st_size >= before + 1_000_000, "the log was copied")
    assert len(_checkpoint_threads()) >= 1


def _restarts(log: Path) -> int:
    """How many times the log started over: its header's checkpoint sequence number."""
    with log.open("rb") as file:
        header = file.read(16)
    return int.from_bytes(header[12:16], "big") if len(header) == 16 else 0


def test_the_log_starts_over_under_a_steady_stream_of_commits(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With never a pause between commits, the thread's passive checkpoints never leave the
    log copied whole when a write begins; the backstop makes it start over all the same."""
    monkeypatch.setattr(sqlite_checkpoints, "BACKSTOP_BYTES", 256 * 1024)
    monkeypatch.setattr(sqlite_checkpoints, "CHECKPOINT_AFTER_S", 0.005)
    db = SQLiteDatabase(tmp_path / "stream.db", "normal", 30.0)
    log = tmp_path / "stream.db-wal"
    try:
        db.write(lambda tx: tx.execute("CREATE TABLE blobs (id INTEGER PRIMARY KEY, data BLOB)"))
        first = _restarts(log)
        written = 0
        while _restarts(log) < first + 3:
            db.write(_insert(b"y" * 3 * PAGE))
            written += 3 * PAGE
            assert written < 400_000_000, "the log never started over"
    finally:
        db.close()


def test_closing_the_store_stops_its_checkpoints(sqlite_url: str) -> None:
    before = len(_checkpoint_threads())
    engine = Engine(sqlite_url)

    @engine.workflow("noop")
    def noop(ctx: object) -> None:
        return None

    engine.start("noop")
    assert len(_checkpoint_threads()) == before + 1
    engine.close()
    assert len(_checkpoint_threads()) == before


def test_a_store_in_memory_has_no_log_and_no_checkpoints() -> None:
    before = len(_checkpoint_threads())
    with Engine("sqlite://") as engine:

        @engine.workflow("noop")
        def noop(ctx: object) -> None:
            return None

        engine.start("noop")
        assert len(_checkpoint_threads()) == before


def test_a_prune_pass_copies_the_log_it_writes_between_its_batches(
    tmp_path: Path, clock: FakeClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Pruning writes pages faster than the thread copies them while others commit; so a
    pass copies its own between its batches (here after every one), and the log starts
    over between them with neither the thread nor the backstop (both off here)."""
    monkeypatch.setattr(Checkpointer, "wrote", lambda self: None)
    monkeypatch.setattr(sqlite_checkpoints, "BACKSTOP_BYTES", 2**40)
    monkeypatch.setattr(_pruning, "COPY_LOG_EVERY_S", 0.0)  # after every batch
    with Engine(f"sqlite:///{tmp_path / 'prune.db'}", clock=clock, retention="1h") as engine:

        @engine.workflow("stepped")
        def stepped(ctx: Context, n: int) -> int:
            ctx.step("one", lambda: n)
            return ctx.step("two", lambda: n * 2)

        for n in range(600):
            engine.start("stepped", n)
        assert engine.run_until_idle() == 600
        clock.advance("61m")
        log = tmp_path / "prune.db-wal"
        first = _restarts(log)
        assert engine.prune() >= 600 * 3  # several batches: each run, its two steps
        assert _restarts(log) >= first + 2
