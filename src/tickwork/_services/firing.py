"""The firing loop's pass and when it is next due: one owner for every kind of firing.

A pass (``Firing.tick``: ``Engine.tick``, and the worker loop when something is due) takes
each kind of firing in turn: the schedules due (DESIGN §3), the deadlines passed (§2,
``deadline``), the debounce and batch buffers due (§9). A kind is one entry of
``Firing.kinds``: a function that does its work due now and answers the runs it started.
When the loop is next due is one question to the store, ``store.firing.next_firing_due_ms``:
the earliest of every kind's next due time, in one statement (an idle worker's poll).

Each kind first reads whether it has anything due (an index seek), so an idle pass writes
nothing; the store then does its work a bounded batch per transaction.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import replace
from datetime import timedelta

from .._rules.occurrences import occurrences_of
from .._rules.planning import Plan, fires_ahead, plan
from .._runtime.core import Runtime
from .._store import DueSchedule
from .._values.business_days import BusinessDays
from .._values.clock import from_ms
from .._values.durations import Duration, describe_duration
from .._values.durations import to_ms as duration_ms
from .._values.logs import log_deadline_missed, log_decision
from ..errors import ConfigError
from .scheduling import Schedules, plan_input, with_days

__all__ = ["MAX_FIRE_AHEAD_MS", "Firing", "ScheduleFiring", "fire_ahead_ms"]

_EVENTS_LOG = logging.getLogger("tickwork.events")

#: schedules fired per transaction; a tick runs as many transactions as it needs. Small,
#: so a firing transaction is short (its planning runs between its statements): a frozen
#: worker holds few rows, and the server's idle-transaction timeout never ends a healthy one
FIRE_BATCH = 100
_MAX_PASSES = 10_000
#: runs whose deadline passed checked per transaction; a pass runs as many as it needs
DEADLINE_BATCH = 100
#: debounce/batch buffers started per transaction
FLUSH_BATCH = 100
#: the longest ``Engine(fire_ahead=...)``: enough for a pass of tens of thousands of
#: schedules, and shorter than a broken schedule's retry (``_policy.RETRY_BROKEN_MS``),
#: which firing ahead must not bring forward to the same tick
MAX_FIRE_AHEAD_MS = 10_000


def fire_ahead_ms(value: Duration | None) -> int:
    """``Engine(fire_ahead=...)`` in milliseconds (0: off), or ``ConfigError``."""
    if value is None:
        return 0
    ms = duration_ms(value, "fire_ahead")
    if ms > MAX_FIRE_AHEAD_MS:
        raise ConfigError(
            f"fire_ahead={value!r} is too long: at most "
            f"{describe_duration(timedelta(milliseconds=MAX_FIRE_AHEAD_MS))} "
            "(it only has to cover one firing pass)"
        )
    return ms


class Firing:
    """One engine's firing side, as ``Engine.tick`` and the worker loop drive it
    (``_worker.Firing``)."""

    def __init__(self, runtime: Runtime, schedules: Schedules, *, ahead_ms: int = 0) -> None:
        self._runtime = runtime
        self._schedules = schedules
        #: how long before its occurrence an ``overlap="allow"`` schedule may be fired
        self._ahead_ms = ahead_ms
        self._due = ScheduleFiring(runtime, schedules, ahead_ms)
        #: every kind of firing, in the order a pass takes them; a new kind (the limits of
        #: DESIGN §11) is one more entry here and one more row of the store's next-due read
        self.kinds: tuple[Callable[[], list[str]], ...] = (
            self._due.fire,
            self._check_deadlines,
            self._flush_buffers,
        )

    def tick(self) -> list[str]:
        """One pass at ``clock.now()``: every kind's work due now; the runs started."""
        self._schedules.register_waiting()  # declared schedules whose calendar came since
        started: list[str] = []
        for kind in self.kinds:
            started += kind()
        return started

    def next_due_ms(self) -> int | None:
        """When a pass next has something to do, or None: one read at each poll of the
        loop (and, while a declared schedule waits for its calendar, a read of the
        calendars)."""
        runtime = self._runtime
        self._schedules.register_waiting()
        return runtime.store.firing.next_firing_due_ms(
            pools=runtime.pools, workflows=runtime.registry.names(), ahead_ms=self._ahead_ms
        )

    def _check_deadlines(self) -> list[str]:
        """Record every deadline missed by now, once fleet-wide (``_store/sql_deadlines``);
        this process then says each: a WARNING on ``tickwork.firing`` and every
        ``engine.on_deadline_missed`` hook, after the commit. Starts no run."""
        store = self._runtime.store
        now = self._runtime.now_ms()
        due = store.deadlines.next_deadline_ms()
        if due is None or due > now:
            return []  # a cheap read of the index spares the write transaction
        while True:
            batch = store.deadlines.record_missed_deadlines(now_ms=now, limit=DEADLINE_BATCH)
            for miss in batch:
                log_deadline_missed(miss)
                self._runtime.hooks.deadline(miss)
            if len(batch) < DEADLINE_BATCH:
                return []

    def _flush_buffers(self) -> list[str]:
        """Start the runs of the debounce and batch buffers due now."""
        store = self._runtime.store
        started: list[str] = []
        due = store.events.next_flush_ms()
        if due is None or due > self._runtime.now_ms():
            return started  # an idle pass reads by the index, and writes nothing
        while True:
            batch = store.events.flush_due(now_ms=self._runtime.now_ms(), limit=FLUSH_BATCH)
            started += batch
            if len(batch) < FLUSH_BATCH:
                break
        if started:
            self._runtime.wake.set()
            for run_id in started:
                _EVENTS_LOG.info("debounced or batched events started run %s", run_id)
        return started


