"""PostgreSQL's claim: the due runs taken under new leases in one statement per level.

Elsewhere a claim reads its candidates and writes each run taken on its own; here one
statement does both, for each priority level in turn (``sql_runs.levels``: the levels
are read first, one seek each, so that no walk passes the runs not yet due): the
candidates are read from ``tickwork_queue_claim``, one walk per workflow served, each in
the claim's order (its queue rows locked with ``FOR UPDATE SKIP LOCKED``, so workers skip
each other's), so that no walk passes the due runs of workflows this worker does not
serve; the first of the walks' rows are taken (a worker serving one workflow: its one
walk, as it comes), their queue rows take the new leases and their runs' rows the new
status. Each walk reads, and locks until the commit, as many runs as the claim wants, so
a worker serving several workflows may hold a few more locks than it takes runs: other
workers skip those for that long. It returns each run as it was
before the claim (its old status and token tell a take-over, its old start a resumed
run), which the candidates' columns give (``RETURNING`` alone gives the new row).

The checkpoints of the runs that had started are read next, in one statement for all
of them and after the runs are locked (a snapshot taken before the lock could miss a
checkpoint committed meanwhile by the worker that held the lease). A take-over's count
of lost workers needs them (``run_rows.count_recoveries``): it is written by a third
statement, only for the runs whose count changes, which are the rare take-overs; whether
a take-over's lost worker had other runs (``lost_workers.py``) is read for those only.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

from .claim_records import ClaimRequest
from .lost_workers import lost_with_others
from .run_rows import (
    CLAIM_COLUMNS,
    CLAIM_SELECT,
    COL_ATTEMPT_STARTED_AT,
    COL_ID,
    COL_LEASE_TOKEN,
    COL_PRIORITY,
    COL_RECOVERIES,
    COL_RECOVERY_MARK,
    COL_STARTED_AT,
    COL_SUSPECT,
    COL_WORKFLOW,
    STEP_COL_RUN_ID,
    STEP_COLUMNS,
    TakenRun,
    count_recoveries,
    is_take_over,
    lease_worker,
)
from .sql_runs import (
    NOT_SUSPECT,
    ONLY_SUSPECTS,
    QUEUE_FILTER,
    suspects_filter,
)
from .transaction import UNSORTED, WALKED, Transaction, in_filters, marks

__all__ = [
    "CLAIM",
    "claim_statement",
    "next_due_in",
    "suspect_claim_statement",
    "take_runs",
    "take_suspect",
]

#: the candidates' columns the claim returns; then their old available_at, the new token
_CANDIDATE = ", ".join(f"c.{name}" for name in CLAIM_COLUMNS)
#: positions of the columns returned after CLAIM_COLUMNS
_COL_AVAILABLE_AT = len(CLAIM_COLUMNS)
_COL_TOKEN = len(CLAIM_COLUMNS) + 1

# The priority levels of the runs in flight of each workflow served, highest first: a
# skip-scan per workflow (sql_runs.levels), one seek of tickwork_queue_claim per level,
# whatever the number of runs, and none among the workflows not served. {served}: one
# "(?::text)" per workflow, not an array: the generic plan of a prepared statement would
# guess an array's length (10), price itself above the custom plans and so be planned
# again at every execution (0.3 ms a claim here, against 0.05 ms for the old walk).
LEVELS_OF_SERVED = """
WITH RECURSIVE level(workflow, priority) AS (
    SELECT served.workflow, (SELECT MAX(q.priority) FROM tickwork_queue q
        WHERE q.workflow = served.workflow)
    FROM (VALUES {served}) AS served(workflow)
    UNION ALL
    SELECT level.workflow, (SELECT MAX(q.priority) FROM tickwork_queue q
        WHERE q.workflow = level.workflow AND q.priority < level.priority)
    FROM level WHERE level.priority IS NOT NULL
)"""
SELECT_LEVELS = LEVELS_OF_SERVED + (
    " SELECT workflow, priority FROM level WHERE priority IS NOT NULL"
)
# The earliest instant at which some run becomes claimable: the first run of each level
# of each workflow served, sought in tickwork_queue_claim, the earliest of them;
# {filters}: the pools' and suspects' (sqlite_claim.NEXT_DUE_OF_LEVELS is SQLite's).
NEXT_DUE = (
    LEVELS_OF_SERVED
    + """
