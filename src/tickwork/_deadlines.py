"""Deadlines at the runtime level: the firing loop's pass over the runs whose deadline
passed, and what a miss sets off once it is recorded (DESIGN §2, ``deadline``).

The store records each miss once, fleet-wide (``_store/sql_deadlines.py``); this process
then says it: a WARNING on ``tickwork.firing`` and a call of every
``engine.on_deadline_missed`` hook, after the commit, in the process that recorded it.
"""

from __future__ import annotations

from ._logs import log_deadline_missed
from ._models import DeadlineMissed
from ._runtime import Runtime

__all__ = ["Deadlines"]

#: runs checked per transaction; a pass runs as many as it needs
DEADLINE_BATCH = 100


class Deadlines:
    """The deadline pass of one engine (``Schedules.tick`` runs it)."""

    def __init__(self, runtime: Runtime) -> None:
        self._runtime = runtime

    def check(self) -> list[DeadlineMissed]:
        """Record every deadline missed by now; log each and hand it to the hooks."""
        store = self._runtime.store
        now = self._runtime.now_ms()
        due = store.deadlines.next_deadline_ms()
        if due is None or due > now:
            return []  # a cheap read of the index spares the write transaction
        missed: list[DeadlineMissed] = []
        while True:
            batch = store.deadlines.record_missed_deadlines(now_ms=now, limit=DEADLINE_BATCH)
            missed += batch
            for miss in batch:
                log_deadline_missed(miss)
                self._runtime.hooks.deadline(miss)
            if len(batch) < DEADLINE_BATCH:
                return missed

    def next_due_ms(self) -> int | None:
        """When the next deadline passes (the firing loop wakes for it)."""
        return self._runtime.store.deadlines.next_deadline_ms()
