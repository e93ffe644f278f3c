"""WAL checkpoints on a thread of their own, off the commit path.

In WAL mode a commit appends to the ``-wal`` file; a checkpoint copies those pages back
into the database file and syncs it. By default SQLite checkpoints inside the commit
that takes the log past 1,000 pages (``wal_autocheckpoint``), so about one commit in a
hundred also writes some 4 MB at scattered places of the file and waits for its sync.
In a worker that commit may be a firing, and every write combined behind it waits too:
measured on a 3 GB store on a slow disk, 50 every-second schedules' firing transaction
took 2.3 ms at the median and 44 ms at p99 with nothing else running (7 to 11 ms at p99
with this module).

So the writer connection checkpoints only past ``BACKSTOP_BYTES`` of log (below), and
``Checkpointer`` runs a ``PASSIVE`` checkpoint on a connection of its own,
``CHECKPOINT_AFTER_S`` after a commit (at most that often while writes go on; never while
idle). A passive checkpoint takes no lock that writers wait for: commits go on appending
to the log meanwhile and readers keep their snapshots.

The log starts over from its beginning only when a write begins while every page in it
has been copied. Under a steady stream of commits from other threads or processes that
may never happen (measured: with no backstop, a prune pass grew the log to 1.1 GB in
30 s), so past ``BACKSTOP_BYTES`` a commit checkpoints the rest itself, as SQLite
does by default past 1,000, and the same connection's next write starts the log over.
Most of the pages are copied by then, so that checkpoint is short. A pruning pass, which
writes pages faster than anyone, copies its own between its batches (``copy_log``, on its
thread), so that it never takes the log to the backstop and a firing's commit does not pay
for a prune's pages (measured at 10M runs: the log's high mark 70 MB before, 24 MB after).

Closing the store stops the thread; SQLite checkpoints what is left when the last
connection to the file closes, and a log left by a killed process is replayed when the
file is next opened, as always.
"""

from __future__ import annotations

import contextlib
import logging
import sqlite3
import threading
from collections.abc import Callable

from ..errors import StoreError

__all__ = ["BACKSTOP_BYTES", "CHECKPOINT", "CHECKPOINT_AFTER_S", "Checkpointer", "backstop"]

log = logging.getLogger("tickwork")

#: seconds from a commit to the checkpoint that copies it (and between two checkpoints)
CHECKPOINT_AFTER_S = 0.25
#: the log's size past which a commit checkpoints (SQLite's default: 1,000 pages, 1 MiB at
#: the 1 KiB pages tickwork creates files with, 4 MiB at SQLite's own 4 KiB)
BACKSTOP_BYTES = 64 * 2**20
# Copy what the log holds into the database file, without waiting for or blocking anyone.
CHECKPOINT = "PRAGMA wal_checkpoint(PASSIVE)"
#: seconds ``close`` waits for a checkpoint under way
_JOIN_S = 5.0


class Checkpointer:
    """Checkpoints of one SQLite file's log, on a daemon thread started by the first
    commit (``wrote``) and stopped by ``close``."""

    def __init__(self, connect: Callable[[], sqlite3.Connection]) -> None:
        self._connect = connect
        self._wrote = threading.Event()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()

    def wrote(self) -> None:
        """A commit added to the log: checkpoint it soon."""
        if self._thread is None:
            with self._lock:
                if self._thread is None and not self._stop.is_set():
                    self._thread = threading.Thread(
                        target=self._run, name="tickwork-sqlite-checkpoint", daemon=True
                    )
                    self._thread.start()
        if not self._wrote.is_set():  # set already: the checkpoint to come copies it too
            self._wrote.set()

    def close(self) -> None:
        """Stop the thread (after the checkpoint under way, if any)."""
        with self._lock:
            self._stop.set()
            thread = self._thread
        self._wrote.set()  # wake it to see the stop
        if thread is not None and thread is not threading.current_thread():
            thread.join(_JOIN_S)

    def _run(self) -> None:
        conn: sqlite3.Connection | None = None
        try:
            while True:
                self._wrote.wait()
                # Let the commits of the next moments join this checkpoint (real time:
                # this is housekeeping of a file, whatever clock the engine runs on).
                if self._stop.wait(CHECKPOINT_AFTER_S):
                    return
                self._wrote.clear()
                try:
                    conn = conn or self._connect()
                    conn.execute(CHECKPOINT).fetchall()
                except (sqlite3.Error, StoreError) as exc:
                    # Busy (another connection checkpoints) or the file is going away:
                    # the next commit asks again; nothing is lost by waiting.
                    log.debug("SQLite checkpoint did not run: %s", exc)
        finally:
            if conn is not None:
                with contextlib.suppress(sqlite3.Error):
                    conn.close()


def backstop(page_size: int) -> str:
    """The writer connection's setting: checkpoints inside its commits only as a backstop
    (SQLite counts the log in pages: ``page_size`` is the file's)."""
    return f"PRAGMA wal_autocheckpoint = {BACKSTOP_BYTES // page_size}"