SELECT MIN((SELECT q.available_at FROM tickwork_queue q
    WHERE q.workflow = level.workflow AND q.priority = level.priority {filters}
    ORDER BY q.available_at LIMIT 1))
FROM level WHERE level.priority IS NOT NULL
"""
)


def served(workflows: int) -> str:
    """``LEVELS_OF_SERVED``'s ``{served}`` for that many workflows."""
    return ", ".join(["(?::text)"] * workflows)


# Take the most urgent due runs of one priority level under new leases, in one
# statement: the {candidates} (WALK, one per workflow served; or a suspect's walk) have
# their queue rows locked (skipping rows other workers hold), each with its run's row;
# {taken} is TAKE_ALL, TAKE_FIRST or TAKE_WITH_ROOM. Each run gets its own token: the
# worker id and 48 random bits (it fences, it is no secret). A run taken over becomes a
# suspect, until that execution ends (lost_workers.py). started_at and attempt_started_at
# are set once. MATERIALIZED: the locking read runs once.
CLAIM = f"""
WITH candidate AS MATERIALIZED ({{candidates}}
), taken AS MATERIALIZED ({{taken}}
), leased AS (
    UPDATE tickwork_queue q SET status = 'running',
        lease_token = ? || '.' || lpad(to_hex(floor(random() * 281474976710656)::bigint), 12, '0'),
        available_at = ?,
        suspect = CASE WHEN c.status = 'running' AND c.lease_token IS NOT NULL THEN 1
            ELSE q.suspect END
    FROM taken c
    WHERE q.id = c.id
    RETURNING q.id, q.lease_token
)
UPDATE tickwork_runs r SET status = 'running', started_at = COALESCE(r.started_at, ?),
    attempt_started_at = COALESCE(r.attempt_started_at, ?)
FROM taken c JOIN leased l ON l.id = c.id
WHERE r.id = c.id
RETURNING {_CANDIDATE}, c.available_at, l.lease_token
"""
# One workflow's due runs at one priority level, first due first: a seek of
# tickwork_queue_claim (migration 0020) from the level's first run to its first run not
# yet due, so that no walk passes the runs of the workflows this worker does not serve
# (one walk of the whole queue passed every one of them: 100,000 runs of a workflow
# nobody served made another workflow drain 5-10 times slower). {pools}: "AND q.pool IN
# (...)" with placeholders.
WALK = f"""
    SELECT {CLAIM_SELECT}, q.available_at
    FROM tickwork_queue q JOIN tickwork_runs r ON r.id = q.id
    WHERE q.workflow = ? AND q.priority = ? AND q.available_at <= ? {{pools}}{NOT_SUSPECT}
    ORDER BY q.priority DESC, q.available_at, q.id
    LIMIT ?
    FOR UPDATE OF q SKIP LOCKED"""
# The most urgent suspect of the workflows served, at any level: a walk of the few-row
# tickwork_queue_suspects; {filters} as in sqlite_claim.SELECT_CLAIMABLE.
SUSPECT_WALK = f"""
    SELECT {CLAIM_SELECT}, q.available_at
    FROM tickwork_queue q JOIN tickwork_runs r ON r.id = q.id
    WHERE q.available_at <= ? {{filters}}{ONLY_SUSPECTS}
    ORDER BY q.priority DESC, q.available_at, q.id
    LIMIT 1
    FOR UPDATE OF q SKIP LOCKED"""
# Every candidate is taken (one workflow's walk: they are the first already).
TAKE_ALL = "SELECT * FROM candidate"
# The first candidates of the workflows' walks (each walk read as many as wanted, so the
# first of them all are among them): a sort of those few rows.
TAKE_FIRST = "SELECT * FROM candidate ORDER BY priority DESC, available_at, id LIMIT ?"
# Under concurrency limits: the first candidates of each limited workflow, as many as it
# has room for (given as two arrays: workflows, room), then the first `limit` of those,
# in the candidates' order (as sqlite_claim.take_runs picks them, one by one).
TAKE_WITH_ROOM = """
    SELECT ranked.* FROM (
        SELECT candidate.*, row_number() OVER (
            PARTITION BY workflow ORDER BY priority DESC, available_at, id) AS nth
        FROM candidate
    ) ranked
    LEFT JOIN unnest(?::text[], ?::bigint[]) AS room(workflow, most)
        ON room.workflow = ranked.workflow
    WHERE room.most IS NULL OR ranked.nth <= room.most
    ORDER BY priority DESC, available_at, id
    LIMIT ?"""
