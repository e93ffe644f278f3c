"""A tickwork process that freezes itself (SIGSTOP) inside its own transaction: right
after the Nth statement of its next firing pass or checkpoint, counted from the statement
that takes the pass's locks (the select of due schedules) or the checkpoint's (the lease
check-and-renew). Run as ``python freezer_app.py URL firing|checkpoint N EXPECTED``.

It prints ``frozen <N> <statement's first words>`` just before it stops, or ``finished``
when that transaction committed in fewer than N statements (every statement was tried).
A firing pass counts only when it selected all EXPECTED due schedules, so that the
frozen transaction holds every one of them.

Statements are counted where the store hands them to psycopg (``Cursor.execute`` and
``Cursor.executemany``): test-only wrapping, nothing in tickwork knows of it.
"""

from __future__ import annotations

import os
import signal
import sys
import time
from typing import Any

import psycopg

from tickwork import Context, Engine

MARKERS = {
    "firing": lambda sql: "FROM tickwork_schedules" in sql and "SKIP LOCKED" in sql,
    "checkpoint": lambda sql: "WITH lease AS" in sql,
}


class Counter:
    """Counts the statements of the marked transaction; stops the process at the Nth."""

    def __init__(self, mode: str, freeze_after: int, expected: int) -> None:
        self.marker = MARKERS[mode]
        self.mode = mode
        self.freeze_after = freeze_after
        self.expected = expected
        self.conn: Any = None  # the connection whose transaction is being counted
        self.count = 0
        self.finished = False

    def wrap(self, real: Any) -> Any:
        def counted(cursor: Any, query: Any, *args: Any, **kwargs: Any) -> Any:
            conn = cursor.connection
            result = real(cursor, query, *args, **kwargs)
            sql = query if isinstance(query, str) else str(query)
            holds_all = self.mode == "checkpoint" or cursor.rowcount == self.expected
            if self.conn is None and not self.finished and self.marker(sql) and holds_all:
                self.conn, self.count = conn, 0
            if conn is self.conn:
                self.count += 1
                if self.count == self.freeze_after:
                    print("frozen", self.count, " ".join(sql.split()[:4]), flush=True)
                    os.kill(os.getpid(), signal.SIGSTOP)
            return result

        return counted

    def wrap_exit(self, real: Any) -> Any:
        def ended(transaction: Any, *args: Any) -> Any:
            if transaction.connection is self.conn:  # committed: past its last statement
                self.conn, self.finished = None, True
            return real(transaction, *args)

        return ended


def main(url: str, mode: str, freeze_after: int, expected: int) -> None:
    counter = Counter(mode, freeze_after, expected)
    psycopg.Cursor.execute = counter.wrap(psycopg.Cursor.execute)  # type: ignore[method-assign]
    psycopg.Cursor.executemany = counter.wrap(psycopg.Cursor.executemany)  # type: ignore[method-assign]
    psycopg.Transaction.__exit__ = counter.wrap_exit(psycopg.Transaction.__exit__)  # type: ignore[method-assign]
    with Engine(url, lease="3s") as engine:

        @engine.workflow("tick")
        def tick(ctx: Context) -> None:
            return None

        @engine.workflow("work")
        def work(ctx: Context) -> str:
            return ctx.step("only", lambda: "done")

        while not counter.finished:
            engine.tick() if mode == "firing" else engine.run_until_idle()
            time.sleep(0.05)
    print("finished", flush=True)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]))
