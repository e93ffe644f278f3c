"""Pruning: passes of retention over the store, on demand and in the background of a worker.

A pass reads the engine's clock once, asks ``_retention.cutoffs`` which cutoff applies to
which workflow, then calls ``store.pruning.prune_batch`` until the pass is done: each batch one
short write of at most ``BATCH_ROWS`` rows, then a pause half as long as the batch took
(``give_way_s``), so firing, claiming and checkpoints — and, on SQLite, other processes
waiting for the file's write lock — get their turns between batches. Where writes take
turns (``ExclusiveWrites``: SQLite) the budget adapts so that a batch lasts about
``TURN_TARGET_S`` (``next_budget``): a firing or a claim waits that long at most. There,
every ``COPY_LOG_EVERY_S`` between batches, the pass also copies the pages it wrote from
SQLite's log into the file itself (``copy_log``, a passive checkpoint holding no one up),
so that the log starts over between batches instead of outgrowing its backstop, where
the commit that crosses it (a firing's, as likely as not) would pay for copying it
(``sqlite_checkpoints``). Where they do not (PostgreSQL), the pauses also hold a pass to
``MOST_ROWS_PER_S``: there what pruning costs the others is the WAL it writes, not a lock.

In a worker, a thread of its own runs the first pass ``FIRST_PASS_MS`` after start (a
worker starting catches up on firing first) and one every ``PASS_INTERVAL_MS`` (five
minutes) after that. Why five minutes: a pass that finds nothing costs a seek per workflow
and per schedule, so it could run more often, but there is no need: between passes the
backlog grows by five minutes' worth (50 every-second schedules: 15,000 runs, about 75,000
rows with their steps and history, a few seconds of batches), small beside a retention
counted in days; and every worker of a fleet runs it (they skip each other's rows), so a
shorter interval multiplies idle passes by the size of the fleet. The thread looks at the
engine's clock every poll interval, so a ``FakeClock`` moved by a test drives it too.
Errors go to the runtime's hooks like the loop's: a database outage once, not per pass.
"""

from __future__ import annotations

import logging
import threading
from dataclasses import replace
from datetime import timedelta

from .._rules.retention import (
    BATCH_ROWS,
    COPY_LOG_EVERY_S,
    FIRST_PASS_MS,
    MOST_ROWS_PER_S,
    PASS_INTERVAL_MS,
    TURN_TARGET_S,
    Cutoffs,
    PrunePosition,
    check_retention,
    cutoffs,
    give_way_s,
    next_budget,
)
from .._runtime.core import Runtime
from .._store import ExclusiveWrites
from .._values import clock as _clock
from .._values.durations import Duration
from .._values.models import Pruned, StorageStats
from ..errors import StoreError

__all__ = ["Pruner"]

log = logging.getLogger("tickwork")

#: seconds ``stop`` waits for a background pass to finish its batch
_JOIN_S = 5.0


class Pruner:
    """Retention for one engine: ``retention`` (None keeps everything) and each registered
    workflow's own."""

    def __init__(self, runtime: Runtime, retention: Duration | None) -> None:
        self._runtime = runtime
        self.retention_ms = check_retention(retention)

    def cutoffs(self, older_than_ms: int | None = None) -> Cutoffs:
        """The cutoffs at the engine's now (``older_than_ms``: one for everything)."""
        return cutoffs(
            now_ms=self._runtime.now_ms(),
            retention_ms=self.retention_ms,
            workflow_retention_ms={d.name: d.retention_ms for d in self._runtime.registry},
            older_than_ms=older_than_ms,
        )

    def prune(
        self, *, older_than: Duration | None = None, stop: threading.Event | None = None
    ) -> Pruned:
        """One full pass now (until ``stop`` is set); what it removed, by table."""
        older_than_ms = check_retention(older_than, what="older_than")
        return self._pass(self.cutoffs(older_than_ms), stop or threading.Event())

    def _pass(self, cuts: Cutoffs, stop: threading.Event) -> Pruned:
        if not cuts.prunes_anything:
            return Pruned()
        store = self._runtime.store
        turns = store if isinstance(store, ExclusiveWrites) else None
        target_s = None if turns is None else TURN_TARGET_S
        pace = MOST_ROWS_PER_S if turns is None else None
        budget = BATCH_ROWS if target_s is None else BATCH_ROWS // 4
        position = PrunePosition()
        removed = Pruned()
        copied = _clock.monotonic()
        while not position.done:
            began = _clock.monotonic()
            batch = store.pruning.prune_batch(cutoffs=cuts, budget=budget, position=position)
            elapsed_s = _clock.monotonic() - began
            removed = Pruned(
                removed.runs + batch.runs,
                removed.steps + batch.steps,
                removed.history + batch.history,
            )
            position = batch.position
            budget = next_budget(budget, batch.removed, elapsed_s, target_s)
            pause_s = give_way_s(elapsed_s, batch.removed, pace)
            if turns is not None and began - copied >= COPY_LOG_EVERY_S:
                turns.copy_log()
                copied = _clock.monotonic()
            if not position.done and _clock.wait(stop, pause_s):
                break
        return replace(removed, events=self._prune_events(cuts, budget, pace, stop))

    def _prune_events(
        self, cuts: Cutoffs, budget: int, pace: int | None, stop: threading.Event
    ) -> int:
        """Events emitted before the runs' cutoff go like ended runs, in batches."""
        if cuts.runs_ms is None:
            return 0
        removed = 0
        while not stop.is_set():
            began = _clock.monotonic()
            batch = self._runtime.store.events.prune_events(before_ms=cuts.runs_ms, limit=budget)
            removed += batch
            if batch < budget:
                break
            _clock.wait(stop, give_way_s(_clock.monotonic() - began, batch, pace))
        return removed

    def storage(self) -> StorageStats:
        """What the database holds, and what the next pass would remove."""
        stats = self._runtime.store.storage.storage_stats(cutoffs=self.cutoffs())
        kept = None if self.retention_ms is None else timedelta(milliseconds=self.retention_ms)
        return replace(stats, retention=kept)

    def start(self, stop: threading.Event, poll_s: float) -> threading.Thread:
        """Prune in the background until ``stop`` is set: a first pass soon, then one every
        ``PASS_INTERVAL_MS``, looking at the clock at least every ``poll_s`` seconds."""
        thread = threading.Thread(
            target=self._loop, args=(stop, poll_s), name="tickwork-prune", daemon=True
        )
        thread.start()
        return thread

    def join(self, thread: threading.Thread) -> None:
        """Wait (a little) for a background thread whose ``stop`` was set."""
        thread.join(_JOIN_S)

    def _loop(self, stop: threading.Event, poll_s: float) -> None:
        runtime = self._runtime
        due_ms = runtime.now_ms() + FIRST_PASS_MS
        outage = False
        while not stop.is_set():
            now_ms = runtime.now_ms()
            if now_ms >= due_ms:
                due_ms = now_ms + PASS_INTERVAL_MS
                try:
                    removed = self._pass(self.cutoffs(), stop)
                except StoreError as exc:
                    if not outage:  # like the loop: an outage is reported once
                        outage = True
                        runtime.hooks.report(exc, {"where": "pruning", "outage": True})
                except Exception as exc:
                    runtime.hooks.report(exc, {"where": "pruning"})
                else:
                    if outage:
                        outage = False
                        log.warning("pruning works again")
                    if removed.total:
                        log.debug("pruned %d row(s)", removed.total)
                now_ms = runtime.now_ms()
            _clock.wait(stop, min(poll_s, max(0, due_ms - now_ms) / 1000))