# The checkpoints of the runs taken that had started, in the order each recorded them.
SELECT_STEPS_OF = f"""
SELECT {", ".join(STEP_COLUMNS)} FROM tickwork_steps WHERE run_id = ANY(?) ORDER BY run_id, seq
"""
# A take-over's count of workers lost in a row (run_rows.count_recoveries).
COUNT_RECOVERY = "UPDATE tickwork_runs SET recoveries = ?, recovery_mark = ? WHERE id = ?"


def claim_statement(pools: int, workflows: int, *, limited: bool) -> str:
    """The claim of one priority level for ``workflows`` workflows in ``pools`` pools: one
    ``WALK`` per workflow (the walks' rows in one Append, then their first taken)."""
    walk = WALK.format(pools=f" AND q.pool IN ({marks(pools)})")
    candidates = (
        walk
        if workflows == 1
        else "\n    UNION ALL".join(
            f"\n    SELECT * FROM ({walk}\n    ) walk{n}" for n in range(workflows)
        )
    )
    taken = TAKE_WITH_ROOM if limited else TAKE_ALL if workflows == 1 else TAKE_FIRST
    return CLAIM.format(candidates=candidates, taken=taken)


def suspect_claim_statement(filters: str) -> str:
    """The claim of the most urgent suspect (``SUSPECT_WALK``) of the ``filters``."""
    return CLAIM.format(candidates=SUSPECT_WALK.format(filters=filters), taken=TAKE_ALL)


# Each of these is the PostgreSQL Database's method of the same name (transaction.Database).


def take_runs(
    tx: Transaction,
    request: ClaimRequest,
    open_workflows: Sequence[str],
    room: Mapping[str, int],
) -> list[TakenRun]:
    """Take the most urgent due runs under new leases: one statement per level."""
    # Level by level, highest first: a walk across levels would pass every run not
    # yet due (sql_runs.levels). Each level's runs come before the next level's in the
    # claim's order, so the runs taken are the same as one walk's.
    rows: list[Any] = []
    left = dict(room)
    levels: dict[int, list[str]] = {}
    statement = SELECT_LEVELS.format(served=served(len(open_workflows)))
    for workflow, priority in tx.execute(statement, *open_workflows).fetchall():
        levels.setdefault(priority, []).append(workflow)
    for priority in sorted(levels, reverse=True):
        # The workflows with runs at this level and room left, in the worker's order (one
        # statement's text, and so its prepared plan, per number of workflows).
        here = set(levels[priority])
        workflows = [name for name in open_workflows if name in here and left.get(name, 1) > 0]
        if not workflows:
            continue
        taken = _take_level(tx, request, priority, workflows, left, request.limit - len(rows))
        rows += taken
        for row in taken:
            if row[COL_WORKFLOW] in left:
                left[row[COL_WORKFLOW]] -= 1
        if len(rows) == request.limit:
            break
    # In the candidates' order (an UPDATE's RETURNING has none of its own); which runs
    # are taken was decided in SQL, so only ties' order may follow Python's collation.
    rows.sort(key=lambda row: (-row[COL_PRIORITY], row[_COL_AVAILABLE_AT], row[COL_ID]))
    return _with_steps(tx, rows, request.now_ms)