class ScheduleFiring:
    """The schedules' kind of firing: every due occurrence decided by the pure planner,
    inside the store's firing transactions (``fire_due``)."""

    def __init__(self, runtime: Runtime, schedules: Schedules, ahead_ms: int) -> None:
        self._runtime = runtime
        self._calendars = schedules.calendars
        self._ahead_ms = ahead_ms
        #: the stored calendars' days as of this pass (read before firing)
        self._days: dict[str, BusinessDays] = {}

    def fire(self) -> list[str]:
        """Fire every due occurrence at ``clock.now()`` (and, with ``fire_ahead``, every
        ``overlap="allow"`` occurrence due within it); the ids of the runs started."""
        runtime = self._runtime
        workflows = runtime.registry.names()
        started: list[str] = []
        now = runtime.now_ms()
        due = runtime.store.firing.next_schedule_due_ms(
            pools=runtime.pools, workflows=workflows, ahead_ms=self._ahead_ms
        )
        if due is None or due > now:
            return started  # a cheap read spares the write transaction of a pass
        year = from_ms(now).year
        self._days = self._calendars.current(range(year - 1, year + 2))
        for _ in range(_MAX_PASSES):
            now = runtime.now_ms()  # each pass stamps its runs with its own time
            result = runtime.store.firing.fire_due(
                now_ms=now,
                pools=runtime.pools,
                workflows=workflows,
                limit=FIRE_BATCH,
                decide=self._decide_ahead if self._ahead_ms else self._decide_now,
                ahead_ms=self._ahead_ms,
            )
            started.extend(result.run_ids)
            for entry in result.decisions:  # committed: each said once, after the fact
                log_decision(entry)
            for key, error in result.errors:
                runtime.hooks.report(error, {"where": "firing schedule", "schedule_key": key})
            if result.fired == 0:
                break
            if result.fired < FIRE_BATCH:
                # The pass took every due row it could: the next would take none, unless
                # one is still due (a catch-up decides CATCHUP_BATCH occurrences a pass).
                # A read says so; an empty pass would be a write transaction.
                due = runtime.store.firing.next_schedule_due_ms(
                    pools=runtime.pools, workflows=workflows, ahead_ms=self._ahead_ms
                )
                if due is None or due > now:
                    break
        if started:
            runtime.wake.set()
        return started

    def _decide_now(self, due: DueSchedule, now_ms: int) -> Plan:
        return self._decide(with_days(due, self._days), now_ms)

    @staticmethod
    def _decide(due: DueSchedule, now_ms: int) -> Plan:
        return plan(plan_input(due, now_ms), occurrences_of(due.record, due.anchor_ms))

    def _decide_ahead(self, due: DueSchedule, now_ms: int) -> Plan:
        """``_decide``, but an ``allow`` schedule that the store handed over early (nothing
        of it is due now) starts every occurrence within ``fire_ahead``, at most
        ``CATCHUP_BATCH`` a pass: none of them is missed, so catch-up drops none."""
        upcoming = due.firing.next_fire_ms
        if (
            upcoming is None
            or upcoming <= now_ms
            or upcoming > now_ms + self._ahead_ms
            or not fires_ahead(due.record.overlap)
        ):
            return self._decide_now(due, now_ms)
        due = with_days(due, self._days)
        ahead = replace(
            plan_input(due, now_ms + self._ahead_ms), catchup=None, catchup_window_ms=None
        )
        return plan(ahead, occurrences_of(due.record, due.anchor_ms))
