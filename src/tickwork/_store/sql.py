"""The store contract in SQL, shared by every backend.

Statements are named constants with a comment each, written with ``?`` placeholders; a
dialect (``sqlite.py``, ``postgres.py``) supplies connections, transactions and the few
words that differ. Decisions stay in Python; the SQL only reads and writes.

A running run's ``available_at`` holds its lease expiry, so one index answers both "which
pending or sleeping runs are due" and "which leases have expired".
"""

from __future__ import annotations

import contextlib
import random
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import replace
from typing import Any, Protocol, TypeVar

from .._clock import from_ms
from .._ids import from_json
from .._models import ApiKeyInfo, RunInfo, RunStatus, StepInfo
from .contract import ClaimedRun, ClaimRequest, Ended, LeaseLost, NewRun, StepRecord, Store
from .sql_schedules import WAKE_BUFFERED, ScheduleSql, insert_run_row

__all__ = ["Cursor", "SqlStore"]

T = TypeVar("T")

_RUN_COLUMNS = (
    "id, workflow, version, status, input, result, error, attempt, priority, pool, "
    "schedule_key, scheduled_for, created_at, started_at, finished_at, schedule_revision"
)
_STEP_COLUMNS = "run_id, name, kind, status, result, error, attempts, started_at, finished_at"

SELECT_RUN = f"SELECT {_RUN_COLUMNS} FROM tickwork_runs WHERE id = ?"
SELECT_STEPS = f"SELECT {_STEP_COLUMNS} FROM tickwork_steps WHERE run_id = ? ORDER BY seq"
# Candidates for claiming, most urgent first; the partial index tickwork_runs_due serves it.
# {filters} becomes "AND pool IN (...) AND workflow IN (...)" with placeholders.
SELECT_CLAIMABLE = f"""
SELECT {_RUN_COLUMNS}, attempt_started_at, cancel_requested, retry FROM tickwork_runs
WHERE status IN ('pending', 'sleeping', 'running') AND available_at <= ? {{filters}}
ORDER BY priority DESC, available_at, id
LIMIT ?
"""
# Runs of one workflow under a live lease (for concurrency limits).
COUNT_LIVE = """
SELECT workflow, COUNT(*) FROM tickwork_runs
WHERE status = 'running' AND available_at > ? GROUP BY workflow
"""
# Take one run under a new lease; started_at and attempt_started_at are set once.
CLAIM_RUN = """
UPDATE tickwork_runs SET status = 'running', worker = ?, lease_token = ?, available_at = ?,
    started_at = COALESCE(started_at, ?), attempt_started_at = COALESCE(attempt_started_at, ?)
WHERE id = ?
"""
# Renew a lease still held (status and token unchanged).
RENEW_LEASE = """
UPDATE tickwork_runs SET available_at = ?
WHERE id = ? AND lease_token = ? AND status = 'running'
RETURNING cancel_requested
"""
# Write a checkpoint if the lease is still held and cancel_requested is at most the last
# parameter (0: not cancelled); nothing is written otherwise. A failed try is replaced by
# the next try's outcome. The lease is not renewed here (that would rewrite the run's row
# and its due index at every checkpoint): renew_leases does.
RECORD_STEP = """
INSERT INTO tickwork_steps (run_id, kind, name, seq, status, result, error, attempts,
    started_at, finished_at)
SELECT id, ?, ?, ?, ?, ?, ?, ?, ?, ? FROM tickwork_runs
WHERE id = ? AND lease_token = ? AND status = 'running' AND cancel_requested <= ?
ON CONFLICT (run_id, kind, name) DO UPDATE SET status = excluded.status,
    result = excluded.result, error = excluded.error, attempts = excluded.attempts,
    started_at = excluded.started_at, finished_at = excluded.finished_at
"""
# End a held run for good.
FINISH_RUN = """
UPDATE tickwork_runs SET status = ?, result = ?, error = ?, finished_at = ?,
    worker = NULL, lease_token = NULL, available_at = ?
WHERE id = ? AND lease_token = ? AND status = 'running'
"""
# Hand a held run back until later (sleep, retry back-off, shutdown).
RESCHEDULE_RUN = f"""
UPDATE tickwork_runs SET status = ?, available_at = ?, attempt = ?, error = ?,
    worker = NULL, lease_token = NULL,
    attempt_started_at = CASE WHEN ? THEN NULL ELSE attempt_started_at END
WHERE id = ? AND lease_token = ? AND status = 'running'
RETURNING {_RUN_COLUMNS}
"""
# A new attempt forgets the failed tries of the previous one (completed steps stay).
FORGET_FAILED_STEPS = "DELETE FROM tickwork_steps WHERE run_id = ? AND status = 'failed'"
# Cancel a run that is not executing right now.
CANCEL_IDLE_RUN = """
UPDATE tickwork_runs SET status = 'cancelled', finished_at = ?, worker = NULL,
    lease_token = NULL
WHERE id = ? AND status IN ('pending', 'sleeping')
RETURNING schedule_key
"""
# Ask the executor of a running run to stop at its next step boundary.
REQUEST_CANCEL = """
UPDATE tickwork_runs SET cancel_requested = 1 WHERE id = ? AND status = 'running'
"""
# Let another worker take these runs at once; dropping the token fences off the old owner.
RELEASE_LEASE = """
UPDATE tickwork_runs SET available_at = ?, worker = NULL, lease_token = NULL
WHERE lease_token = ? AND status = 'running'
"""
# API keys: a live name is unique (partial unique index), so a clash inserts nothing.
INSERT_API_KEY = """
INSERT INTO tickwork_api_keys (id, name, secret_hash, created_at) VALUES (?, ?, ?, ?)
ON CONFLICT DO NOTHING
"""
SELECT_API_KEY_HASH = (
    "SELECT secret_hash FROM tickwork_api_keys WHERE id = ? AND revoked_at IS NULL"
)
SELECT_API_KEYS = (
    "SELECT id, name, created_at, revoked_at FROM tickwork_api_keys ORDER BY created_at, id"
)
REVOKE_API_KEY = """
UPDATE tickwork_api_keys SET revoked_at = ?
WHERE (id = ? OR name = ?) AND revoked_at IS NULL
"""
# Runs listed after the given one, newest first (a keyset page: stable while runs arrive).
OLDER_THAN = "(created_at, id) < (SELECT created_at, id FROM tickwork_runs WHERE id = ?)"
# The earliest instant at which some run becomes claimable.
NEXT_DUE = """
SELECT MIN(available_at) FROM tickwork_runs
WHERE status IN ('pending', 'sleeping', 'running')
"""