def _take_level(
    tx: Transaction,
    request: ClaimRequest,
    priority: int,
    open_workflows: Sequence[str],
    room: Mapping[str, int],
    limit: int,
) -> list[Any]:
    """Take at most ``limit`` due runs at ``priority`` (as ``take_runs``)."""
    now_ms, pools, worker = request.now_ms, request.pools, request.worker
    room = {name: most for name, most in room.items() if name in open_workflows}
    # With limits, some candidates may be passed over: read a few more.
    candidates = limit * 2 if room else limit
    params: list[Any] = []
    for workflow in open_workflows:
        params += [workflow, priority, now_ms, *pools, candidates]
    if room:
        params += [list(room), list(room.values()), limit]
    elif len(open_workflows) > 1:
        params.append(limit)
    params += [worker, now_ms + request.lease_ms, now_ms, now_ms]
    statement = claim_statement(len(pools), len(open_workflows), limited=bool(room))
    # One walk: planned as a walk of tickwork_queue_claim in order (transaction.UNSORTED
    # says why). Several: their rows are sorted, which UNSORTED would price so high that
    # PostgreSQL planned the prepared claim again at every execution (docs/architecture.md
    # "The queue"): each is kept on its index by WALKED instead.
    walked = UNSORTED if len(open_workflows) == 1 and not room else WALKED
    return tx.execute_under(walked, statement, *params).fetchall()


def next_due_in(
    tx: Transaction,
    pools: Sequence[str],
    workflows: Sequence[str],
    *,
    suspects: bool = True,
) -> int | None:
    filters = f"AND q.pool IN ({marks(len(pools))})" + suspects_filter(suspects)
    statement = NEXT_DUE.format(served=served(len(workflows)), filters=filters)
    # Each level walked from its earliest run (transaction.UNSORTED says why).
    row = tx.execute_under(UNSORTED, statement, *workflows, *pools).fetchone()
    return None if row is None or row[0] is None else int(row[0])


def take_suspect(
    tx: Transaction, request: ClaimRequest, open_workflows: Sequence[str]
) -> TakenRun | None:
    now_ms, pools = request.now_ms, request.pools
    filters = in_filters(pools, open_workflows, QUEUE_FILTER)
    params = [now_ms, *pools, *open_workflows, request.worker]
    params += [now_ms + request.lease_ms, now_ms, now_ms]
    rows = tx.execute(suspect_claim_statement(filters), *params).fetchall()
    return _with_steps(tx, rows, now_ms)[0] if rows else None


def _with_steps(tx: Transaction, rows: list[Any], now_ms: int) -> list[TakenRun]:
    """The runs taken, each with its checkpoints and its count of lost workers."""
    # A run that never started can have no checkpoints yet.
    started = [
        row[COL_ID]
        for row in rows
        if row[COL_STARTED_AT] is not None or row[COL_ATTEMPT_STARTED_AT] is not None
    ]
    steps: dict[str, list[Any]] = {run_id: [] for run_id in started}
    if started:
        for step in tx.execute(SELECT_STEPS_OF, started).fetchall():
            steps[step[STEP_COL_RUN_ID]].append(step)
    shared = _shared_losses(tx, rows, now_ms)
    taken = []
    for row in rows:
        own = steps.get(row[COL_ID], [])
        taken_over = is_take_over(row)
        lost_with = taken_over and shared[row[COL_LEASE_TOKEN]]
        recoveries, mark, lost_workers = count_recoveries(row, own, shared=lost_with)
        if (recoveries, mark) != (row[COL_RECOVERIES], row[COL_RECOVERY_MARK]):
            tx.execute(COUNT_RECOVERY, recoveries, mark, row[COL_ID])
        alone = taken_over or row[COL_SUSPECT] != 0
        taken.append((row, row[_COL_TOKEN], own, lost_workers, alone))
    return taken


def _shared_losses(tx: Transaction, rows: list[Any], now_ms: int) -> dict[str, bool]:
    """Whether each take-over among ``rows`` (by its old token) lost a worker that had
    other runs in flight (``lost_workers.py``). The runs this claim took are under its
    own tokens already, so its take-overs from one worker are counted here; they are
    looked at in token order (``lost_workers.RECORD_COMPANIONS`` says why)."""
    tokens = sorted(row[COL_LEASE_TOKEN] for row in rows if is_take_over(row))
    lost = Counter(lease_worker(token) for token in tokens)
    taken = [row[COL_ID] for row in rows]
    return {
        token: lost_with_others(tx, token, now_ms, taken, taken_with=lost[lease_worker(token)] - 1)
        for token in tokens
    }
