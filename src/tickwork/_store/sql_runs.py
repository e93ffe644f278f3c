"""The runs half of the store contract in SQL: runs, leases and checkpoints.

A run's row (``tickwork_runs``) keeps what it is and did; while it is unfinished it also
has a row in ``tickwork_queue`` (migration 0011 says why), written in the same
transactions, which holds what changes in flight: its status, its lease's token, whether
cancellation was asked, and ``available_at``: when a pending or sleeping run may execute,
or a running run's lease expiry, so that one index answers both "which runs are due" and
"which leases have expired". A write to both takes the queue's row first (the claim locks
it), so that two writers never wait on each other's rows. Rows are read by column name
(``run_rows.py``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from .._values.clock import to_ms
from .._values.models import HistoryEntry, RunInfo, RunStatus, StepInfo
from .._values.records import NewRun, StepRecord
from .claim_records import ClaimedRun, ClaimRequest, Ended, LeaseLost
from .claim_room import can_claim, open_workflows
from .counters import count_run_end, observe_step
from .joins import SELECT_DESCENDANTS, count_off, forget_joins
from .recent_runs import RecentRunsSql
from .run_inserts import StraightClaim
from .run_lists import SELECT_KEYSET, list_runs_query
from .run_rows import (
    COL_STARTED_AT,
    COL_WORKFLOW,
    RUN_COLUMNS,
    STEP_COLUMNS,
    TakenRun,
    claimed_runs,
    ended_run,
    inserted_run,
    run_from_row,
    step_from_row,
)
from .state_changes import WAKE_BUFFERED, end_run_of_schedule
from .transaction import Database, Transaction

__all__ = [
    "NOT_SUSPECT",
    "ONLY_SUSPECTS",
    "QUEUE_FILTER",
    "REQUEST_CANCEL",
    "SELECT_STEPS",
    "RunsSql",
    "cancel_idle_run",
    "levels",
    "suspects_filter",
]

_RUN_LIST = ", ".join(RUN_COLUMNS)

# One run by id.
SELECT_RUN = f"SELECT {_RUN_LIST} FROM tickwork_runs WHERE id = ?"
# A run's checkpoints in the order they were first recorded.
SELECT_STEPS = f"SELECT {', '.join(STEP_COLUMNS)} FROM tickwork_steps WHERE run_id = ? ORDER BY seq"


def levels(*, one_workflow: bool) -> str:
    """A ``level`` CTE: the priority levels of the runs in flight (of one workflow, its
    placeholder twice, or of all), highest first. A skip-scan: one seek per level of an
    index led by (workflow,) priority, whatever the number of runs. A claim and next_due
    then seek each level's due part: the index puts priority before available_at, so a
    walk across levels passes every run not yet due (asleep, delayed, leased)."""
    first, then = ("WHERE workflow = ?", "AND q.workflow = ?") if one_workflow else ("", "")
    return f"""
WITH RECURSIVE level(priority) AS (
    SELECT MAX(priority) FROM tickwork_queue {first}
    UNION ALL
    SELECT (SELECT MAX(q.priority) FROM tickwork_queue q
        WHERE q.priority < level.priority {then})
    FROM level WHERE level.priority IS NOT NULL
)"""


#: the queue's alias in the worker's filters (in_filters)
QUEUE_FILTER = "q."
#: a claim's filters that pass over the suspects (lost_workers.py), or keep only them
NOT_SUSPECT = " AND q.suspect = 0"
ONLY_SUSPECTS = " AND q.suspect <> 0"
# Renew a lease still held (status and token unchanged).
RENEW_LEASE = """
UPDATE tickwork_queue SET available_at = ?
WHERE id = ? AND lease_token = ? AND status = 'running'
RETURNING cancel_requested
"""
# The schedule and parent of a run (finish_run reads them first when its caller does not
# know them).
SELECT_SCHEDULE_KEY = "SELECT schedule_key, parent_id FROM tickwork_runs WHERE id = ?"
# A held run leaves the queue (it ends) ...
UNQUEUE_HELD = """
DELETE FROM tickwork_queue WHERE id = ? AND lease_token = ? AND status = 'running'
"""
# ... and ends for good. A run whose deadline can no longer be missed (completed by it,
# or cancelled: _policy.deadline_reason) has nothing left to check: its deadline is
# cleared in this same write, so the deadline pass never visits it (migration 0018). The
# deadline is kept when it is at or before the last parameter (_kept_deadlines_until).
FINISH_RUN = """
UPDATE tickwork_runs SET status = ?, result = ?, error = ?, traceback = ?, finished_at = ?,
    deadline_at = CASE WHEN deadline_at <= ? THEN deadline_at ELSE NULL END