class Cursor(Protocol):
    """The part of a DB-API cursor the store uses (sqlite3 and psycopg both fit)."""

    @property
    def rowcount(self) -> int: ...

    def execute(self, sql: str, params: Sequence[Any] = ..., /) -> Any: ...

    def executemany(self, sql: str, params: Sequence[Sequence[Any]], /) -> Any: ...

    def fetchone(self) -> Any: ...

    def fetchall(self) -> list[Any]: ...


def run_from_row(row: Sequence[Any]) -> RunInfo:
    return RunInfo(
        id=row[0],
        workflow=row[1],
        version=row[2],
        status=RunStatus(row[3]),
        input=from_json(row[4]),
        result=from_json(row[5]),
        error=row[6],
        attempt=row[7],
        priority=row[8],
        pool=row[9],
        schedule_key=row[10],
        scheduled_for=None if row[11] is None else from_ms(row[11]),
        created_at=from_ms(row[12]),
        started_at=None if row[13] is None else from_ms(row[13]),
        finished_at=None if row[14] is None else from_ms(row[14]),
        schedule_revision=row[15],
    )


def _inserted(run: NewRun) -> RunInfo:
    """The run as ``insert_run_row`` stores it (no need to read it back)."""
    return RunInfo(
        id=run.id,
        workflow=run.workflow,
        version=run.version,
        status=RunStatus.PENDING,
        input=from_json(run.input_json),
        result=None,
        error=None,
        attempt=1,
        priority=run.priority,
        pool=run.pool,
        schedule_key=run.schedule_key,
        scheduled_for=None if run.scheduled_for_ms is None else from_ms(run.scheduled_for_ms),
        created_at=from_ms(run.created_ms),
        started_at=None,
        finished_at=None,
        schedule_revision=run.schedule_revision,
    )


def _ended(
    running: RunInfo, status: RunStatus, result_json: str | None, error: str | None, now_ms: int
) -> RunInfo:
    """The run as ``FINISH_RUN`` leaves it (no need to read it back)."""
    return replace(
        running, status=status, result=from_json(result_json), error=error,
        finished_at=from_ms(now_ms),
    )  # fmt: skip


