"""Group commit: many threads' writes share one transaction and one commit.

A commit waits for its log to reach the disk: on SQLite a file's one write lock is held
meanwhile (threads contending through ``BEGIN IMMEDIATE`` sleep in its busy handler: 1,
2, 5, 10 ms...), on PostgreSQL each commit waits for its WAL flush. So writes are
*combined*: a thread queues its write; the thread whose turn it is runs every queued
write in one transaction and commits once (if a write fails, a lost lease say, the batch
is redone with each write in a savepoint so that it undoes only itself). Uncontended,
that is just a transaction; contended, many checkpoints share one commit. Durability is
unchanged: a write returns only once the commit that holds it is done. Other processes
still meet at the database (SQLite's lock, PostgreSQL's row locks).
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable
from typing import Any, TypeVar

from ..errors import StoreError
from .claim_records import LeaseLost
from .transaction import Transaction

__all__ = ["WriteCombiner"]

T = TypeVar("T")

#: how many writes may join one transaction before it commits (bounds a write's wait)
_MOST_JOINED = 64
# Each write of a batch redone after a failure runs inside this savepoint.
SAVEPOINT = "SAVEPOINT tickwork_write"
# Undo the write that failed, and only it.
ROLLBACK_TO_SAVEPOINT = "ROLLBACK TO SAVEPOINT tickwork_write"
# Keep what the write did, in the batch's transaction.
RELEASE_SAVEPOINT = "RELEASE SAVEPOINT tickwork_write"


class _Write:
    """One thread's write waiting to be carried out, and its outcome.

    Its thread sleeps on its own lock (``prepare_wait``: held from then on), released
    once: when the write is done, or when the thread's ``turn`` has come to carry out the
    queued writes. A write whose thread has the turn at once never waits: it has no lock.
    """

    __slots__ = ("_ready", "abandoned", "done", "error", "result", "turn", "work")

    def __init__(self, work: Callable[[Any], Any]) -> None:
        self.work = work
        self.done = False
        self.turn = False
        self.abandoned = False  # its thread was interrupted while waiting
        self.result: Any = None
        self.error: BaseException | None = None
        self._ready: threading.Lock | None = None

    def prepare_wait(self) -> None:
        """Before ``wait``, while the queue's lock is held (so nobody wakes it first)."""
        self._ready = threading.Lock()
        self._ready.acquire()

    def wake(self) -> None:
        assert self._ready is not None, "only a write that waits is woken"
        self._ready.release()

    def wait(self) -> None:
        assert self._ready is not None
        self._ready.acquire()


def _run_in_savepoint(
    tx: Transaction, request: _Write, as_store_error: Callable[[BaseException], BaseException]
) -> None:
    """Carry out one write of a combined batch; its failure undoes only itself (its metric
    increments too), and a driver's error becomes the dialect's ``StoreError``."""
    tx.execute(SAVEPOINT)
    counted = len(tx.counts)
    try:
        request.result = request.work(tx)
    except (Exception, LeaseLost) as exc:
        tx.roll_back_to(ROLLBACK_TO_SAVEPOINT)
        del tx.counts[counted:]
        request.error = as_store_error(exc)
    tx.execute(RELEASE_SAVEPOINT)


class WriteCombiner:
    """Carries out writes (functions of a transaction) from many threads, combined.

    ``begin()`` opens a write transaction on the one writer connection, committed when
    its context ends (rolled back, with the error raised, when it fails).
    ``as_store_error`` makes a driver's error, raised by a write in a savepoint, the
    ``StoreError`` the dialect's transaction would have made of it (any other is kept).
    """

    def __init__(
        self,
        begin: Callable[[], contextlib.AbstractContextManager[Transaction]],
        as_store_error: Callable[[BaseException], BaseException],
    ) -> None:
        self._begin = begin
        self._as_store_error = as_store_error
        self._queue: list[_Write] = []
        self._queue_lock = threading.Lock()
        self._combining = False

    def write(self, work: Callable[[Transaction], T]) -> T:
        """Run ``work`` in a write transaction, maybe shared with other threads' writes,
        committed before this returns; return what ``work`` returns or raise its error."""
        request = _Write(work)
        with self._queue_lock:
            self._queue.append(request)
            request.turn = not self._combining
            self._combining = True
            if not request.turn:
                request.prepare_wait()
        if not request.turn:
            try:
                request.wait()  # until done, or until our turn to combine
            except BaseException:
                with self._queue_lock:
                    request.abandoned = True
                if request.turn:  # handed the turn meanwhile: never leave the others stuck
                    self._combine()
                raise
        if request.turn:
            self._combine()
        if request.error is not None:
            raise request.error
        result: T = request.result
        return result

    def _combine(self) -> None:
        """Carry out the queued writes in one transaction, then hand the turn on.

        The turn goes to the first thread still waiting to write, so a thread whose write
        is done never waits for a commit that does not hold it. Writes whose threads
        stopped waiting (interrupted) are carried out by the next turn, like any other.
        """
        with self._queue_lock:
            batch, self._queue = self._queue, []
        committed = False
        try:
            failure = self._run_unguarded(batch)
            if failure is None:
                committed = True
            elif len(batch) == 1:
                batch[0].error = failure
            else:  # everything was rolled back: again, each write in its own savepoint
                with self._begin() as tx:
                    for request in batch:
                        _run_in_savepoint(tx, request, self._as_store_error)
                committed = True
        except (Exception, LeaseLost) as exc:  # the transaction as a whole failed
            for request in batch:
                request.error = request.error or exc
        finally:  # even if this thread is interrupted: never leave the others stuck
            for request in batch:
                if not committed and request.error is None:
                    request.error = StoreError("write abandoned: its writer was interrupted")
                request.done = True
            for request in batch:
                if not request.turn:
                    request.wake()
            with self._queue_lock:
                waiting = [r for r in self._queue if not r.abandoned] if self._queue else None
                if waiting:
                    waiting[0].turn = True
                self._combining = bool(waiting)
            if waiting:
                waiting[0].wake()

    def _run_unguarded(self, batch: list[_Write]) -> BaseException | None:
        """Carry out the batch with no savepoints, the common case where no write fails.

        Writes queued while the batch runs join it (appended to ``batch``) until the
        commit begins: they share its commit instead of waiting for the next one. If a
        write fails, everything is rolled back and its error returned, for the caller to
        carry the writes out again (a write only reads and writes the database, so doing
        it again after a rollback is the same as doing it once).
        """
        failure: BaseException | None = None
        try:
            with self._begin() as tx:
                done = 0
                while done < len(batch):
                    try:
                        batch[done].result = batch[done].work(tx)
                    except BaseException as exc:
                        failure = exc
                        raise
                    done += 1
                    # (the queue read unlocked first: a write queued just after is
                    # handed the next turn, as one queued after the commit would be)
                    if done == len(batch) and done < _MOST_JOINED and self._queue:
                        with self._queue_lock:
                            batch += self._queue
                            self._queue = []
        except (Exception, LeaseLost) as exc:
            if failure is not None and failure in (exc, exc.__cause__):
                return exc  # as the transaction raised it (a driver error made a StoreError)
            raise
        return None
