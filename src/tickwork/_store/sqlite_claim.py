"""SQLite's claim and checkpoint: the methods of its ``Database`` that the claim and a
step's write call (PostgreSQL's: ``pg_claim.py``, its ``record_step`` in ``postgres.py``).

A claim reads its candidates, then writes each run it takes: per served workflow, a
seek of ``tickwork_queue_claim`` at its highest priority level in the same statement
as the check that no level lies below (the common claim is one statement), then the
levels below one by one (``sql_runs.levels``: a waiting run costs nothing per claim;
docs/architecture.md "The queue").
"""

from __future__ import annotations

import functools
from collections.abc import Mapping, Sequence
from typing import Any

from .._values.records import StepRecord
from .claim_records import ClaimRequest, LeaseLost
from .lost_workers import lost_with_others
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
    TakenRun,
    claim_order,
    count_recoveries,
    is_take_over,
    new_lease_token,
)
from .sql_runs import (
    NOT_SUSPECT,
    ONLY_SUSPECTS,
    QUEUE_FILTER,
    SELECT_STEPS,
    levels,
    suspects_filter,
)
from .transaction import Transaction, in_filters

__all__ = ["claim_candidates", "next_due_in", "record_step", "take_runs"]

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
# The earliest instant at which some run becomes claimable: the first run of each
# priority level, the earliest of them ({filters} as in SELECT_CLAIMABLE).
NEXT_DUE_OF_LEVELS = """
SELECT MIN((SELECT q.available_at FROM tickwork_queue q
    WHERE q.priority = level.priority {filters} ORDER BY q.available_at LIMIT 1))
FROM level WHERE level.priority IS NOT NULL
"""
# ... of one workflow (SQLite; PostgreSQL's are read with the levels of all).
NEXT_DUE = levels(one_workflow=True) + NEXT_DUE_OF_LEVELS


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
