"""Child runs and their parents' joins in SQL (``ChildStore``; migration 0024).

A join is counted, not scanned: one ``tickwork_joins`` row per wait holds how many of
its children have not ended. A child knows the join it counts off (``joined``, set when
the parent's wait is registered, or at a map's insert) and, in the transaction that ends
it (``RunsSql.finish_run``, a cancel), takes the count down (``count_off``); the one that
takes it to zero wakes the parent. Two children ending at once on PostgreSQL take the
join's row lock in turn, so exactly one of them sees zero; SQLite's writes take turns.
Nothing reads the siblings: the parent reads its children's outcomes once, when it wakes.

Locks are taken in one order, children's rows, then the join's, then the parent's, by
both the wait that registers a join and the end that counts it off, so the two cannot
deadlock on PostgreSQL.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from .._values.ids import from_json
from .._values.models import Outcome, RunStatus
from .._values.records import NewJoin, NewRun, StepRecord
from .claim_records import ClaimRequest, Ended, LeaseLost
from .joins import SELECT_DESCENDANTS
from .run_rows import claimed_runs, run_from_row
from .sql_events import NEVER_MS
from .sql_runs import REQUEUE_HELD, RESCHEDULE_RUN, RunsSql
from .transaction import CHUNK, Database, Transaction, marks

__all__ = ["ChildrenSql"]

_ENDED = "status IN ('completed', 'failed', 'cancelled')"

# Mark the listed children not ended yet as counting off the parent's join {marks}: one
# placeholder per id. Its row count is how many the join waits for.
MARK_JOINED = f"""
UPDATE tickwork_runs SET joined = ?
WHERE parent_id = ? AND id IN ({{marks}}) AND NOT ({_ENDED})
"""
# A wait registered again (its parent re-run before its children ended) counts them
# afresh but keeps how far a map's window was released.
INSERT_JOIN = """
INSERT INTO tickwork_joins (parent_id, step, remaining, released, total, prefix)
VALUES (?, ?, ?, ?, ?, ?)
ON CONFLICT (parent_id, step) DO UPDATE SET remaining = excluded.remaining
"""
# A wait's checkpoint, written waiting (what it waits for) or completed.
WRITE_JOIN_STEP = """
INSERT INTO tickwork_steps (run_id, kind, name, seq, status, result, error, attempts,
    started_at, finished_at)
VALUES (?, ?, ?, ?, ?, ?, NULL, 1, ?, ?)
ON CONFLICT (run_id, kind, name) DO UPDATE SET status = excluded.status,
    result = excluded.result, finished_at = excluded.finished_at
