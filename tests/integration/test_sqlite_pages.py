"""A SQLite file tickwork creates has pages of 1 KiB (each commit writes the pages it
changed to the log whole: docs/behaviour.md); a file made before keeps its own page size,
and works as before, its log's backstop the same 64 MiB."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from tickwork import Context, Engine
from tickwork._store import sqlite_checkpoints
from tickwork._store.sqlite import SQLiteDatabase


def _page_size(path: Path) -> int:
    with sqlite3.connect(path) as conn:
        return int(conn.execute("PRAGMA page_size").fetchone()[0])


def _engine(path: Path) -> Engine:
    engine = Engine(f"sqlite:///{path}")

    @engine.workflow("double")
    def double(ctx: Context, input: int) -> int:
        return ctx.step("twice", lambda: input * 2)  # type: ignore[no-any-return]

    return engine


def _backstop_bytes(path: Path) -> int:
    """The log's size past which the store's writer connection checkpoints in a commit."""
    db = SQLiteDatabase(path, "normal", 30.0)
    try:
        writer = db.writer()
        pages = writer.execute("PRAGMA wal_autocheckpoint").fetchone()[0]
        return int(pages) * int(writer.execute("PRAGMA page_size").fetchone()[0])
    finally:
        db.close()


def test_a_new_file_has_pages_of_1_kib(tmp_path: Path) -> None:
    path = tmp_path / "new.db"
    with _engine(path) as engine:
        run = engine.start("double", 21)
        engine.run_until_idle()
        assert engine.get_run(run.id).result == 42
    assert _page_size(path) == 1024
    assert _backstop_bytes(path) == sqlite_checkpoints.BACKSTOP_BYTES


def test_a_file_with_4_kib_pages_keeps_them_and_its_runs(tmp_path: Path) -> None:
    path = tmp_path / "old.db"
    with sqlite3.connect(path) as conn:  # a file as SQLite makes it by default
        conn.execute("PRAGMA page_size = 4096")
        conn.execute("PRAGMA journal_mode = WAL")
        conn.execute("CREATE TABLE made_before (x)")
    with _engine(path) as engine:
        first = engine.start("double", 1)
        engine.run_until_idle()
    with _engine(path) as engine:  # opened again: the same file, its run kept
        second = engine.start("double", 2)
        engine.run_until_idle()
        assert [engine.get_run(r.id).result for r in (first, second)] == [2, 4]
    assert _page_size(path) == 4096
    assert _backstop_bytes(path) == sqlite_checkpoints.BACKSTOP_BYTES