def step_from_row(row: Sequence[Any]) -> StepInfo:
    return StepInfo(
        run_id=row[0],
        name=row[1],
        kind=row[2],
        status=row[3],
        result=from_json(row[4]),
        error=row[5],
        attempts=row[6],
        started_at=from_ms(row[7]),
        finished_at=from_ms(row[8]),
    )


class SqlStore(ScheduleSql, Store):
    """Every contract method, over a dialect's ``_transaction``.

    Writes are functions of a transaction handed to ``_write``, so that a dialect may run
    several threads' writes in one transaction (SQLite does: see ``sqlite.py``).
    """

    #: appended to the claim query (PostgreSQL: "FOR UPDATE SKIP LOCKED")
    lock_suffix = ""
    #: put before a column to keep the planner off its index ("+" in SQLite)
    no_index = ""

    def _transaction(self, *, write: bool) -> contextlib.AbstractContextManager[Cursor]:
        raise NotImplementedError

    def _sql(self, statement: str) -> str:
        """The statement in the dialect's placeholder style."""
        return statement

    @contextlib.contextmanager
    def _tx(self, *, write: bool) -> Iterator[_Executor]:
        with self._transaction(write=write) as cursor:
            yield _Executor(cursor, self._sql)

    def _write(self, work: Callable[[_Executor], T]) -> T:
        """Run ``work`` in a write transaction and return what it returns."""
        with self._tx(write=True) as tx:
            return work(tx)

    def _serialize(self, tx: _Executor, names: Sequence[str]) -> None:
        """Make transactions that count and claim runs of ``names`` take turns.

        SQLite needs nothing: ``BEGIN IMMEDIATE`` already lets one writer in at a time.
        """

    def _notify(self, tx: _Executor, what: str) -> None:
        """Tell listening workers (other processes) that "runs" or "schedules" changed.

        Delivered at commit. SQLite has no such channel: workers poll.
        """

    def _in_filters(self, pools: Sequence[str], workflows: Sequence[str]) -> str:
        """SQL restricting runs to some pools and workflows, one placeholder per value.

        The columns are kept off their own indexes so the planner walks the due index.
        """
        pool_marks = ", ".join("?" * len(pools))
        workflow_marks = ", ".join("?" * len(workflows))
        return (
            f"AND {self.no_index}pool IN ({pool_marks}) "
            f"AND {self.no_index}workflow IN ({workflow_marks})"
        )

    def insert_run(
        self, run: NewRun, *, then_claim: ClaimRequest | None = None
    ) -> tuple[RunInfo, bool, Sequence[ClaimedRun]]:
        def work(tx: _Executor) -> tuple[Any, list[_Taken]]:
            if not insert_run_row(tx, run):  # it exists already
                return tx.execute(SELECT_RUN, run.id).fetchone(), []
            self._notify(tx, "runs")
            return None, self._claim(tx, then_claim)

        existing, taken = self._write(work)
        if existing is not None:
            return run_from_row(existing), False, ()
        return _inserted(run), True, _claimed(taken, then_claim)

    def get_run(self, run_id: str) -> RunInfo | None:
        with self._tx(write=False) as tx:
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
        clauses, params = [], []
        filters = (("workflow", workflow), ("status", status), ("schedule_key", schedule_key))
        for column, value in filters:
            if value is not None:
                clauses.append(f"{column} = ?")
                params.append(str(value))
        if before is not None:
            clauses.append(OLDER_THAN)
            params.append(before)
        where = f"WHERE {' AND '.join(clauses)}" if clauses else ""
        statement = (
            f"SELECT {_RUN_COLUMNS} FROM tickwork_runs {where} "
            "ORDER BY created_at DESC, id DESC LIMIT ?"
        )
        with self._tx(write=False) as tx:
            rows = tx.execute(statement, *params, limit).fetchall()
        return [run_from_row(row) for row in rows]

    def list_steps(self, run_id: str) -> list[StepInfo]:
        with self._tx(write=False) as tx:
            rows = tx.execute(SELECT_STEPS, run_id).fetchall()
        return [step_from_row(row) for row in rows]

    def claim_runs(
        self,
        *,
        now_ms: int,
        lease_ms: int,
        worker: str,
        pools: Sequence[str],
        limits: Mapping[str, int | None],
        limit: int,
    ) -> list[ClaimedRun]:
        request = ClaimRequest(now_ms, lease_ms, worker, pools, limits, limit)
        if not _can_claim(request):
            return []
        return _claimed(self._write(lambda tx: self._claim(tx, request)), request)

    def _claim(self, tx: _Executor, request: ClaimRequest | None) -> list[_Taken]:
        """Claim runs in the transaction ``tx`` (see ``claim_runs``); ``_claimed`` makes
        them ``ClaimedRun`` after the commit, out of the writer's way."""
        if request is None or not _can_claim(request):
            return []
        now_ms, limits, pools = request.now_ms, request.limits, request.pools
        live: dict[str, int] = {}
        limited = [name for name, cap in limits.items() if cap is not None]
        if limited:
            self._serialize(tx, limited)
            live = dict(tx.execute(COUNT_LIVE, now_ms).fetchall())
        # Full workflows are left out in SQL so they cannot crowd out the others.
        open_workflows = [
            name for name, cap in limits.items() if cap is None or live.get(name, 0) < cap
        ]
        if not open_workflows:
            return []
        statement = SELECT_CLAIMABLE.format(filters=self._in_filters(pools, open_workflows))
        # With limits, some candidates may be passed over below: read a few more.
        candidates = request.limit * 2 if limited else request.limit
        rows = tx.execute(
            statement + self.lock_suffix, now_ms, *pools, *open_workflows, candidates
        ).fetchall()
        claimed = []
        for row in rows:
            workflow = row[1]
            cap = limits[workflow]
            if cap is not None and live.get(workflow, 0) >= cap:
                continue
            live[workflow] = live.get(workflow, 0) + 1
            claimed.append(_take(tx, row, request))
            if len(claimed) == request.limit:
                break
        return claimed

    def renew_leases(
        self, *, tokens: Mapping[str, str], now_ms: int, lease_ms: int
    ) -> dict[str, bool]:
        def work(tx: _Executor) -> dict[str, bool]:
            held = {}
            for run_id, token in tokens.items():
                row = tx.execute(RENEW_LEASE, now_ms + lease_ms, run_id, token).fetchone()
                if row is not None:
                    held[run_id] = bool(row[0])
            return held

        return self._write(work)

    def record_step(
        self, *, run_id: str, token: str, step: StepRecord, now_ms: int, lease_ms: int
    ) -> bool:
        def work(tx: _Executor) -> bool:
            def write(most_cancelled: int) -> bool:
                tx.execute(
                    RECORD_STEP, step.kind, step.name, step.seq, step.status, step.result_json,
                    step.error, step.attempts, step.started_ms, step.finished_ms, run_id, token,
                    most_cancelled,
                )  # fmt: skip
                return tx.rowcount == 1

            # One statement in the common case; a second only when cancellation was asked
            # for (the step did complete, so it is still recorded) or the lease is gone.
            if write(0):
                return False
            if write(1):
                return True
            raise LeaseLost(run_id)

        return self._write(work)

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
    ) -> Ended:
        def work(tx: _Executor) -> tuple[Any, list[_Taken]]:
            tx.execute(FINISH_RUN, str(status), result_json, error, now_ms, now_ms, run_id, token)
            if tx.rowcount != 1:
                raise LeaseLost(run_id)
            if running is None:  # not known to the caller: read it back
                row = tx.execute(SELECT_RUN, run_id).fetchone()
                schedule_key = row[10]
            else:
                row, schedule_key = None, running.schedule_key
            if schedule_key is not None:
                tx.execute(WAKE_BUFFERED, now_ms, schedule_key, now_ms)
                if tx.rowcount:
                    self._notify(tx, "schedules")
            return row, self._claim(tx, then_claim)

        row, taken = self._write(work)
        run = (
            run_from_row(row)
            if running is None
            else _ended(running, status, result_json, error, now_ms)
        )
        return Ended(run, _claimed(taken, then_claim))

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
        def work(tx: _Executor) -> tuple[Any, list[_Taken]]:
            row = tx.execute(
                RESCHEDULE_RUN, str(status), available_ms, attempt, error, new_attempt, run_id,
                token,
            ).fetchone()  # fmt: skip
            if row is None:
                raise LeaseLost(run_id)
            if new_attempt:
                tx.execute(FORGET_FAILED_STEPS, run_id)
            return row, self._claim(tx, then_claim)

        row, taken = self._write(work)
        return Ended(run_from_row(row), _claimed(taken, then_claim))

    def cancel_run(self, run_id: str, *, now_ms: int) -> bool:
        def work(tx: _Executor) -> bool:
            row = tx.execute(CANCEL_IDLE_RUN, now_ms, run_id).fetchone()
            if row is not None:
                if row[0] is not None:
                    tx.execute(WAKE_BUFFERED, now_ms, row[0], now_ms)
                return True
            tx.execute(REQUEST_CANCEL, run_id)
            return tx.rowcount == 1

        return self._write(work)

    def release_leases(self, *, tokens: Sequence[str], now_ms: int) -> int:
        def work(tx: _Executor) -> int:
            released = 0
            for token in tokens:
                tx.execute(RELEASE_LEASE, now_ms, token)
                released += tx.rowcount
            if released:
                self._notify(tx, "runs")
            return released

        return self._write(work)

    def next_due_ms(self, *, pools: Sequence[str], workflows: Sequence[str]) -> int | None:
        if not pools or not workflows:
            return None
        statement = f"{NEXT_DUE} {self._in_filters(pools, workflows)}"
        with self._tx(write=False) as tx:
            row = tx.execute(statement, *pools, *workflows).fetchone()
        return None if row is None or row[0] is None else int(row[0])

    def create_api_key(self, *, key_id: str, name: str, secret_hash: str, now_ms: int) -> bool:
        def work(tx: _Executor) -> bool:
            tx.execute(INSERT_API_KEY, key_id, name, secret_hash, now_ms)
            return tx.rowcount == 1

        return self._write(work)

    def api_key_hash(self, key_id: str) -> str | None:
        with self._tx(write=False) as tx:
            row = tx.execute(SELECT_API_KEY_HASH, key_id).fetchone()
        return None if row is None else str(row[0])

    def list_api_keys(self) -> list[ApiKeyInfo]:
        with self._tx(write=False) as tx:
            rows = tx.execute(SELECT_API_KEYS).fetchall()
        return [
            ApiKeyInfo(row[0], row[1], from_ms(row[2]), None if row[3] is None else from_ms(row[3]))
            for row in rows
        ]

    def revoke_api_key(self, name_or_id: str, *, now_ms: int) -> bool:
        def work(tx: _Executor) -> bool:
            tx.execute(REVOKE_API_KEY, now_ms, name_or_id, name_or_id)
            return tx.rowcount > 0

        return self._write(work)