"""
# Is the parent still held under this token? (close_join's fence; the row is the queue's.)
HELD = "SELECT 1 FROM tickwork_queue WHERE id = ? AND lease_token = ? AND status = 'running'"
DELETE_JOIN = "DELETE FROM tickwork_joins WHERE parent_id = ? AND step = ?"
# How runs ended ({marks}: one placeholder per id).
SELECT_OUTCOMES = f"""
SELECT id, status, result, error FROM tickwork_runs WHERE id IN ({{marks}}) AND {_ENDED}
"""


# A parent's children counted by status (tickwork_runs_parent).
COUNT_CHILDREN = "SELECT status, COUNT(*) FROM tickwork_runs WHERE parent_id = ? GROUP BY status"
SELECT_REMAINING = "SELECT remaining FROM tickwork_joins WHERE parent_id = ? AND step = ?"


class ChildrenSql:
    """``ChildStore`` over a dialect's ``Database``."""

    __slots__ = ("_db", "_runs")

    def __init__(self, db: Database, runs: RunsSql) -> None:
        self._db, self._runs = db, runs

    def start_child(
        self, *, run_id: str, token: str, step: StepRecord, child: NewRun, lease_ms: int
    ) -> bool:
        db = self._db

        def work(tx: Transaction) -> bool:
            db.record_step(  # first: it fences a parent no longer held (LeaseLost)
                tx, run_id=run_id, token=token, step=step, now_ms=step.finished_ms,
                lease_ms=lease_ms,
            )  # fmt: skip
            inserted = bool(db.insert_runs(tx, [child]))
            if inserted:
                db.notify(tx, "runs")
            return inserted

        return db.write(work)

    def join(
        self,
        join: NewJoin,
        *,
        children: Sequence[NewRun] = (),
        then_claim: ClaimRequest | None = None,
    ) -> Ended:
        db, key = self._db, f"{join.kind}:{join.step}"

        def work(tx: Transaction) -> tuple[Any, list[Any]]:
            if children:  # a map's: inserted counting off this join already (joined)
                db.insert_runs(tx, children)
                db.notify(tx, "runs")
                waiting = len(children)
            else:
                waiting = 0
                ids = list(join.child_ids)
                for start in range(0, len(ids), CHUNK):
                    chunk = ids[start : start + CHUNK]
                    tx.execute(
                        MARK_JOINED.format(marks=marks(len(chunk))), key, join.run_id, *chunk
                    )  # fmt: skip
                    waiting += tx.rowcount
            if waiting:
                total = len(join.child_ids)
                released = total if join.released is None else join.released
                tx.execute(INSERT_JOIN, join.run_id, key, waiting, released, total, join.prefix)
                status, due = RunStatus.WAITING, join.until_ms or NEVER_MS
            else:
                status, due = RunStatus.PENDING, join.now_ms
            tx.execute(REQUEUE_HELD, str(status), due, join.run_id, join.token)
            if tx.rowcount != 1:
                raise LeaseLost(join.run_id)
            row = tx.execute(
                RESCHEDULE_RUN, str(status), join.attempt, None, False, join.run_id
            ).fetchone()
            tx.execute(
                WRITE_JOIN_STEP, join.run_id, join.kind, join.step, join.seq, "waiting",
                join.waiting_json, join.now_ms, join.now_ms,
            )  # fmt: skip
            return row, self._runs.claim_in(tx, then_claim)

        row, taken = db.write(work)
        claimed = claimed_runs(taken, then_claim.now_ms) if taken and then_claim else []
        return Ended(run_from_row(row), claimed)

    def outcomes(self, run_ids: Sequence[str]) -> list[Outcome | None]:
        found: dict[str, Outcome] = {}
        with self._db.read() as tx:
            for start in range(0, len(run_ids), CHUNK):
                chunk = run_ids[start : start + CHUNK]
                for run_id, status, result, error in tx.execute(
                    SELECT_OUTCOMES.format(marks=marks(len(chunk))), *chunk
                ).fetchall():
                    found[run_id] = Outcome(run_id, RunStatus(status), from_json(result), error)
        return [found.get(run_id) for run_id in run_ids]

    def close_join(self, *, run_id: str, token: str, step: StepRecord, lease_ms: int) -> bool:
        def work(tx: Transaction) -> bool:
            if tx.execute(HELD, run_id, token).fetchone() is None:
                raise LeaseLost(run_id)
            tx.execute(DELETE_JOIN, run_id, f"{step.kind}:{step.name}")
            tx.execute(
                WRITE_JOIN_STEP, run_id, step.kind, step.name, step.seq, step.status,
                step.result_json, step.started_ms, step.finished_ms,
            )  # fmt: skip
            return True

        return self._db.write(work)

    def counts(self, parent_id: str) -> dict[RunStatus, int]:
        rows = self._db.read_rows(COUNT_CHILDREN, parent_id)
        return {RunStatus(status): int(count) for status, count in rows}

    def remaining(self, parent_id: str, kind: str, step: str) -> int | None:
        rows = self._db.read_rows(SELECT_REMAINING, parent_id, f"{kind}:{step}")
        return int(rows[0][0]) if rows else None

    def descendants(self, run_id: str) -> list[str]:
        with self._db.read() as tx:
            return [row[0] for row in tx.execute(SELECT_DESCENDANTS, run_id).fetchall()]