WHERE id = ?
"""
# Hand a held run back until later (sleep, retry back-off): in the queue (its execution
# ended: no longer a suspect) ...
REQUEUE_HELD = """
UPDATE tickwork_queue SET status = ?, available_at = ?, lease_token = NULL, suspect = 0
WHERE id = ? AND lease_token = ? AND status = 'running'
"""
# ... and in the run's row.
RESCHEDULE_RUN = f"""
UPDATE tickwork_runs SET status = ?, attempt = ?, error = ?,
    attempt_started_at = CASE WHEN ? THEN NULL ELSE attempt_started_at END
WHERE id = ?
RETURNING {_RUN_LIST}
"""
# A new attempt forgets the failed tries of the previous one (completed steps stay).
FORGET_FAILED_STEPS = "DELETE FROM tickwork_steps WHERE run_id = ? AND status = 'failed'"
# Cancel a run that is not executing right now (by an operator, or by overlap's
# cancel_previous): it leaves the queue if it waits there ...
UNQUEUE_IDLE = (
    "DELETE FROM tickwork_queue WHERE id = ? AND status IN ('pending', 'sleeping', 'waiting')"
)
# ... and ends (a cancelled run misses no deadline: it is cleared); returns its
# schedule's key, its workflow and start (for metrics) and its parent (a child's join).
CANCEL_RUN = """
UPDATE tickwork_runs SET status = 'cancelled', finished_at = ?, deadline_at = NULL
WHERE id = ?
RETURNING schedule_key, workflow, started_at, parent_id
"""
# With Database.lock_row, a cancel takes the run's schedule's row before the run's: firing
# holds the schedule and may cancel the run (cancel_previous), and the other order could
# deadlock with it on PostgreSQL. (The subquery's row is read, not locked.)
LOCK_SCHEDULE_OF_RUN = """
SELECT key FROM tickwork_schedules WHERE key = (SELECT schedule_key FROM tickwork_runs WHERE id = ?)
"""
# Ask the executor of a running run to stop at its next step boundary.
REQUEST_CANCEL = """
UPDATE tickwork_queue SET cancel_requested = 1 WHERE id = ? AND status = 'running'
"""
# Let another worker take these runs at once; dropping the token fences off the old owner.
# (A read of the queue, the runs in flight: a worker releases its leases when it stops.)
RELEASE_LEASE = """
UPDATE tickwork_queue SET available_at = ?, lease_token = NULL
WHERE lease_token = ? AND status = 'running'
"""


def _kept_deadlines_until(status: RunStatus, now_ms: int) -> int:
    """The latest deadline a run ending now as ``status`` keeps for the deadline pass:
    a completed run only a deadline already passed (it completed late); a failed one any
    (it never completed); a cancelled one none."""
    if status is RunStatus.COMPLETED:
        return now_ms - 1
    return -1 if status is RunStatus.CANCELLED else _NO_DEADLINE_CLEARED


#: a bound above every instant: a failed run keeps its deadline
_NO_DEADLINE_CLEARED = 2**62


def cancel_idle_run(
    db: Database, tx: Transaction, run_id: str, now_ms: int
) -> tuple[bool, str | None]:
    """Cancel the run if it is pending, sleeping or waiting, counting its end (and, for a
    child, off its parent's join; a waiting parent's joins are forgotten); return whether
    it was, and its schedule's key."""
    tx.execute(UNQUEUE_IDLE, run_id)
    if tx.rowcount != 1:
        return False, None
    schedule_key, workflow, started_ms, parent = tx.execute(CANCEL_RUN, now_ms, run_id).fetchone()
    count_run_end(tx, workflow, RunStatus.CANCELLED.value, started_ms, now_ms)
    forget_joins(tx, run_id)
    if parent is not None:
        count_off(db, tx, run_id, parent, now_ms)
    return True, schedule_key


