"""Deadlines in SQL: the runs whose deadline passed, each recorded missed once.

A run fired for an occurrence of a schedule with ``deadline`` carries its deadline
(``tickwork_runs.deadline_at``, migration 0018) until it is checked: completing by then,
or being cancelled, clears it in the statement that ends the run (``sql_runs.FINISH_RUN``,
``CANCEL_RUN``); otherwise the
deadline pass finds it through the partial index ``tickwork_runs_deadline`` (only runs
still to check have an entry) and, in one transaction, records ``deadline_missed`` in the
schedule's history, counts it (``tickwork_deadline_misses_total{key}``) and clears the
mark. So a miss is recorded once whatever replays, restarts or other workers do: the
mark and the history row commit together, and a second worker's pass skips the rows the
first holds (PostgreSQL ``SKIP LOCKED``; SQLite's writes take turns). The rule saying
whether and why a run missed is ``_policy.deadline_reason``.

The pass locks runs' rows only (never a schedule's), so it cannot deadlock with a run's
end, which locks its schedule's row before its own.
"""

from __future__ import annotations

from .._rules import policy as _policy
from .._values.clock import from_ms
from .._values.models import DeadlineMissed, HistoryEntry, RunStatus
from .counters import count_deadline_miss
from .schedule_rows import HISTORY_COLUMNS, history_from_row
from .transaction import Database, Transaction

__all__ = ["NEXT_DEADLINE", "DeadlinesSql"]

# Runs whose deadline passed, earliest first, from the partial index (+ the dialect's
# lock that skips rows another pass holds).
SELECT_PASSED = """
SELECT id, schedule_key, schedule_revision, scheduled_for, deadline_at, status, finished_at
FROM tickwork_runs WHERE deadline_at IS NOT NULL AND deadline_at <= ?
ORDER BY deadline_at
LIMIT ?"""
# A run's deadline is checked: never again.
CLEAR_DEADLINE = "UPDATE tickwork_runs SET deadline_at = NULL WHERE id = ?"
# Whether the run's schedule still exists (a removed one's history is gone with it).
SCHEDULE_EXISTS = "SELECT 1 FROM tickwork_schedules WHERE key = ?"
# A miss in the schedule's history: at its occurrence, the reason saying how late.
INSERT_MISS = """
INSERT INTO tickwork_schedule_history (key, occurrence, last_occurrence, decision, reason,
    run_id, revision, count, decided_at)
VALUES (?, ?, NULL, 'deadline_missed', ?, ?, ?, 1, ?)
"""
# The earliest deadline still to check (the index's first entry).
NEXT_DEADLINE = "SELECT MIN(deadline_at) FROM tickwork_runs WHERE deadline_at IS NOT NULL"
# The misses recorded since an instant, newest first (the partial index
# tickwork_schedule_history_deadline_missed): the dashboard's banner.
SELECT_RECENT_MISSES = f"""
SELECT {", ".join(HISTORY_COLUMNS)} FROM tickwork_schedule_history
WHERE decision = 'deadline_missed' AND decided_at >= ?
ORDER BY decided_at DESC
LIMIT ?
"""


class DeadlinesSql:
    """``DeadlineStore`` over a dialect's ``Database``."""

    __slots__ = ("_db",)

    def __init__(self, db: Database) -> None:
        self._db = db

    def record_missed_deadlines(self, *, now_ms: int, limit: int) -> list[DeadlineMissed]:
        statement = SELECT_PASSED + self._db.lock_suffix

        def work(tx: Transaction) -> list[DeadlineMissed]:
            rows = tx.execute(statement, now_ms, limit).fetchall()
            missed = []
            for run_id, key, revision, occurrence, deadline, status, finished in rows:
                tx.execute(CLEAR_DEADLINE, run_id)
                state = RunStatus(status)
                reason = _policy.deadline_reason(run_id, state, finished, deadline, now_ms)
                if reason is None or key is None or not _exists(tx, key):
                    continue
                tx.execute(INSERT_MISS, key, occurrence, reason, run_id, revision or 0, now_ms)
                count_deadline_miss(tx, key)
                missed.append(
                    DeadlineMissed(
                        key=key,
                        run_id=run_id,
                        occurrence=from_ms(occurrence),
                        deadline_at=from_ms(deadline),
                        status=state,
                        reason=reason,
                    )
                )
            return missed

        return self._db.write(work)

    def next_deadline_ms(self) -> int | None:
        with self._db.read() as tx:
            found = tx.execute(NEXT_DEADLINE).fetchone()
        return None if found is None or found[0] is None else int(found[0])

    def recent_deadline_misses(self, *, since_ms: int, limit: int) -> list[HistoryEntry]:
        with self._db.read() as tx:
            rows = tx.execute(SELECT_RECENT_MISSES, since_ms, limit).fetchall()
        return [history_from_row(row) for row in rows]


def _exists(tx: Transaction, key: str) -> bool:
    return tx.execute(SCHEDULE_EXISTS, key).fetchone() is not None
