"""The schedule half of the store contract in SQL (mixed into ``SqlStore``).

Firing is one transaction per batch of due schedules: claim the rows, read their
unfinished runs, ask the pure planner, insert runs with ``ON CONFLICT (id) DO NOTHING``,
append history, advance ``next_fire_at``. The unique run id of an occurrence, not the
lock, is what makes a second start of the same occurrence impossible.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Sequence
from datetime import timedelta
from typing import Any, TypeVar

from .._clock import from_ms
from .._ids import from_json
from .._models import Decision, HistoryEntry, Overlap, RunStatus, ScheduleInfo, ScheduleState
from .._planning import Plan
from .contract import DueSchedule, FireResult, NewRun, Registration, ScheduleRecord

__all__ = ["ScheduleSql"]

T = TypeVar("T")

_DEFINITION_COLUMNS = (
    "key, workflow, version, input, cron, every_ms, timezone, overlap, catchup, catchup_window_ms, "
    "jitter_ms, pool, priority, retry, start_at, end_at, definition"
)
_STATE_COLUMNS = "revision, anchor_at, next_fire_at, buffered_for, paused_at, resumed_at"
_INFO_COLUMNS = (
    "s.key, s.workflow, s.input, s.cron, s.every_ms, s.timezone, s.overlap, s.catchup, "
    "s.jitter_ms, s.pool, s.priority, s.state, s.revision, s.next_fire_at, s.last_fire_at, "
    "s.last_run_id, r.status, s.created_at, s.updated_at"
)

# A schedule with its last run's status.
SELECT_INFO = f"""
SELECT {_INFO_COLUMNS} FROM tickwork_schedules s
LEFT JOIN tickwork_runs r ON r.id = s.last_run_id
"""
SELECT_DEFINITION = (
    f"SELECT {_DEFINITION_COLUMNS}, {_STATE_COLUMNS}, state, due_at FROM tickwork_schedules "
    "WHERE key = ?"
)
# Register a new schedule, unless another transaction registered the key meanwhile.
INSERT_SCHEDULE = f"""
INSERT INTO tickwork_schedules ({_DEFINITION_COLUMNS}, state, revision, anchor_at,
    next_fire_at, due_at, created_at, updated_at)
VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 1, ?, ?, ?, ?, ?)
ON CONFLICT (key) DO NOTHING
"""
# Update a definition in place; the caller decides next_fire_at and due_at.
UPDATE_DEFINITION = """
UPDATE tickwork_schedules SET workflow = ?, version = ?, input = ?, cron = ?, every_ms = ?,
    timezone = ?, overlap = ?, catchup = ?, catchup_window_ms = ?, jitter_ms = ?, pool = ?,
    priority = ?, retry = ?, start_at = ?, end_at = ?, definition = ?, revision = revision + 1,
    anchor_at = ?, next_fire_at = ?, due_at = ?, updated_at = ?
WHERE key = ?
"""
# Change the state; due_at follows it (NULL while paused or inactive).
SET_STATE = """
UPDATE tickwork_schedules SET state = ?, due_at = ?, next_fire_at = ?, paused_at = ?,
    resumed_at = ?, buffered_for = ?, updated_at = ?
WHERE key = ?
"""
# Due schedules, earliest first; the partial index tickwork_schedules_due serves it.
SELECT_DUE = f"""
SELECT {_DEFINITION_COLUMNS}, {_STATE_COLUMNS} FROM tickwork_schedules
WHERE due_at <= ? AND state = 'active' {{filters}}
ORDER BY due_at
LIMIT ?
"""
# Unfinished runs of some schedules, oldest first.
SELECT_ACTIVE_RUNS = """
SELECT schedule_key, id FROM tickwork_runs
WHERE schedule_key IN ({marks}) AND status IN ('pending', 'sleeping', 'running')
ORDER BY created_at, id
"""
# Insert a new run unless one with the same id exists (start is idempotent by id; an
# occurrence's run id is unique). Shared with SqlStore.insert_run.
INSERT_RUN = """
INSERT INTO tickwork_runs (id, workflow, version, status, input, attempt, priority, pool,
    schedule_key, schedule_revision, scheduled_for, retry, created_at, available_at)
VALUES (?, ?, ?, 'pending', ?, 1, ?, ?, ?, ?, ?, ?, ?, ?)
ON CONFLICT (id) DO NOTHING
"""
INSERT_HISTORY = """
INSERT INTO tickwork_schedule_history (key, occurrence, last_occurrence, decision, reason,
    run_id, revision, count, decided_at)
VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
"""
# Advance a schedule after its occurrences were decided.
ADVANCE = """
UPDATE tickwork_schedules SET next_fire_at = ?, due_at = ?, buffered_for = ?, paused_at = NULL,
    resumed_at = NULL,
    last_fire_at = COALESCE(?, last_fire_at), last_run_id = COALESCE(?, last_run_id)
WHERE key = ?
"""
CANCEL_IDLE = """
UPDATE tickwork_runs SET status = 'cancelled', finished_at = ?, worker = NULL, lease_token = NULL
WHERE id = ? AND status IN ('pending', 'sleeping')
"""
FLAG_CANCEL = "UPDATE tickwork_runs SET cancel_requested = 1 WHERE id = ? AND status = 'running'"
SELECT_HISTORY = """
SELECT key, occurrence, decision, reason, run_id, revision, decided_at, count, last_occurrence
FROM tickwork_schedule_history WHERE key = ? ORDER BY id DESC LIMIT ?
"""
NEXT_SCHEDULE_DUE = """
SELECT MIN(due_at) FROM tickwork_schedules WHERE due_at IS NOT NULL AND state = 'active'
"""
# A schedule whose plan could not be made is looked at again later.
POSTPONE = "UPDATE tickwork_schedules SET due_at = ? WHERE key = ?"
RETRY_BROKEN_MS = 60_000
# A run of a schedule ended: a buffered occurrence may start now.
WAKE_BUFFERED = """
UPDATE tickwork_schedules SET due_at = ?
WHERE key = ? AND buffered_for IS NOT NULL AND state = 'active'
    AND (due_at IS NULL OR due_at > ?)
