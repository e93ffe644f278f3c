"""A worker's heartbeat: its record in the store, renewed every few seconds (DESIGN §8).

A worker records itself as it starts (id, host, pid, pools, the workflows it registered,
tickwork's version, when it started) and renews the record every ``renew_ms`` on a thread
of its own: one short write each (on SQLite through the store's write combiner), so
firing and claiming never wait for it. It is taken for gone once it has missed three
renewals (``_liveness``); a graceful stop records itself after the drain. A killed
process simply stops renewing.

The renewal interval is 5 s; ``$TICKWORK_WORKER_HEARTBEAT`` (a duration: ``"200ms"``)
changes it, for tests that watch a killed worker become not alive without waiting 15 s.
Each worker stores its own interval, so a reader judges it without knowing the setting.

The record also says which declared schedules the worker holds back for a calendar not
stored (``waiting``, read afresh at each write: its start-up's sync fills it, a calendar
stored since empties it), so that a face without the app can say why such a schedule
does not fire. The thread writes it at once, not at the next renewal, when it changes.

Times are the engine's clock (the database's on PostgreSQL), so a machine whose wall clock
steps does not make the fleet's records look stale. A renewal is due every ``renew_ms`` of
that clock or of the steady clock, whichever comes first, and the thread looks every
``poll_s`` at least: a ``FakeClock`` moved by a test is followed at once, one standing
still does not stop the renewals.
"""

from __future__ import annotations

import functools
import importlib.metadata
import os
import socket
import threading
from collections.abc import Callable

from .._rules.liveness import DEFAULT_RENEW_MS
from .._runtime.core import Runtime
from .._runtime.hooks import Outage
from .._store import WorkerRecord
from .._values import clock as _clock
from .._values.durations import to_ms
from .._values.models import WorkerInfo
from ..errors import ConfigError, StoreError

__all__ = ["HEARTBEAT_ENV", "Heartbeat", "list_workers", "renew_interval_ms"]

#: the environment variable that sets the renewal interval (a duration)
HEARTBEAT_ENV = "TICKWORK_WORKER_HEARTBEAT"
#: seconds ``stop`` waits for the renewal thread
_JOIN_S = 5.0


def renew_interval_ms() -> int:
    """The renewal interval: ``$TICKWORK_WORKER_HEARTBEAT`` when set, else 5 s."""
    value = os.environ.get(HEARTBEAT_ENV, "").strip()
    if not value:
        return DEFAULT_RENEW_MS
    try:
        return to_ms(value)
    except ConfigError as exc:
        raise ConfigError(f"${HEARTBEAT_ENV}: {exc}") from exc


def list_workers(runtime: Runtime) -> list[WorkerInfo]:
    """Every worker's record seen within the last day, alive or not, at the runtime's
    clock (``Engine.list_workers``)."""
    return runtime.store.workers.list_workers(now_ms=runtime.now_ms())


@functools.cache
def _version() -> str:
    try:
        return importlib.metadata.version("tickwork")
    except importlib.metadata.PackageNotFoundError:  # run from a source tree
        return "unknown"


class Heartbeat:
    """One worker's record: written at ``record``, renewed by ``start``'s thread, marked
    stopped by ``stop``. Store errors go to the runtime's hooks (an outage once)."""

    def __init__(
        self,
        runtime: Runtime,
        renew_ms: int,
        waiting: Callable[[], tuple[tuple[str, str], ...]] = tuple,
    ) -> None:
        self._runtime = runtime
        self.renew_ms = renew_ms
        #: the declared schedules held back now, (key, calendar) pairs: read at each write
        self._waiting = waiting
        self._written: tuple[tuple[str, str], ...] = ()  # what the last write tried
        self._started_ms = 0  # set by start
        self._halt = threading.Event()
        self._thread: threading.Thread | None = None
        self._outage = Outage(runtime.hooks, "recording the worker")

    def record(self) -> None:
        """Write the record now (what the worker serves may have grown since the last)."""
        runtime = self._runtime
        waiting = self._waiting()
        worker = WorkerRecord(
            id=runtime.worker_id,
            host=socket.gethostname(),
            pid=os.getpid(),
            pools=runtime.pools,
            workflows=tuple(runtime.registry.names()),
            version=_version(),
            started_ms=self._started_ms,
            renew_ms=self.renew_ms,
            waiting=waiting,
        )
        # Tried, written or not: a failed write is tried again at the next renewal, not
        # at every look of an outage.
        self._written = waiting
        try:
            runtime.store.workers.renew_worker(worker, now_ms=runtime.now_ms())
        except StoreError as exc:
            self._outage.failed(exc)
        except Exception as exc:
            runtime.hooks.report(exc, {"where": "recording the worker"})
        else:
            self._outage.succeeded()

    def start(self, poll_s: float) -> None:
        """Record now, then renew every ``renew_ms`` on a thread until ``stop``."""
        self._started_ms = self._runtime.now_ms()
        self.record()
        self._thread = threading.Thread(
            target=self._loop, args=(poll_s,), name="tickwork-heartbeat", daemon=True
        )
        self._thread.start()

    def stop(self, *, join_s: float = _JOIN_S) -> None:
        """Stop renewing and record the graceful stop (after the drain: a draining worker
        is still alive), waiting up to ``join_s`` for a renewal under way to end first."""
        self._halt.set()
        if self._thread is not None:
            self._thread.join(join_s)
        runtime = self._runtime
        try:
            runtime.store.workers.stop_worker(runtime.worker_id, now_ms=runtime.now_ms())
        except Exception as exc:  # it will look gone after three renewals anyway
            runtime.hooks.report(exc, {"where": "recording the worker's stop"})

    def _loop(self, poll_s: float) -> None:
        runtime = self._runtime
        renew_s = self.renew_ms / 1000
        look_s = min(poll_s, renew_s)
        due_ms, due_s = runtime.now_ms() + self.renew_ms, _clock.monotonic() + renew_s
        while not _clock.wait(self._halt, look_s):
            now_ms = runtime.now_ms()
            # Due by the engine's clock (a FakeClock moved on: at once), by the steady
            # clock (a FakeClock standing still), or the engine's clock went back.
            late = now_ms >= due_ms or _clock.monotonic() >= due_s
            # Or what it holds back changed (a calendar was stored): said at once.
            changed = self._waiting() != self._written
            if late or changed or due_ms - now_ms > self.renew_ms:
                self.record()
                due_ms, due_s = runtime.now_ms() + self.renew_ms, _clock.monotonic() + renew_s