def _can_claim(request: ClaimRequest) -> bool:
    return request.limit > 0 and bool(request.limits) and bool(request.pools)


#: a run taken in a transaction: its candidate row, its new lease token, its checkpoints
_Taken = tuple[Sequence[Any], str, list[Any]]


def _take(tx: _Executor, row: Sequence[Any], request: ClaimRequest) -> _Taken:
    """Take one candidate row under a new lease, and read its checkpoints."""
    worker, now_ms = request.worker, request.now_ms
    # A lease token only has to differ from every other lease's (it fences, it is no
    # secret): the worker id and 48 random bits, drawn without a system call.
    token = f"{worker}.{random.getrandbits(48):012x}"
    tx.execute(CLAIM_RUN, worker, token, now_ms + request.lease_ms, now_ms, now_ms, row[0])
    started = row[13] is not None or row[16] is not None
    # A run that never started can have no checkpoints yet.
    steps = tx.execute(SELECT_STEPS, row[0]).fetchall() if started else []
    return row, token, steps


def _claimed(taken: list[_Taken], request: ClaimRequest | None) -> list[ClaimedRun]:
    """The runs ``_take`` took, as their executors get them."""
    if not taken:
        return []
    assert request is not None
    now_ms = request.now_ms
    claimed = []
    for row, token, steps in taken:
        # As CLAIM_RUN leaves it: running, started now unless it had started before.
        claimed_row = (*row[:3], RunStatus.RUNNING, *row[4:13], row[13] or now_ms, *row[14:16])
        claimed.append(
            ClaimedRun(
                info=run_from_row(claimed_row),
                lease_token=token,
                steps=[step_from_row(step) for step in steps],
                attempt_started_ms=row[16] if row[16] is not None else now_ms,
                resumed=row[13] is not None,
                cancel_requested=bool(row[17]),
                retry_json=row[18],
            )
        )
    return claimed


class _Executor:
    """A cursor that translates placeholders and takes parameters positionally."""

    __slots__ = ("_cursor", "_sql")

    def __init__(self, cursor: Cursor, translate: Any) -> None:
        self._cursor = cursor
        self._sql = translate

    def execute(self, statement: str, *params: Any) -> Cursor:
        self._cursor.execute(self._sql(statement), params)
        return self._cursor

    def executemany(self, statement: str, rows: Sequence[Sequence[Any]]) -> None:
        self._cursor.executemany(self._sql(statement), rows)

    @property
    def rowcount(self) -> int:
        return self._cursor.rowcount