"""


def _record(row: Sequence[Any]) -> ScheduleRecord:
    return ScheduleRecord(
        key=row[0],
        workflow=row[1],
        version=row[2],
        input_json=row[3],
        cron=row[4],
        every_ms=row[5],
        timezone=row[6],
        overlap=row[7],
        catchup=row[8],
        catchup_window_ms=row[9],
        jitter_ms=row[10],
        pool=row[11],
        priority=row[12],
        retry_json=row[13],
        start_ms=row[14],
        end_ms=row[15],
        definition=row[16],
    )


# Positions in a SELECT_DEFINITION / SELECT_DUE row after the definition columns.
(_DEFINITION, _REVISION, _ANCHOR, _NEXT_FIRE, _BUFFERED, _PAUSED, _RESUMED, _STATE, _DUE) = range(
    16, 25
)


def _due(row: Sequence[Any], active: tuple[str, ...]) -> DueSchedule:
    return DueSchedule(
        _record(row),
        row[_REVISION],
        row[_ANCHOR],
        row[_NEXT_FIRE],
        row[_BUFFERED],
        row[_PAUSED],
        row[_RESUMED],
        active,
    )


def _info(row: Sequence[Any]) -> ScheduleInfo:
    def instant(ms: int | None) -> Any:
        return None if ms is None else from_ms(ms)

    return ScheduleInfo(
        key=row[0],
        workflow=row[1],
        input=from_json(row[2]),
        cron=row[3],
        every=None if row[4] is None else timedelta(milliseconds=row[4]),
        timezone=row[5],
        overlap=Overlap(row[6]),
        catchup="all" if row[7] is None else row[7],
        jitter=None if row[8] is None else timedelta(milliseconds=row[8]),
        pool=row[9],
        priority=row[10],
        state=ScheduleState(row[11]),
        revision=row[12],
        next_fire_at=instant(row[13]),
        last_fire_at=instant(row[14]),
        last_run_id=row[15],
        last_run_status=None if row[16] is None else RunStatus(row[16]),
        created_at=from_ms(row[17]),
        updated_at=from_ms(row[18]),
    )


class ScheduleSql:
    """Schedule methods of ``SqlStore``, over its ``_tx``, ``_write`` and ``lock_suffix``."""

    lock_suffix = ""

    def _tx(self, *, write: bool) -> contextlib.AbstractContextManager[Any]:
        raise NotImplementedError

    def _write(self, work: Callable[[Any], T]) -> T:
        raise NotImplementedError

    def _notify(self, tx: Any, what: str) -> None:
        raise NotImplementedError

    def upsert_schedule(
        self,
        record: ScheduleRecord,
        *,
        now_ms: int,
        grid: Callable[[DueSchedule | None], tuple[int, int | None]],
        on_conflict: str,
        paused: bool | None,
    ) -> Registration:
        definition = _definition_values(record)

        def work(tx: Any) -> Registration:
            row = tx.execute(SELECT_DEFINITION, record.key).fetchone()
            if row is None:
                anchor_ms, next_fire_ms = grid(None)
                state = ScheduleState.PAUSED if paused else ScheduleState.ACTIVE
                due = None if state is ScheduleState.PAUSED else next_fire_ms
                paused_at = now_ms if paused else None
                tx.execute(
                    INSERT_SCHEDULE,
                    *definition,
                    state.value,
                    anchor_ms,
                    next_fire_ms,
                    due,
                    now_ms,
                    now_ms,
                )
                if tx.rowcount == 1:
                    if paused_at is not None:
                        tx.execute(
                            "UPDATE tickwork_schedules SET paused_at = ? WHERE key = ?",
                            paused_at,
                            record.key,
                        )
                    self._notify(tx, "schedules")
                    return Registration("created", 1)
                # Another worker registered the key between our read and our insert
                # (PostgreSQL, READ COMMITTED: a fleet starting at once): the unique key
                # kept one row; treat ours as a registration of an existing key.
                row = tx.execute(SELECT_DEFINITION, record.key).fetchone()
            revision = row[_REVISION]
            if row[_DEFINITION] == record.definition:
                outcome = "unchanged"
            elif on_conflict == "error":
                return Registration("conflict", revision)
            elif on_conflict == "keep":
                outcome = "kept"
            else:
                anchor_ms, next_fire_ms = grid(_due(row, ()))
                due = None
                if ScheduleState(row[_STATE]) is ScheduleState.ACTIVE:
                    due = next_fire_ms
                    if row[_BUFFERED] is not None and row[_DUE] is not None:
                        # keep a wake-up already given to a buffered occurrence
                        due = row[_DUE] if due is None else min(due, row[_DUE])
                tx.execute(
                    UPDATE_DEFINITION,
                    *definition[1:],
                    anchor_ms,
                    next_fire_ms,
                    due,
                    now_ms,
                    record.key,
                )
                outcome, revision = "updated", revision + 1
            if paused is not None:
                row = tx.execute(SELECT_DEFINITION, record.key).fetchone()
                self._change_state(tx, row, "pause" if paused else "resume", now_ms, None)
            if outcome == "updated" or paused is not None:
                self._notify(tx, "schedules")
            return Registration(outcome, revision)

        return self._write(work)

    def get_schedule(self, key: str) -> ScheduleInfo | None:
        with self._tx(write=False) as tx:
            row = tx.execute(SELECT_INFO + " WHERE s.key = ?", key).fetchone()
        return None if row is None else _info(row)

    def list_schedules(
        self, *, workflow: str | None = None, state: str | None = None, limit: int | None = None
    ) -> list[ScheduleInfo]:
        clauses: list[str] = []
        params: list[object] = []
        for column, value in (("s.workflow", workflow), ("s.state", state)):
            if value is not None:
                clauses.append(f"{column} = ?")
                params.append(value)
        where = f" WHERE {' AND '.join(clauses)}" if clauses else ""
        with self._tx(write=False) as tx:
            page = "" if limit is None else " LIMIT ?"
            if limit is not None:
                params.append(limit)
            rows = tx.execute(f"{SELECT_INFO}{where} ORDER BY s.key{page}", *params)
            return [_info(row) for row in rows.fetchall()]

    def get_schedule_record(self, key: str) -> DueSchedule | None:
        with self._tx(write=False) as tx:
            row = tx.execute(SELECT_DEFINITION, key).fetchone()
        if row is None:
            return None
        return _due(row, ())

    def delete_schedule(self, key: str) -> bool:
        def work(tx: Any) -> bool:
            tx.execute("DELETE FROM tickwork_schedule_history WHERE key = ?", key)
            tx.execute("DELETE FROM tickwork_schedules WHERE key = ?", key)
            return bool(tx.rowcount == 1)

        return self._write(work)

    def set_schedule_state(
        self, key: str, *, action: str, now_ms: int, next_fire_ms: int | None = None
    ) -> bool:
        def work(tx: Any) -> bool:
            row = tx.execute(SELECT_DEFINITION, key).fetchone()
            if row is None:
                return False
            self._change_state(tx, row, action, now_ms, next_fire_ms)
            self._notify(tx, "schedules")
            return True

        return self._write(work)

    def _change_state(
        self, tx: Any, row: Sequence[Any], action: str, now_ms: int, next_fire_ms: int | None
    ) -> None:
        key, state = row[0], ScheduleState(row[_STATE])
        next_fire, buffered = row[_NEXT_FIRE], row[_BUFFERED]
        paused_at, resumed_at = row[_PAUSED], row[_RESUMED]
        if action == "pause" and state is ScheduleState.ACTIVE:
            # A pause that follows an undecided one keeps the earlier start.
            state, resumed_at = ScheduleState.PAUSED, None
            paused_at = now_ms if paused_at is None else paused_at
        elif action == "resume" and state is ScheduleState.PAUSED:
            state, resumed_at = ScheduleState.ACTIVE, now_ms
        elif action == "deactivate" and state is not ScheduleState.INACTIVE:
            state, buffered, paused_at, resumed_at = ScheduleState.INACTIVE, None, None, None
        elif action == "activate" and state is not ScheduleState.ACTIVE:
            state, next_fire, buffered = ScheduleState.ACTIVE, next_fire_ms, None
            paused_at = resumed_at = None
        else:
            return
        due = next_fire if state is ScheduleState.ACTIVE else None
        if state is ScheduleState.ACTIVE and buffered is not None:
            due = now_ms if next_fire is None else min(next_fire, now_ms)
        tx.execute(
            SET_STATE, state.value, due, next_fire, paused_at, resumed_at, buffered, now_ms, key
        )

    def fire_due(
        self,
        *,
        now_ms: int,
        pools: Sequence[str],
        workflows: Sequence[str],
        limit: int,
        decide: Callable[[DueSchedule, int], Plan],
    ) -> FireResult:
        if not pools or not workflows or limit <= 0:
            return FireResult(0, [], [])
        pool_marks = ", ".join("?" * len(pools))
        workflow_marks = ", ".join("?" * len(workflows))
        filters = f"AND pool IN ({pool_marks}) AND workflow IN ({workflow_marks})"

        def work(tx: Any) -> FireResult:
            rows = tx.execute(
                SELECT_DUE.format(filters=filters) + self.lock_suffix,
                now_ms,
                *pools,
                *workflows,
                limit,
            ).fetchall()
            if not rows:
                return FireResult(0, [], [])
            active = _active_runs(tx, [row[0] for row in rows])
            errors: list[tuple[str, Exception]] = []
            plans = []
            for row in rows:
                due = _due(row, tuple(active.get(row[0], ())))
                try:
                    plans.append((due, decide(due, now_ms)))  # pure: nothing written
                except Exception as exc:
                    # One broken schedule must not stop the others: look again later.
                    errors.append((row[0], exc))
                    tx.execute(POSTPONE, now_ms + RETRY_BROKEN_MS, row[0])
            started = _apply(tx, plans, now_ms)
            if started:
                self._notify(tx, "runs")
            return FireResult(len(rows), started, errors)

        return self._write(work)

    def trigger_schedule(
        self, key: str, *, now_ms: int, occurrence_ms: int, run: NewRun
    ) -> str | None:
        def work(tx: Any) -> str | None:
            row = tx.execute(SELECT_DEFINITION, key).fetchone()
            if row is None:
                return None
            inserted = insert_run_row(tx, run)
            if inserted:
                self._notify(tx, "runs")
            decision = Decision.TRIGGERED if inserted else Decision.ALREADY_STARTED
            reason = "run now" if inserted else "run now: the occurrence already has this run"
            tx.execute(
                INSERT_HISTORY,
                key,
                occurrence_ms,
                None,
                decision.value,
                reason,
                run.id,
                row[_REVISION],
                1,
                now_ms,
            )
            tx.execute(
                "UPDATE tickwork_schedules SET last_fire_at = ?, last_run_id = ? WHERE key = ?",
                occurrence_ms,
                run.id,
                key,
            )
            return run.id

        return self._write(work)

    def schedule_history(self, key: str, *, limit: int = 100) -> list[HistoryEntry]:
        with self._tx(write=False) as tx:
            rows = tx.execute(SELECT_HISTORY, key, limit).fetchall()
        return [
            HistoryEntry(
                key=row[0],
                occurrence=from_ms(row[1]),
                decision=Decision(row[2]),
                reason=row[3],
                run_id=row[4],
                revision=row[5],
                decided_at=from_ms(row[6]),
                count=row[7],
                last_occurrence=None if row[8] is None else from_ms(row[8]),
            )
            for row in rows
        ]

    def next_schedule_due_ms(self, *, pools: Sequence[str], workflows: Sequence[str]) -> int | None:
        if not pools or not workflows:
            return None
        pool_marks = ", ".join("?" * len(pools))
        workflow_marks = ", ".join("?" * len(workflows))
        statement = (
            f"{NEXT_SCHEDULE_DUE} AND pool IN ({pool_marks}) AND workflow IN ({workflow_marks})"
        )
        with self._tx(write=False) as tx:
            row = tx.execute(statement, *pools, *workflows).fetchone()
        return None if row is None or row[0] is None else int(row[0])


def _definition_values(record: ScheduleRecord) -> tuple[Any, ...]:
    return (
        record.key,
        record.workflow,
        record.version,
        record.input_json,
        record.cron,
        record.every_ms,
        record.timezone,
        record.overlap,
        record.catchup,
        record.catchup_window_ms,
        record.jitter_ms,
        record.pool,
        record.priority,
        record.retry_json,
        record.start_ms,
        record.end_ms,
        record.definition,
    )


def _active_runs(tx: Any, keys: list[str]) -> dict[str, list[str]]:
    found: dict[str, list[str]] = {}
    for chunk_start in range(0, len(keys), 500):
        chunk = keys[chunk_start : chunk_start + 500]
        statement = SELECT_ACTIVE_RUNS.format(marks=", ".join("?" * len(chunk)))
        for key, run_id in tx.execute(statement, *chunk).fetchall():
            found.setdefault(key, []).append(run_id)
    return found


def insert_run_row(tx: Any, run: NewRun) -> bool:
    """Insert ``run`` in the transaction ``tx``; False if its id exists already."""
    tx.execute(
        INSERT_RUN,
        run.id,
        run.workflow,
        run.version,
        run.input_json,
        run.priority,
        run.pool,
        run.schedule_key,
        run.schedule_revision,
        run.scheduled_for_ms,
        run.retry_json,
        run.created_ms,
        run.available_ms,
    )
    return bool(tx.rowcount == 1)


def _apply(tx: Any, plans: list[tuple[DueSchedule, Plan]], now_ms: int) -> list[str]:
    """Carry out the plans of one firing transaction; return the ids of the runs inserted.

    Statements go in bulk (``executemany``): one firing pass may decide thousands of
    schedules. Planned runs that already exist (a trigger got there first) are found
    first, so their decisions are recorded as "already_started"; ``ON CONFLICT DO
    NOTHING`` still guards the insert itself.
    """
    for _, plan in plans:
        for run_id in plan.cancel_run_ids:
            tx.execute(CANCEL_IDLE, now_ms, run_id)
            if tx.rowcount == 0:
                tx.execute(FLAG_CANCEL, run_id)
    planned = [run.run_id for _, plan in plans for run in plan.starts]
    existing = _existing_runs(tx, planned)
    runs, history, advances = [], [], []
    for due, plan in plans:
        record = due.record
        for run in plan.starts:
            runs.append((
                run.run_id, record.workflow, record.version, record.input_json,
                record.priority, record.pool, record.key, due.revision, run.occurrence_ms,
                record.retry_json, now_ms, run.available_ms,
            ))  # fmt: skip
        for decision in plan.decisions:
            kind, reason = decision.decision, decision.reason
            if decision.run_id in existing and kind is Decision.STARTED:
                kind, reason = Decision.ALREADY_STARTED, "the occurrence already has this run"
            history.append((
                record.key, decision.occurrence_ms, decision.last_occurrence_ms, kind.value,
                reason, decision.run_id, due.revision, decision.count, now_ms,
            ))  # fmt: skip
        last = plan.starts[-1] if plan.starts else None
        # A buffered occurrence waits for the run in flight; its end pulls due_at forward.
        advances.append((
            plan.next_fire_ms, plan.next_fire_ms, plan.buffered_ms,
            None if last is None else last.occurrence_ms,
            None if last is None else last.run_id, record.key,
        ))  # fmt: skip
    if runs:
        tx.executemany(INSERT_RUN, runs)
    if history:
        tx.executemany(INSERT_HISTORY, history)
    tx.executemany(ADVANCE, advances)
    return [run_id for run_id in planned if run_id not in existing]


def _existing_runs(tx: Any, run_ids: list[str]) -> set[str]:
    found: set[str] = set()
    for chunk_start in range(0, len(run_ids), 500):
        chunk = run_ids[chunk_start : chunk_start + 500]
        marks = ", ".join("?" * len(chunk))
        rows = tx.execute(f"SELECT id FROM tickwork_runs WHERE id IN ({marks})", *chunk)
        found.update(row[0] for row in rows.fetchall())
    return found