class RunsSql(RecentRunsSql):
    """``RunStore`` over a dialect's ``Database``: runs, leases and checkpoints here, the
    latest runs of many schedules (``recent_runs``) inherited from ``recent_runs.py``."""

    __slots__ = ()

    def insert_run(
        self, run: NewRun, *, then_claim: ClaimRequest | None = None
    ) -> tuple[RunInfo, bool, Sequence[ClaimedRun]]:
        def work(tx: Transaction) -> tuple[Any, list[TakenRun]]:
            claim = self.straight_claim(tx, then_claim)
            if not claim.insert(run, notify=True):  # it exists already
                return tx.execute(SELECT_RUN, run.id).fetchone(), []
            return None, claim.taken()

        existing, taken = self._db.write(work)
        if existing is not None:
            return run_from_row(existing), False, ()
        return inserted_run(run), True, _claimed(taken, then_claim)

    def get_run(self, run_id: str) -> RunInfo | None:
        with self._db.read() as tx:
            row = tx.execute(SELECT_RUN, run_id).fetchone()
        return None if row is None else run_from_row(row)

    def list_runs(
        self,
        *,
        workflow: str | None = None,
        status: RunStatus | None = None,
        schedule_key: str | None = None,
        limit: int = 100,
        before: str | None = None,
        parent_id: str | None = None,
    ) -> list[RunInfo]:
        # Every combination is read from an index, newest first (run_lists.py).
        with self._db.read() as tx:
            if self._db.plan_for_values:  # a filter's value may be rare or common
                tx.execute(self._db.plan_for_values)
            after = None
            if before is not None:
                after = tx.execute(SELECT_KEYSET, before).fetchone()
                if after is None:  # no such run: no page after it
                    return []
            statement, params = list_runs_query(
                workflow=workflow,
                status=status,
                schedule_key=schedule_key,
                parent_id=parent_id,
                after=None if after is None else (after[0], after[1]),
                no_index=self._db.no_index,
                ranged=bool(self._db.plan_for_values),
            )
            rows = tx.execute(statement, *params, limit).fetchall()
        return [run_from_row(row) for row in rows]

    def list_steps(self, run_id: str) -> list[StepInfo]:
        with self._db.read() as tx:
            rows = tx.execute(SELECT_STEPS, run_id).fetchall()
        return [step_from_row(row) for row in rows]

    def claim_runs(self, request: ClaimRequest) -> list[ClaimedRun]:
        if not can_claim(request):
            return []
        return _claimed(self._db.write(lambda tx: self.claim_in(tx, request)), request)

    def claim_or_next_due(self, request: ClaimRequest) -> tuple[list[ClaimedRun], int | None]:
        pools, workflows = request.pools, list(request.limits)

        def work(tx: Transaction) -> tuple[list[TakenRun], int | None]:
            taken = self.claim_in(tx, request)
            if len(taken) == request.limit or not pools or not workflows:
                return taken, None
            # In the claim's transaction: an idle poll is one transaction, not two.
            return taken, self._db.next_due_in(tx, pools, workflows, suspects=request.idle)

        taken, due = self._db.write(work)
        return _claimed(taken, request), due

    def straight_claim(self, tx: Transaction, request: ClaimRequest | None) -> StraightClaim:
        """The claim ``request`` made with the runs ``tx`` inserts (``run_inserts.py``)."""
        return StraightClaim(self._db, tx, request)

    def claim_in(self, tx: Transaction, request: ClaimRequest | None) -> list[TakenRun]:
        """Claim runs in the transaction ``tx`` (see ``store.runs.claim_runs``); ``_claimed``
        makes them ``ClaimedRun`` after the commit, out of the writer's way."""
        opened = open_workflows(self._db, tx, request)
        if request is None or opened is None:
            return []
        return self._db.take_runs(tx, request, *opened)

    def renew_leases(
        self, *, tokens: Mapping[str, str], now_ms: int, lease_ms: int
    ) -> dict[str, bool]:
        def work(tx: Transaction) -> dict[str, bool]:
            held = {}
            for run_id, token in tokens.items():
                row = tx.execute(RENEW_LEASE, now_ms + lease_ms, run_id, token).fetchone()
                if row is not None:
                    held[run_id] = bool(row[0])
            return held

        return self._db.write(work)

    def record_step(
        self, *, run_id: str, token: str, step: StepRecord, now_ms: int, lease_ms: int
    ) -> bool:
        def work(tx: Transaction) -> bool:
            cancelled = self._db.record_step(
                tx, run_id=run_id, token=token, step=step, now_ms=now_ms, lease_ms=lease_ms
            )
            if step.kind == "step":
                observe_step(tx, step.status, step.started_ms, step.finished_ms)
            return cancelled

        return self._db.write(work)

    def finish_run(
        self,
        *,
        run_id: str,
        token: str,
        status: RunStatus,
        result_json: str | None,
        error: str | None,
        now_ms: int,
        then_claim: ClaimRequest | None = None,
        running: RunInfo | None = None,
        traceback: str | None = None,
    ) -> Ended:
        def work(tx: Transaction) -> tuple[Any, list[TakenRun], HistoryEntry | None]:
            if running is None:  # not known to the caller: read its schedule first
                found = tx.execute(SELECT_SCHEDULE_KEY, run_id).fetchone()
                owner, parent = (None, None) if found is None else found
            else:
                owner, parent = running.schedule_key, running.parent_id
            # pause_after_failures' count and the buffered occurrence's wake-up, before
            # the run's row (state_changes.py)
            paused = None
            if owner is not None:
                paused, written = end_run_of_schedule(
                    tx, owner, status=status, run_id=run_id, error=error, now_ms=now_ms
                )
                if written:
                    self._db.notify(tx, "schedules")
            tx.execute(UNQUEUE_HELD, run_id, token)
            if tx.rowcount != 1:
                raise LeaseLost(run_id)
            kept_until = _kept_deadlines_until(status, now_ms)
            tx.execute(
                FINISH_RUN, str(status), result_json, error, traceback, now_ms, kept_until,
                run_id,
            )  # fmt: skip
            if running is None:  # not known to the caller: read it back
                row = tx.execute(SELECT_RUN, run_id).fetchone()
                workflow, started_ms = row[COL_WORKFLOW], row[COL_STARTED_AT]
            else:
                row, workflow, started = None, running.workflow, running.started_at
                started_ms = None if started is None else to_ms(started)
            count_run_end(tx, workflow, str(status), started_ms, now_ms)
            if parent is not None:  # a child: off its parent's join (joins.py)
                count_off(self._db, tx, run_id, parent, now_ms)
            return row, self.claim_in(tx, then_claim), paused

        row, taken, paused = self._db.write(work)
        run = (
            run_from_row(row)
            if running is None
            else ended_run(running, status, result_json, error, now_ms, traceback)
        )
        return Ended(run, _claimed(taken, then_claim), paused)

    def reschedule_run(
        self,
        *,
        run_id: str,
        token: str,
        status: RunStatus,
        available_ms: int,
        attempt: int,
        error: str | None,
        new_attempt: bool,
        then_claim: ClaimRequest | None = None,
    ) -> Ended:
        def work(tx: Transaction) -> tuple[Any, list[TakenRun]]:
            tx.execute(REQUEUE_HELD, str(status), available_ms, run_id, token)
            if tx.rowcount != 1:
                raise LeaseLost(run_id)
            row = tx.execute(
                RESCHEDULE_RUN, str(status), attempt, error, new_attempt, run_id
            ).fetchone()
            if new_attempt:
                tx.execute(FORGET_FAILED_STEPS, run_id)
            return row, self.claim_in(tx, then_claim)

        row, taken = self._db.write(work)
        return Ended(run_from_row(row), _claimed(taken, then_claim))

    def cancel_run(self, run_id: str, *, now_ms: int) -> bool:
        lock_row = self._db.lock_row  # none on SQLite: its writes take turns

        def work(tx: Transaction) -> bool:
            if lock_row:  # in the order firing takes them (see LOCK_SCHEDULE_OF_RUN)
                tx.execute(LOCK_SCHEDULE_OF_RUN + lock_row, run_id)
            cancelled, schedule_key = cancel_idle_run(self._db, tx, run_id, now_ms)
            if cancelled:
                if schedule_key is not None:
                    tx.execute(WAKE_BUFFERED, now_ms, now_ms, schedule_key)
            else:
                tx.execute(REQUEST_CANCEL, run_id)
                if tx.rowcount != 1:
                    return False
            # The cancel cascades: its unfinished children, and theirs (DESIGN §10).
            for (below,) in tx.execute(SELECT_DESCENDANTS, run_id).fetchall():
                if not cancel_idle_run(self._db, tx, below, now_ms)[0]:
                    tx.execute(REQUEST_CANCEL, below)
            return True

        return self._db.write(work)

    def release_leases(self, *, tokens: Sequence[str], now_ms: int) -> int:
        def work(tx: Transaction) -> int:
            released = 0
            for token in tokens:
                tx.execute(RELEASE_LEASE, now_ms, token)
                released += tx.rowcount
            if released:
                self._db.notify(tx, "runs")
            return released

        return self._db.write(work)

    def next_due_ms(
        self, *, pools: Sequence[str], workflows: Sequence[str], suspects: bool = True
    ) -> int | None:
        if not pools or not workflows:
            return None
        with self._db.read() as tx:
            return self._db.next_due_in(tx, pools, workflows, suspects=suspects)


def suspects_filter(suspects: bool) -> str:
    """Whether a next-due read counts the suspects (lost_workers.py): a busy worker does
    not wake for one it may not take."""
    return "" if suspects else NOT_SUSPECT


def _claimed(taken: list[TakenRun], request: ClaimRequest | None) -> list[ClaimedRun]:
    if not taken:
        return []
    assert request is not None
    return claimed_runs(taken, request.now_ms)
