"""What ``Engine.stats`` reads when Prometheus scrapes ``/metrics``: the fleet's figures.

Nothing here is recounted from history. Firings, ended runs and the histograms come from
``tickwork_counters``, where the store counts each event in the event's own transaction
(``counters.py``); the gauges read what is small whatever the history holds: schedules by
state, and the unfinished runs by workflow and status, which the partial index on
unfinished runs (``tickwork_runs_due``) lists without touching ended runs. So a scrape
costs the same with ten million ended runs kept as with none, and pruning them lowers no
figure: ``runs`` reports ended statuses from the run-end counters.
"""

from __future__ import annotations

from .._models import Stats
from .counters import read_counters
from .statuses import UNFINISHED
from .transaction import Database

__all__ = ["StatsSql"]

# Schedules by state.
COUNT_SCHEDULES = "SELECT state, COUNT(*) FROM tickwork_schedules GROUP BY state"
# Unfinished runs by workflow and status; the condition is the partial index
# tickwork_runs_due's, which serves it. {no_index} (Database.no_index) keeps SQLite from
# walking the whole workflow index instead, for its order.
COUNT_UNFINISHED = f"""
SELECT workflow, status, COUNT(*) FROM tickwork_runs
WHERE {UNFINISHED}
GROUP BY {{no_index}}workflow, {{no_index}}status
"""


class StatsSql:
    """The store's figures over a dialect's ``Database`` (see ``StatsSource``)."""

    __slots__ = ("_count_unfinished", "_db")

    def __init__(self, db: Database) -> None:
        self._db = db
        self._count_unfinished = COUNT_UNFINISHED.format(no_index=db.no_index)

    def read_stats(self) -> Stats:
        with self._db.read() as tx:
            counted = read_counters(tx)
            unfinished = tx.execute(self._count_unfinished).fetchall()
            schedules = {s: int(n) for s, n in tx.execute(COUNT_SCHEDULES).fetchall()}
        runs = {(w, s): int(n) for w, s, n in unfinished}
        runs.update(counted.runs_ended)
        return Stats(
            runs=runs,
            schedules=schedules,
            firings=counted.firings,
            lateness=counted.lateness,
            run_durations=counted.run_durations,
            step_durations=counted.step_durations,
        )
