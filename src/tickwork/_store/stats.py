"""What ``Engine.console.stats`` reads when Prometheus scrapes ``/metrics``: the fleet's figures.

Nothing here is recounted from history. Firings, ended runs and the histograms come from
``tickwork_counters``, where the store counts each event in the event's own transaction
(``counters.py``); the gauges read what is small whatever the history holds: schedules by
state, and the unfinished runs by workflow and status, which ``tickwork_queue`` holds
apart from the ended runs. So a scrape costs the same with ten million ended runs kept
as with none, and pruning them lowers no figure: ``runs`` reports ended statuses from the
run-end counters.

What the schedules say (by state, active ones by pool, the overdue ones) is read as
three columns of their rows, in SQL, and never as whole schedules: a scrape that built
every ``ScheduleInfo`` cost ~9-35 µs a schedule (90-110 ms at ten thousand).
"""

from __future__ import annotations

from datetime import timedelta

from .._rules.liveness import OVERDUE_GRACE_MS, overdue_ms
from .._values.models import ScheduleState, Stats
from .counters import read_counters
from .transaction import Database

__all__ = ["StatsSql"]

# Schedules by state and pool (the active ones' pools are those someone must serve).
COUNT_SCHEDULES = "SELECT state, pool, COUNT(*) FROM tickwork_schedules GROUP BY state, pool"
# Active schedules whose next occurrence is past the grace, undecided, and since when
# they are active (the rule is _liveness's; this reads the candidates). A scan of the
# schedules, as COUNT_SCHEDULES: due_at, which has an index, may lie past next_fire_at
# (a schedule whose plan failed is postponed).
SELECT_LATE = """
SELECT key, next_fire_at, COALESCE(state_changed_at, created_at) FROM tickwork_schedules
WHERE state = 'active' AND next_fire_at < ?
"""
# Unfinished runs by workflow and status: the queue holds them, and only them.
COUNT_UNFINISHED = "SELECT workflow, status, COUNT(*) FROM tickwork_queue GROUP BY workflow, status"


class StatsSql:
    """The store's figures over a dialect's ``Database`` (see ``StatsSource``)."""

    __slots__ = ("_db",)

    def __init__(self, db: Database) -> None:
        self._db = db

    def read_stats(self, *, now_ms: int) -> Stats:
        with self._db.read() as tx:
            counted = read_counters(tx)
            unfinished = tx.execute(COUNT_UNFINISHED).fetchall()
            by_pool = tx.execute(COUNT_SCHEDULES).fetchall()
            late = tx.execute(SELECT_LATE, now_ms - OVERDUE_GRACE_MS).fetchall()
        runs = {(w, s): int(n) for w, s, n in unfinished}
        runs.update(counted.runs_ended)
        schedules: dict[str, int] = {}
        active_pools: dict[str, int] = {}
        for state, pool, count in by_pool:
            schedules[state] = schedules.get(state, 0) + int(count)
            if state == ScheduleState.ACTIVE.value:
                active_pools[pool] = int(count)
        overdue: dict[str, timedelta] = {}
        for key, next_fire, active_since in late:
            ms = overdue_ms(ScheduleState.ACTIVE, int(next_fire), now_ms, int(active_since))
            if ms is not None:
                overdue[key] = timedelta(milliseconds=ms)
        return Stats(
            runs=runs,
            schedules=schedules,
            active_pools=active_pools,
            overdue=overdue,
            firings=counted.firings,
            lateness=counted.lateness,
            run_durations=counted.run_durations,
            step_durations=counted.step_durations,
            deadline_misses=counted.deadline_misses,
        )
