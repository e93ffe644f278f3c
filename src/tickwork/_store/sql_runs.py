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

import functools
from collections.abc import Mapping, Sequence
from typing import Any

from .._values.clock import to_ms
from .._values.models import HistoryEntry, RunInfo, RunStatus, StepInfo
from .._values.records import NewRun, StepRecord
from .claim_records import ClaimedRun, ClaimRequest, Ended, LeaseLost
from .claim_room import can_claim, open_workflows
from .counters import count_run_end, observe_step
from .lost_workers import lost_with_others
from .recent_runs import RecentRunsSql
from .run_inserts import StraightClaim
from .run_lists import SELECT_KEYSET, list_runs_query
from .run_rows import (
    CLAIM_SELECT,
    COL_ATTEMPT_STARTED_AT,
    COL_DUE_AT,
    COL_ID,
    COL_LEASE_TOKEN,
    COL_PRIORITY,
    COL_STARTED_AT,
    COL_SUSPECT,
    COL_WORKFLOW,
    RUN_COLUMNS,
    STEP_COLUMNS,
    TakenRun,
    claim_order,
    claimed_runs,
    count_recoveries,
    ended_run,
    inserted_run,
    is_take_over,
    new_lease_token,
    run_from_row,
    step_from_row,
)
from .state_changes import WAKE_BUFFERED, end_run_of_schedule
from .transaction import Transaction, in_filters

__all__ = [
    "REQUEST_CANCEL",
    "RunsSql",
    "cancel_idle_run",
    "claim_candidates",
    "next_due_in",
    "record_step",
    "take_runs",
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


# One workflow's priority levels (SQLite's claim walks them one by one).
SELECT_LEVELS = levels(one_workflow=True) + " SELECT priority FROM level WHERE priority IS NOT NULL"
# One workflow's candidates at one priority level, first due first: a seek of
# tickwork_queue_claim that stops at the level's first run not yet due, each run's row
# found by its id (CROSS JOIN: SQLite joins in the order written). {filters} becomes
# "AND q.pool IN (...) AND q.workflow IN (?)" with placeholders.
SELECT_CLAIMABLE = f"""
SELECT {CLAIM_SELECT}, q.available_at FROM tickwork_queue q CROSS JOIN tickwork_runs r
WHERE r.id = q.id AND q.priority = ? AND q.available_at <= ? {{filters}}
ORDER BY q.priority DESC, q.available_at, q.id
LIMIT ?
"""
# The same at the workflow's highest priority level, found in the same statement: the
# common claim (one level, or enough due runs at the highest) is then one statement, not
# SELECT_LEVELS and then SELECT_CLAIMABLE. Its first parameter is the workflow.
SELECT_TOP_CLAIMABLE = SELECT_CLAIMABLE.replace(
    "q.priority = ?", "q.priority = (SELECT MAX(priority) FROM tickwork_queue WHERE workflow = ?)"
)
# An idle worker's first read: the most urgent suspect due ({suspects}: SELECT_SUSPECT's
# filters), then SELECT_TOP_CLAIMABLE's candidates ({filters}), in one statement (a
# suspect, if any, is taken alone: the candidates are then left).
SELECT_SUSPECT_THEN_TOP = """
SELECT * FROM ({suspect})
UNION ALL
SELECT * FROM ({top})
"""


def _with_levels_row(select: str) -> str:
    """``select`` and, last, a row with no id whose priority and available_at columns hold
    the lowest and the highest priority queued of the workflow (its last parameter): two
    seeks of tickwork_queue_claim that tell, in the same statement, whether levels below
    the highest exist. Without them (the common case: one level, or none queued) a claim
    that found too few due runs need not walk the levels (SELECT_LEVELS)."""
    columns = ["NULL"] * (COL_DUE_AT + 1)
    columns[COL_PRIORITY] = "(SELECT MIN(priority) FROM tickwork_queue WHERE workflow = ?)"
    columns[COL_DUE_AT] = "(SELECT MAX(priority) FROM tickwork_queue WHERE workflow = ?)"
    return f"SELECT * FROM ({select}) AS candidates\nUNION ALL\nSELECT {', '.join(columns)}"


def _levels_below(rows: list[Any]) -> bool:
    """Take ``_with_levels_row``'s row (the one without an id) off ``rows``; whether it
    says levels lie below the highest."""
    at = len(rows) - 1  # last, as SQLite returns a UNION ALL; looked for if not
    if rows[at][COL_ID] is not None:
        at = next(i for i, row in enumerate(rows) if row[COL_ID] is None)
    lowest, highest = rows[at][COL_PRIORITY], rows[at][COL_DUE_AT]
    del rows[at]
    return lowest is not None and lowest != highest


#: the queue's alias in the worker's filters (in_filters)
QUEUE_FILTER = "q."
#: a claim's filters that pass over the suspects (lost_workers.py), or keep only them
NOT_SUSPECT = " AND q.suspect = 0"
ONLY_SUSPECTS = " AND q.suspect <> 0"
# The most urgent suspect of the workflows served, from migration 0014's few-row index
# (the claim index would walk each workflow's due runs in the way); {filters} as above.
SELECT_SUSPECT = f"""
SELECT {CLAIM_SELECT}, q.available_at
FROM tickwork_queue q INDEXED BY tickwork_queue_suspects CROSS JOIN tickwork_runs r
WHERE r.id = q.id AND q.available_at <= ? {{filters}}
ORDER BY q.priority DESC, q.available_at, q.id
LIMIT 1
"""
# Take one run under a new lease, in the queue; then the run's own row: started_at and
# attempt_started_at are set once, and the count of workers lost in a row is kept in the
# same write (run_rows.count_recoveries).
LEASE_RUN = """
UPDATE tickwork_queue SET status = 'running', lease_token = ?, available_at = ?, suspect = ?
WHERE id = ?
"""
START_RUN = """
UPDATE tickwork_runs SET status = 'running', started_at = COALESCE(started_at, ?),
    attempt_started_at = COALESCE(attempt_started_at, ?), recoveries = ?, recovery_mark = ?
WHERE id = ?
"""
# Renew a lease still held (status and token unchanged).
RENEW_LEASE = """
UPDATE tickwork_queue SET available_at = ?
WHERE id = ? AND lease_token = ? AND status = 'running'
RETURNING cancel_requested
"""
# Write a checkpoint if the lease is still held and cancel_requested is at most the last
# parameter (0: not cancelled); nothing is written otherwise. A failed try is replaced by
# the next try's outcome. The lease is not renewed here: renew_leases does (PostgreSQL
# does both in one statement: postgres.RECORD_STEP).
RECORD_STEP = """
INSERT INTO tickwork_steps (run_id, kind, name, seq, status, result, error, attempts,
    started_at, finished_at, tries)
SELECT id, ?, ?, ?, ?, ?, ?, ?, ?, ?, ? FROM tickwork_queue
WHERE id = ? AND lease_token = ? AND status = 'running' AND cancel_requested <= ?
ON CONFLICT (run_id, kind, name) DO UPDATE SET status = excluded.status,
    result = excluded.result, error = excluded.error, attempts = excluded.attempts,
    started_at = excluded.started_at, finished_at = excluded.finished_at,
    tries = excluded.tries
"""
# The schedule of a run (finish_run reads it first when its caller does not know it).
SELECT_SCHEDULE_KEY = "SELECT schedule_key FROM tickwork_runs WHERE id = ?"
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
# schedule's key, and its workflow and start (for metrics).
CANCEL_RUN = """
UPDATE tickwork_runs SET status = 'cancelled', finished_at = ?, deadline_at = NULL
WHERE id = ?
RETURNING schedule_key, workflow, started_at
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
# The earliest instant at which some run becomes claimable: the first run of each
# priority level, the earliest of them ({filters} as in SELECT_CLAIMABLE).
NEXT_DUE_OF_LEVELS = """
SELECT MIN((SELECT q.available_at FROM tickwork_queue q
    WHERE q.priority = level.priority {filters} ORDER BY q.available_at LIMIT 1))
FROM level WHERE level.priority IS NOT NULL
"""
# ... of one workflow (SQLite; PostgreSQL's are read with the levels of all).
NEXT_DUE = levels(one_workflow=True) + NEXT_DUE_OF_LEVELS


def _kept_deadlines_until(status: RunStatus, now_ms: int) -> int:
    """The latest deadline a run ending now as ``status`` keeps for the deadline pass:
    a completed run only a deadline already passed (it completed late); a failed one any
    (it never completed); a cancelled one none."""
    if status is RunStatus.COMPLETED:
        return now_ms - 1
    return -1 if status is RunStatus.CANCELLED else _NO_DEADLINE_CLEARED


#: a bound above every instant: a failed run keeps its deadline
_NO_DEADLINE_CLEARED = 2**62


def cancel_idle_run(tx: Transaction, run_id: str, now_ms: int) -> tuple[bool, str | None]:
    """Cancel the run if it is pending or sleeping, counting its end; return whether it
    was, and its schedule's key."""
    tx.execute(UNQUEUE_IDLE, run_id)
    if tx.rowcount != 1:
        return False, None
    schedule_key, workflow, started_ms = tx.execute(CANCEL_RUN, now_ms, run_id).fetchone()
    count_run_end(tx, workflow, RunStatus.CANCELLED.value, started_ms, now_ms)
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
                owner = None if found is None else found[0]
            else:
                owner = running.schedule_key
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
            cancelled, schedule_key = cancel_idle_run(tx, run_id, now_ms)
            if cancelled:
                if schedule_key is not None:
                    tx.execute(WAKE_BUFFERED, now_ms, now_ms, schedule_key)
                return True
            tx.execute(REQUEST_CANCEL, run_id)
            return tx.rowcount == 1

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


# -- SQLite's claim and checkpoint: its Database's methods (PostgreSQL's: pg_claim.py)


def take_runs(
    tx: Transaction,
    request: ClaimRequest,
    open_workflows: Sequence[str],
    room: Mapping[str, int],
) -> list[TakenRun]:
    """Take the most urgent due runs of ``open_workflows`` under new leases, at most
    ``room[name]`` of each concurrency-limited workflow (counted and serialized by the
    caller); an idle request's suspect first, alone (``Database.take_runs``). Here a read
    of candidates, then one write per run taken; PostgreSQL takes them in one statement
    (``pg_claim.py``)."""
    rows = claim_candidates(tx, request, open_workflows, room)
    if rows and rows[0][COL_SUSPECT] != 0:  # it runs alone (lost_workers.py)
        return [_take(tx, rows[0], request, ())]
    left = dict(room)
    claimed: list[TakenRun] = []
    for row in rows:
        workflow = row[COL_WORKFLOW]
        if workflow in left:
            if left[workflow] <= 0:
                continue
            left[workflow] -= 1
        claimed.append(_take(tx, row, request, [taken[0][COL_ID] for taken in claimed]))
        if len(claimed) == request.limit:
            break
    return claimed


def claim_candidates(
    tx: Transaction,
    request: ClaimRequest,
    open_workflows: Sequence[str],
    room: Mapping[str, int],
) -> list[Any]:
    """What ``take_runs`` would take from, read only: the due runs of ``open_workflows``
    in the claim's order (rows of CLAIM_COLUMNS, then available_at), or an idle
    request's suspect alone."""
    now_ms, pools = request.now_ms, request.pools
    top, statement, suspect_then_top = _claim_statements(len(pools), len(open_workflows))
    # With limits, some candidates may be passed over: read a few more.
    candidates = request.limit * 2 if room else request.limit
    # Each workflow's most urgent, level by level, then merged in the claim's order:
    # one walk of the whole queue in that order would pass every due run of the
    # workflows this worker does not serve (migration 0012), and a walk across levels
    # every run not yet due (levels).
    rows: list[Any] = []
    for n, workflow in enumerate(open_workflows):
        params = [workflow, now_ms, *pools, workflow, candidates, workflow, workflow]
        if n == 0 and request.idle:
            suspects = (now_ms, *pools, *open_workflows)
            found = tx.execute(suspect_then_top, *suspects, *params).fetchall()
            below = _levels_below(found)
            suspect = next((row for row in found if row[COL_SUSPECT] != 0), None)
            if suspect is not None:
                return [suspect]
        else:
            found = tx.execute(top, *params).fetchall()
            below = _levels_below(found)
        rows += found
        wanted = candidates - len(found)
        if not wanted or not below:
            continue
        # Fewer than wanted at the highest level: the levels below it, one by one.
        for (priority,) in tx.execute(SELECT_LEVELS, workflow, workflow).fetchall()[1:]:
            level = tx.execute(statement, priority, now_ms, *pools, workflow, wanted).fetchall()
            rows += level
            wanted -= len(level)
            if not wanted:
                break
    rows.sort(key=claim_order)
    return rows


@functools.lru_cache(maxsize=64)
def _claim_statements(pools: int, workflows: int) -> tuple[str, str, str]:
    """SELECT_TOP_CLAIMABLE, SELECT_CLAIMABLE (one workflow each) and
    SELECT_SUSPECT_THEN_TOP (the suspects of all ``workflows``) with their filters'
    placeholders, the first and the last with ``_with_levels_row``'s row, made once per
    number of pools and workflows (each claim needs them)."""
    one_workflow = in_filters(["?"] * pools, ["?"], QUEUE_FILTER) + NOT_SUSPECT
    top = SELECT_TOP_CLAIMABLE.format(filters=one_workflow)
    suspects = in_filters(["?"] * pools, ["?"] * workflows, QUEUE_FILTER) + ONLY_SUSPECTS
    suspect_then_top = SELECT_SUSPECT_THEN_TOP.format(
        suspect=SELECT_SUSPECT.format(filters=suspects), top=top
    )
    return (
        _with_levels_row(top),
        SELECT_CLAIMABLE.format(filters=one_workflow),
        _with_levels_row(suspect_then_top),
    )


def next_due_in(
    tx: Transaction,
    pools: Sequence[str],
    workflows: Sequence[str],
    *,
    suspects: bool = True,
) -> int | None:
    """``next_due_ms`` in the transaction ``tx``: each workflow's on its own, its
    levels sought in tickwork_queue_claim."""
    filters = in_filters(pools, workflows[:1], QUEUE_FILTER) + suspects_filter(suspects)
    statement = NEXT_DUE.format(filters=filters)
    earliest = []
    for workflow in workflows:
        row = tx.execute(statement, workflow, workflow, *pools, workflow).fetchone()
        if row is not None and row[0] is not None:
            earliest.append(int(row[0]))
    return min(earliest, default=None)


def record_step(tx: Transaction, *, run_id: str, token: str, step: StepRecord) -> bool:
    """``Database.record_step`` where the lease is left to ``renew_leases`` (SQLite)."""

    values = [
        step.kind, step.name, step.seq, step.status, step.result_json, step.error,
        step.attempts, step.started_ms, step.finished_ms, step.tries_json, run_id, token, 0,
    ]  # fmt: skip
    # One statement in the common case; a second only when cancellation was asked
    # for (the step did complete, so it is still recorded) or the lease is gone.
    if tx.execute(RECORD_STEP, *values).rowcount == 1:
        return False
    values[-1] = 1  # most_cancelled: a run whose cancellation was asked is written too
    if tx.execute(RECORD_STEP, *values).rowcount != 1:
        raise LeaseLost(run_id)
    return True


def suspects_filter(suspects: bool) -> str:
    """Whether a next-due read counts the suspects (lost_workers.py): a busy worker does
    not wake for one it may not take."""
    return "" if suspects else NOT_SUSPECT


def _take(
    tx: Transaction, row: Sequence[Any], request: ClaimRequest, before: Sequence[str]
) -> TakenRun:
    """Take one candidate row under a new lease, and read its checkpoints (first: a
    take-over counts its lost worker by them, if it had no other run: lost_workers.py);
    ``before``: the runs this claim took already."""
    worker, now_ms = request.worker, request.now_ms
    token = new_lease_token(worker)
    run_id = row[COL_ID]
    started = row[COL_STARTED_AT] is not None or row[COL_ATTEMPT_STARTED_AT] is not None
    # A run that never started can have no checkpoints yet.
    steps = tx.execute(SELECT_STEPS, run_id).fetchall() if started else []
    taken_over = is_take_over(row)
    shared = taken_over and lost_with_others(tx, row[COL_LEASE_TOKEN], now_ms, [*before, run_id])
    recoveries, mark, lost_workers = count_recoveries(row, steps, shared=shared)
    # A suspect until this execution ends (released at shutdown, it stays one).
    suspect = taken_over or row[COL_SUSPECT] != 0
    tx.execute(LEASE_RUN, token, now_ms + request.lease_ms, int(suspect), run_id)
    tx.execute(START_RUN, now_ms, now_ms, recoveries, mark, run_id)
    return row, token, steps, lost_workers, suspect


def _claimed(taken: list[TakenRun], request: ClaimRequest | None) -> list[ClaimedRun]:
    if not taken:
        return []
    assert request is not None
    return claimed_runs(taken, request.now_ms)
