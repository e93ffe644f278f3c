"""The schedule half of the store contract in SQL: register, change state, fire, trigger.

Every rule lives in pure code (``_policy`` for registration and state, ``_planning`` for
firing); here a method reads rows, calls a rule and writes what it returns, in one
transaction. Firing is one transaction per batch of due schedules: claim the rows, read
their unfinished runs, ask the planner, insert runs with ``ON CONFLICT (id) DO NOTHING``,
append history, advance ``next_fire_at``. The unique run id of an occurrence, not the lock,
is what makes a second start of the same occurrence impossible.

Registration in bulk (a worker's declared schedules at start-up) is the same rule over a
batch in a few statements: the batch's stored rows in one read, the new ones in one
insert that returns the keys it took, the changed ones in one ``executemany``.

``overlap="buffer_all"`` keeps its waiting occurrences in ``tickwork_schedule_queue``
(migration 0009), their count in the schedule's ``waiting`` and the oldest in
``buffered_for``; firing reads the oldest two only of a schedule where some wait. A
backfill is decided by the planner too, a bounded batch per transaction.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace

from .. import _policy
from .._business_days import BusinessDays
from .._clock import capped, from_ms
from .._ids import occurrence_run_id
from .._models import (
    Decision,
    HistoryEntry,
    Overlap,
    RunStatus,
    ScheduleAction,
    ScheduleInfo,
    Triggered,
)
from .._planning import Plan, PlannedDecision, PlannedRun, fires_ahead, settle
from .._records import DueSchedule, FiringState, NewRun, ScheduleRecord, StoredSchedule
from .counters import count_firings, observe_lateness
from .run_inserts import INSERT_RUN, QUEUE_INSERTED, insert_run_row
from .run_rows import NEW_RUN
from .schedule_contract import BackfillDecide, FireResult, Registration
from .schedule_rows import (
    CHANGEABLE,
    FIRING,
    HISTORY_COLUMNS,
    INFO_COLUMNS,
    SELECT_STORED,
    STORED,
    STORED_COLUMNS,
    due_from_row,
    history_from_row,
    info_from_row,
    key_from_row,
    stored_from_row,
    waiting_from_row,
)
from .sql_calendars import hold_calendars
from .sql_runs import REQUEST_CANCEL, cancel_idle_run
from .state_changes import change_state, mark_state_changed
from .transaction import INDEXED, SOUGHT, Database, Transaction, in_filters, marks

__all__ = [
    "FIRST_DUE_ROWS",
    "FIRST_SCHEDULES_DUE",
    "NEXT_SCHEDULE_DUE",
    "SchedulesSql",
    "first_due",
]

#: IN lists are cut into chunks of this many values (SQLite's parameter limit is 999 on
#: old builds)
_CHUNK = 500

# Schedules with their last run's status; {where} is " WHERE ..." or nothing, {page}
# " LIMIT ?" or nothing.
LIST_INFO = f"""
SELECT {", ".join(INFO_COLUMNS)} FROM tickwork_schedules s
LEFT JOIN tickwork_runs r ON r.id = s.last_run_id{{where}}
ORDER BY s.key{{page}}
"""
# The first keys in key order (the primary key's index alone: no row is read).
SELECT_KEYS = "SELECT key FROM tickwork_schedules ORDER BY key LIMIT ?"
# One schedule with its last run's status.
GET_INFO = LIST_INFO.format(where=" WHERE s.key = ?", page="")
# Some schedules' rows, by key (the order their locks are taken in); {keys} is the key's
# condition (Database.select_among).
SELECT_STORED_MANY = f"""
SELECT {", ".join(STORED_COLUMNS)} FROM tickwork_schedules WHERE key {{keys}}
ORDER BY key
"""
# One schedule's revision (a trigger records it).
SELECT_REVISION = "SELECT revision FROM tickwork_schedules WHERE key = ?"
# Register a new schedule, unless another transaction registered the key meanwhile.
_INSERTED = (*STORED.names, "created_at", "updated_at")
INSERT_SCHEDULE = f"""
INSERT INTO tickwork_schedules ({", ".join(_INSERTED)})
VALUES ({marks(len(_INSERTED))})
ON CONFLICT (key) DO NOTHING
"""
# Register new schedules, unless another transaction registered their keys meanwhile (the
# keys returned are those inserted). {rows} is the rows' source (Database.insert_many).
INSERT_SCHEDULES = f"""
INSERT INTO tickwork_schedules ({", ".join(_INSERTED)})
{{rows}}
ON CONFLICT (key) DO NOTHING RETURNING key
"""
# Replace a definition in place, with its anchor and firing state (from _policy).
UPDATE_SCHEDULE = f"""
UPDATE tickwork_schedules SET {CHANGEABLE.assign()},
    revision = revision + 1, anchor_at = ?, {FIRING.assign()}, updated_at = ?
WHERE key = ?
"""
# Change the firing state (from _policy); due_at follows the state.
SET_STATE = f"""
UPDATE tickwork_schedules SET {FIRING.assign()}, updated_at = ?
WHERE key = ?
"""
# Due schedules, earliest first; the partial index tickwork_schedules_due serves it.
# {filters} becomes "AND pool IN (...) AND workflow IN (...)" with placeholders.
SELECT_DUE = f"""
SELECT {", ".join(STORED_COLUMNS)} FROM tickwork_schedules
WHERE due_at <= ? AND state = 'active' {{filters}}
ORDER BY due_at
LIMIT ?
"""
#: the policies that are decided before their occurrence (``_planning.fires_ahead``), as SQL
_FIRES_AHEAD = " OR ".join(f"overlap = '{o.value}'" for o in Overlap if fires_ahead(o))
# The same with fire_ahead: the first ? is now plus fire_ahead, the second now.
SELECT_DUE_AHEAD = SELECT_DUE.replace(
    "{filters}", f"AND (due_at <= ? OR {_FIRES_AHEAD}) {{filters}}"
)
# Unfinished runs of some schedules, oldest first; {marks} is one placeholder per key.
# tickwork_queue_schedule serves it.
SELECT_ACTIVE_RUNS = """
SELECT schedule_key, id FROM tickwork_queue
WHERE schedule_key IN ({marks})
ORDER BY created_at, id
"""
# Which of some run ids exist; {marks} is one placeholder per id.
SELECT_EXISTING_RUNS = "SELECT id FROM tickwork_runs WHERE id IN ({marks})"
# One decision about an occurrence (or a span of them).
INSERT_HISTORY = """
INSERT INTO tickwork_schedule_history (key, occurrence, last_occurrence, decision, reason,
    run_id, revision, count, decided_at)
VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
"""
# The latest occurrence that got a run (migration 0014): the later of the stored one and
# the parameter (given twice; NULL: no run started).
LAST_OCCURRENCE = """last_occurrence_at = CASE
        WHEN COALESCE(?, -1) > COALESCE(last_occurrence_at, -1) THEN ? ELSE last_occurrence_at
    END"""
# Advance a schedule after its occurrences were decided: an active schedule is due at its
# next occurrence, or earlier when its calendar moves a later one before it (a buffered
# one waits for the run in flight, whose end pulls due_at).
ADVANCE = f"""
UPDATE tickwork_schedules SET next_fire_at = ?, due_at = ?, buffered_for = ?, waiting = ?,
    paused_at = NULL, resumed_at = NULL,
    last_fire_at = COALESCE(?, last_fire_at), last_run_id = COALESCE(?, last_run_id),
    {LAST_OCCURRENCE}, runs_counted = runs_counted + ?
WHERE key = ?
"""
# The oldest two occurrences waiting in a schedule's buffer_all queue (its primary key).
SELECT_QUEUE_HEAD = """
SELECT occurrence FROM tickwork_schedule_queue WHERE key = ? ORDER BY occurrence LIMIT 2
"""
# Which occurrences of a span wait in a schedule's queue (a backfill's batch).
SELECT_QUEUED_BETWEEN = """
SELECT occurrence FROM tickwork_schedule_queue WHERE key = ? AND occurrence >= ?
    AND occurrence <= ?
"""
# An occurrence joins the queue (once: a backfill may have queued it already).
ENQUEUE = """
INSERT INTO tickwork_schedule_queue (key, occurrence) VALUES (?, ?)
ON CONFLICT (key, occurrence) DO NOTHING
"""
# An occurrence leaves the queue: its run started.
DEQUEUE = "DELETE FROM tickwork_schedule_queue WHERE key = ? AND occurrence = ?"
# Forget a schedule's queue (deactivated, activated afresh, or deleted).
CLEAR_QUEUE = "DELETE FROM tickwork_schedule_queue WHERE key = ?"
FORGET_WAITING = "UPDATE tickwork_schedules SET waiting = 0 WHERE key = ?"
# After a backfill's batch: what waits, its last run and the runs max_runs counts (its
# next occurrence stays).
RECORD_BACKFILL = f"""
UPDATE tickwork_schedules SET buffered_for = ?, waiting = ?,
    last_fire_at = COALESCE(?, last_fire_at), last_run_id = COALESCE(?, last_run_id),
    {LAST_OCCURRENCE}, runs_counted = runs_counted + ?
WHERE key = ?
"""
# A schedule whose plan could not be made is looked at again later.
POSTPONE = "UPDATE tickwork_schedules SET due_at = ? WHERE key = ?"
# A run started by a trigger is the schedule's last (last_fire_at: when it was created);
# its occurrence too, unless it is a new_run=True run (the parameters are then NULL).
RECORD_TRIGGER = f"""
UPDATE tickwork_schedules SET last_fire_at = ?, last_run_id = ?, {LAST_OCCURRENCE}
WHERE key = ?
"""
# The status of the run an occurrence already has.
SELECT_RUN_STATUS = "SELECT status FROM tickwork_runs WHERE id = ?"
# A schedule's decisions, newest first.
SELECT_HISTORY = f"""
SELECT {", ".join(HISTORY_COLUMNS)} FROM tickwork_schedule_history
WHERE key = ? ORDER BY id DESC LIMIT ?
"""
# Forget a schedule's history (before the schedule itself).
DELETE_HISTORY = "DELETE FROM tickwork_schedule_history WHERE key = ?"
# Forget a schedule (its runs stay).
DELETE_SCHEDULE = "DELETE FROM tickwork_schedules WHERE key = ?"
# The earliest due_at among active schedules; {filters} as in SELECT_DUE.
NEXT_SCHEDULE_DUE = """
SELECT MIN(due_at) FROM tickwork_schedules
WHERE due_at IS NOT NULL AND state = 'active' {filters}
"""
# The same with fire_ahead: the first due schedules in order, with their policy (those
# that fire ahead are due fire_ahead early); {filters} as in SELECT_DUE.
FIRST_SCHEDULES_DUE = """
SELECT due_at, overlap FROM tickwork_schedules
WHERE due_at IS NOT NULL AND state = 'active' {filters}
ORDER BY due_at
LIMIT ?
"""
#: due schedules FIRST_SCHEDULES_DUE reads at most: an allow schedule behind more than
#: this many others due within fire_ahead is fired when the first of them is
FIRST_DUE_ROWS = 100


class SchedulesSql:
    """``ScheduleStore`` over a dialect's ``Database``."""

    __slots__ = ("_db",)

    def __init__(self, db: Database) -> None:
        self._db = db

    def _stored(self, tx: Transaction, key: str) -> StoredSchedule | None:
        """The schedule's row, locked against other writers until the commit."""
        row = tx.execute(SELECT_STORED + self._db.lock_row, key).fetchone()
        return None if row is None else stored_from_row(row)

    def upsert_schedule(
        self, record: ScheduleRecord, *, now_ms: int, on_conflict: str, paused: bool | None
    ) -> Registration:
        def work(tx: Transaction) -> Registration:
            if record.calendar is not None:
                hold_calendars(tx, self._db.lock_shared, [record.calendar])
            return self._upsert(tx, record, now_ms, on_conflict, paused)

        return self._db.write(work)

    def upsert_schedules(
        self, records: Sequence[tuple[ScheduleRecord, str, bool | None]], *, now_ms: int
    ) -> list[Registration]:
        """In bulk, whatever the count: one read of the stored rows, the pure rule for each,
        new keys in one insert, changed rows in one ``executemany`` per statement (one
        statement on PostgreSQL: ``pg_bulk.py``). Rows are locked and inserted in the order
        of their keys, so that two workers registering the same keys at once wait for each
        other in one order."""

        def work(tx: Transaction) -> list[Registration]:
            hold_calendars(tx, self._db.lock_shared, [record.calendar for record, _, _ in records])
            keys = [record.key for record, _, _ in records]
            if len(set(keys)) != len(keys):  # later ones must see earlier ones: in order
                return [self._upsert(tx, r, now_ms, c, p) for r, c, p in records]
            stored = self._stored_many(tx, keys)
            plans = {request[0].key: _plan(request, stored, now_ms) for request in records}
            new = [(record, plans[record.key]) for record in _records(records, stored, False)]
            inserted = self._insert_new(tx, new, now_ms)
            lost = {record.key for record, _ in new} - inserted
            if lost:
                # Another worker registered these keys between our read and our insert
                # (PostgreSQL, READ COMMITTED: a fleet starting at once): the unique key
                # kept its row; ours are registrations of existing keys, as in _upsert.
                stored.update(self._stored_many(tx, list(lost)))
                again = [request for request in records if request[0].key in lost]
                plans.update((request[0].key, _plan(request, stored, now_ms)) for request in again)
            changed = [
                (stored[record.key], record, plans[record.key])
                for record in _records(records, stored, True)
                if plans[record.key].row is not None
            ]
            _write_registered(tx, changed, now_ms)
            if inserted or changed:
                self._db.notify(tx, "schedules")
            return [Registration(plans[key].outcome, plans[key].revision) for key in keys]

        return self._db.write(work)

    def _stored_many(self, tx: Transaction, keys: list[str]) -> dict[str, StoredSchedule]:
        """The rows of those schedules that exist, by key, locked like ``_stored``'s."""
        statement = SELECT_STORED_MANY + self._db.lock_row
        rows = self._db.select_among(tx, statement, sorted(keys))
        return {stored.record.key: stored for stored in map(stored_from_row, rows)}

    def _insert_new(
        self,
        tx: Transaction,
        new: list[tuple[ScheduleRecord, _policy.RegistrationPlan]],
        now_ms: int,
    ) -> set[str]:
        """Insert new schedules (their plans' rows) in the order of their keys; the keys
        inserted (not those another transaction registered first)."""
        rows: list[tuple[object, ...]] = []
        for _, plan in sorted(new, key=lambda pair: pair[0].key):
            row = plan.row
            assert row is not None  # a new key's plan is its whole row
            rows.append((*STORED.values(row), now_ms, now_ms))
        if not rows:
            return set()
        found = self._db.insert_many(tx, INSERT_SCHEDULES, "tickwork_schedules", _INSERTED, rows)
        return {key for (key,) in found}

    def _upsert(
        self,
        tx: Transaction,
        record: ScheduleRecord,
        now_ms: int,
        on_conflict: str,
        paused: bool | None,
    ) -> Registration:
        """Register ``record`` in the transaction ``tx`` (``upsert_schedule``'s rules)."""
        stored = self._stored(tx, record.key)
        if stored is None:
            new = _policy.registration(
                record, None, now_ms=now_ms, on_conflict=on_conflict, paused=paused
            )
            assert new.row is not None
            values = (*STORED.values(new.row), now_ms, now_ms)
            if self._db.execute_notifying(tx, "schedules", INSERT_SCHEDULE, *values) == 1:
                return Registration(new.outcome, new.revision)
            # Another worker registered the key between our read and our insert
            # (PostgreSQL, READ COMMITTED: a fleet starting at once): the unique key
            # kept one row; treat ours as a registration of an existing key.
            stored = self._stored(tx, record.key)
            assert stored is not None
        plan = _policy.registration(
            record, stored, now_ms=now_ms, on_conflict=on_conflict, paused=paused
        )
        row = plan.row
        if row is not None:
            if plan.outcome == "updated":
                tx.execute(UPDATE_SCHEDULE, *_updated_values(row, now_ms))
            else:
                _set_state(tx, record.key, row.firing, now_ms)
            if row.firing.state is not stored.firing.state:  # paused= changed it
                mark_state_changed(tx, record.key, row.firing.state, plan.revision, now_ms)
            _deactivate_if_spent(tx, row, now_ms)  # max_runs lowered to what it started
            self._db.notify(tx, "schedules")
        return Registration(plan.outcome, plan.revision)

    def get_schedule(self, key: str) -> ScheduleInfo | None:
        with self._db.read() as tx:
            row = tx.execute(GET_INFO, key).fetchone()
        return None if row is None else info_from_row(row)

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
        page = "" if limit is None else " LIMIT ?"
        if limit is not None:
            params.append(limit)
        with self._db.read() as tx:
            rows = tx.execute(LIST_INFO.format(where=where, page=page), *params).fetchall()
        return [info_from_row(row) for row in rows]

    def schedule_keys(self, limit: int) -> list[str]:
        with self._db.read() as tx:
            return [row[0] for row in tx.execute(SELECT_KEYS, limit).fetchall()]

    def get_schedule_record(self, key: str) -> DueSchedule | None:
        with self._db.read() as tx:
            row = tx.execute(SELECT_STORED, key).fetchone()
        return None if row is None else due_from_row(row, ())

    def delete_schedule(self, key: str) -> bool:
        def work(tx: Transaction) -> bool:
            tx.execute(DELETE_HISTORY, key)
            tx.execute(CLEAR_QUEUE, key)
            tx.execute(DELETE_SCHEDULE, key)
            return tx.rowcount == 1

        return self._db.write(work)

    def set_schedule_state(
        self, key: str, *, action: ScheduleAction, now_ms: int, note: str | None = None
    ) -> bool:
        changed = self.change_schedule_state(key, action=action, now_ms=now_ms, note=note)
        return changed is not None

    def change_schedule_state(
        self,
        key: str,
        *,
        action: ScheduleAction,
        now_ms: int,
        note: str | None = None,
        calendars: Mapping[str, BusinessDays] | None = None,
    ) -> bool | None:
        def work(tx: Transaction) -> bool | None:
            stored = self._stored(tx, key)
            if stored is None:
                return None
            days = (calendars or {}).get(stored.record.calendar or "")
            if days is not None:  # a row read back knows its calendar's name only
                stored = replace(stored, record=replace(stored.record, business_days=days))
            changed = _policy.transition(stored, action, now_ms)
            if changed is None:  # already so: nothing is written, the note kept
                return False
            decision = _policy.STATE_DECISIONS[action]  # with its note: state_changes.py
            change_state(tx, stored, changed, now_ms=now_ms, note=note, decision=decision)
            if stored.firing.buffered_ms is not None and changed.buffered_ms is None:
                _forget_queue(tx, key)  # deactivated or activated: nothing waits
            self._db.notify(tx, "schedules")
            return True

        return self._db.write(work)

    def fire_due(
        self,
        *,
        now_ms: int,
        pools: Sequence[str],
        workflows: Sequence[str],
        limit: int,
        decide: Callable[[DueSchedule, int], Plan],
        ahead_ms: int = 0,
    ) -> FireResult:
        if not pools or not workflows or limit <= 0:
            return FireResult(0, [], [])
        filters = in_filters(pools, workflows)
        select, bounds = SELECT_DUE, [now_ms]
        if ahead_ms:
            select, bounds = SELECT_DUE_AHEAD, [now_ms + ahead_ms, now_ms]
        statement = select.format(filters=filters) + self._db.lock_suffix

        def work(tx: Transaction) -> FireResult:
            # in tickwork_schedules_due's order (transaction.UNSORTED says why); the pass's
            # other reads and writes seek by key (SOUGHT): one setting for all (INDEXED)
            due_rows = tx.execute_under(INDEXED, statement, *bounds, *pools, *workflows, limit)
            rows = due_rows.fetchall()
            if not rows:
                return FireResult(0, [], [])
            schedules = [key_from_row(row) for row in rows]
            active = _active_runs(tx, schedules)
            errors: list[tuple[str, Exception]] = []
            plans = []
            for key, row in zip(schedules, rows, strict=True):
                due = due_from_row(row, tuple(active.get(key, ())), _queue_head(tx, key, row))
                try:
                    plans.append((due, decide(due, now_ms)))  # pure: nothing written
                except Exception as exc:
                    # One broken schedule must not stop the others: look again later.
                    errors.append((key, exc))
                    tx.execute(POSTPONE, capped(now_ms + _policy.RETRY_BROKEN_MS), key)
            started, decisions = _apply(tx, self._db, plans, now_ms)
            if started:
                self._db.notify(tx, "runs")
            return FireResult(len(rows), started, errors, decisions)

        return self._db.write(work)

    def trigger_schedule(
        self, key: str, *, now_ms: int, occurrence_ms: int, run: NewRun, reason: str
    ) -> Triggered | None:
        def work(tx: Transaction) -> Triggered | None:
            row = tx.execute(SELECT_REVISION, key).fetchone()
            if row is None:
                return None
            inserted = insert_run_row(tx, run, notify_via=self._db)
            planned = Plan(
                decisions=[PlannedDecision(Decision.TRIGGERED, occurrence_ms, reason, run.id)]
            )
            (decision,) = settle(planned, frozenset() if inserted else {run.id}).decisions
            if inserted:
                # A new_run=True run has an id of its own, not the occurrence's.
                own = run.id == occurrence_run_id(key, occurrence_ms)
                occurrence = occurrence_ms if own else None
                tx.execute(RECORD_TRIGGER, now_ms, run.id, occurrence, occurrence, key)
                status = RunStatus.PENDING
            else:
                status = RunStatus(tx.execute(SELECT_RUN_STATUS, run.id).fetchone()[0])
            kind = decision.decision.value
            tx.execute(
                INSERT_HISTORY, key, occurrence_ms, None, kind, decision.reason, run.id,
                row[0], 1, now_ms,
            )  # fmt: skip
            count_firings(tx, kind, 1)
            return Triggered(run.id, inserted, status)

        return self._db.write(work)

    def backfill_schedule(
        self, key: str, *, occurrences: Sequence[int], now_ms: int, decide: BackfillDecide
    ) -> list[str] | None:
        def work(tx: Transaction) -> list[str] | None:
            row = tx.execute(SELECT_STORED + self._db.lock_row, key).fetchone()
            if row is None:
                return None
            if not occurrences:
                return []
            active = tuple(_active_runs(tx, [key]).get(key, ()))
            due = due_from_row(row, active, _queue_head(tx, key, row))
            run_ids = [occurrence_run_id(key, occurrence) for occurrence in occurrences]
            has_run = frozenset(_existing_runs(tx, run_ids))
            span = tx.execute(SELECT_QUEUED_BETWEEN, key, occurrences[0], occurrences[-1])
            queued = frozenset(found[0] for found in span.fetchall())
            plan = decide(due, has_run, queued)  # pure: nothing written yet
            _apply_backfill(tx, due, plan, has_run, now_ms)
            if plan.starts:
                self._db.notify(tx, "runs")
            if plan.enqueued or plan.cancel_run_ids:
                self._db.notify(tx, "schedules")
            return plan.backfilled

        return self._db.write(work)

    def schedule_history(self, key: str, *, limit: int = 100) -> list[HistoryEntry]:
        with self._db.read() as tx:
            if self._db.plan_for_values:  # a daily schedule's entries among every-second ones
                tx.execute(self._db.plan_for_values)
            rows = tx.execute(SELECT_HISTORY, key, limit).fetchall()
        return [history_from_row(row) for row in rows]

    def next_schedule_due_ms(
        self, *, pools: Sequence[str], workflows: Sequence[str], ahead_ms: int = 0
    ) -> int | None:
        if not pools or not workflows:
            return None
        filters = in_filters(pools, workflows)
        with self._db.read() as tx:
            if ahead_ms:
                statement = FIRST_SCHEDULES_DUE.format(filters=filters)
                rows = tx.execute(statement, *pools, *workflows, FIRST_DUE_ROWS).fetchall()
                return first_due(rows, ahead_ms)
            row = tx.execute(NEXT_SCHEDULE_DUE.format(filters=filters), *pools, *workflows)
            found = row.fetchone()
        return None if found is None or found[0] is None else int(found[0])


def first_due(rows: Sequence[tuple[int, str]], ahead_ms: int) -> int | None:
    """When the first of ``rows`` (due schedules in ``due_at`` order) is due to be fired:
    one that ``fires_ahead`` ``ahead_ms`` early. A later row can only be earlier if it is due
    within ``ahead_ms`` of the best so far."""
    best: int | None = None
    for due_at, overlap in rows:
        due = int(due_at)
        if best is not None and due - ahead_ms >= best:
            break
        when = due - ahead_ms if fires_ahead(Overlap(overlap)) else due
        best = when if best is None else min(best, when)
    return best


def _set_state(tx: Transaction, key: str, firing: FiringState, now_ms: int) -> None:
    tx.execute(SET_STATE, *FIRING.values(firing), now_ms, key)


def _updated_values(row: StoredSchedule, now_ms: int) -> tuple[object, ...]:
    """``UPDATE_SCHEDULE``'s values for a replaced definition's row."""
    changed = CHANGEABLE.values(row.record)
    return (*changed, row.anchor_ms, *FIRING.values(row.firing), now_ms, row.record.key)


def _plan(
    request: tuple[ScheduleRecord, str, bool | None], stored: dict[str, StoredSchedule], now_ms: int
) -> _policy.RegistrationPlan:
    """What registering ``(record, on_conflict, paused)`` over the stored rows does."""
    record, on_conflict, paused = request
    found = stored.get(record.key)
    return _policy.registration(
        record, found, now_ms=now_ms, on_conflict=on_conflict, paused=paused
    )


def _records(
    requests: Sequence[tuple[ScheduleRecord, str, bool | None]],
    stored: dict[str, StoredSchedule],
    existing: bool,
) -> list[ScheduleRecord]:
    """The records of registration requests whose keys are stored (or are not)."""
    return [record for record, _, _ in requests if (record.key in stored) is existing]


def _write_registered(
    tx: Transaction,
    changed: list[tuple[StoredSchedule, ScheduleRecord, _policy.RegistrationPlan]],
    now_ms: int,
) -> None:
    """Write the registrations of existing keys that change their rows, as ``_upsert``
    does one by one: a new definition (revision bumped) or a new state (``paused=``)."""
    updated, states = [], []
    for _, record, plan in changed:
        row = plan.row
        assert row is not None
        if plan.outcome == "updated":
            updated.append(_updated_values(row, now_ms))
        else:
            states.append((*FIRING.values(row.firing), now_ms, record.key))
    if updated:
        tx.executemany(UPDATE_SCHEDULE, updated)
    if states:
        tx.executemany(SET_STATE, states)
    for stored, record, plan in changed:
        assert plan.row is not None
        if plan.row.firing.state is not stored.firing.state:  # paused= changed it
            mark_state_changed(tx, record.key, plan.row.firing.state, plan.revision, now_ms)
        _deactivate_if_spent(tx, plan.row, now_ms)  # max_runs lowered to what it started


def _deactivate_if_spent(
    tx: Transaction, stored: StoredSchedule, now_ms: int
) -> HistoryEntry | None:
    """Deactivate a schedule whose runs reached ``max_runs`` (``stored`` as just written:
    its runs counted), with its note, recorded as ``max_runs_reached``; nothing waits in
    its queue any more. The entry recorded, or None when it has runs left."""
    firing = _policy.spent(stored, now_ms)
    if firing is None:
        return None
    note = _policy.max_runs_note(stored.record.max_runs)
    entry = change_state(
        tx, stored, firing, now_ms=now_ms, note=note, decision=Decision.MAX_RUNS_REACHED
    )
    _forget_queue(tx, stored.record.key)
    return entry


def _forget_queue(tx: Transaction, key: str) -> None:
    tx.execute(CLEAR_QUEUE, key)
    tx.execute(FORGET_WAITING, key)


def _queue_head(tx: Transaction, key: str, row: Sequence[object]) -> tuple[int, ...]:
    """The oldest two occurrences waiting in the schedule's queue (read only when some
    wait: a schedule without buffer_all costs nothing more)."""
    if not waiting_from_row(row):
        return ()
    return tuple(found[0] for found in tx.execute(SELECT_QUEUE_HEAD, key).fetchall())


def _update_queue(tx: Transaction, key: str, plan: Plan) -> int:
    """Write a plan's changes to the schedule's queue; how many wait afterwards (an
    occurrence already queued, by a backfill, is not counted twice)."""
    if plan.released_ms is not None:
        tx.execute(DEQUEUE, key, plan.released_ms)
    waiting = plan.waiting
    for occurrence in plan.enqueued:
        tx.execute(ENQUEUE, key, occurrence)
        waiting -= 1 - tx.rowcount
    return waiting


def _chunks(values: list[str]) -> list[list[str]]:
    return [values[start : start + _CHUNK] for start in range(0, len(values), _CHUNK)]


def _active_runs(tx: Transaction, keys: list[str]) -> dict[str, list[str]]:
    found: dict[str, list[str]] = {}
    for chunk in _chunks(keys):
        statement = SELECT_ACTIVE_RUNS.format(marks=marks(len(chunk)))
        for key, run_id in tx.execute_under(INDEXED, statement, *chunk).fetchall():
            found.setdefault(key, []).append(run_id)
    return found


def _existing_runs(tx: Transaction, run_ids: list[str]) -> set[str]:
    found: set[str] = set()
    for chunk in _chunks(run_ids):
        statement = SELECT_EXISTING_RUNS.format(marks=marks(len(chunk)))
        found.update(row[0] for row in tx.execute_under(SOUGHT, statement, *chunk).fetchall())
    return found


def _entry(
    key: str, planned: PlannedDecision, kind: Decision, reason: str, revision: int, now_ms: int
) -> HistoryEntry:
    """The history entry a decision was recorded as."""
    last = planned.last_occurrence_ms
    return HistoryEntry(
        key=key,
        occurrence=from_ms(planned.occurrence_ms),
        decision=kind,
        reason=reason,
        run_id=planned.run_id,
        revision=revision,
        decided_at=from_ms(now_ms),
        count=planned.count,
        last_occurrence=None if last is None else from_ms(last),
    )


def _apply(
    tx: Transaction, db: Database, plans: list[tuple[DueSchedule, Plan]], now_ms: int
) -> tuple[list[str], list[HistoryEntry]]:
    """Carry out the plans of one firing transaction; return the ids of the runs inserted
    and the decisions recorded other than a plain start (for the log).

    Statements go in bulk: one firing pass may decide thousands of schedules. The planned
    runs are inserted first (``Database.insert_runs``), so that ``settle`` records those
    that already existed (a trigger got there first) as "already_started"; then the
    history and the schedules' advance (``write_many``: one statement on PostgreSQL).
    """
    for _, plan in plans:
        for run_id in plan.cancel_run_ids:
            if not cancel_idle_run(tx, run_id, now_ms)[0]:
                tx.execute(REQUEST_CANCEL, run_id)  # running: its executor stops
    new_runs = [
        _new_run(due, run, now_ms, fired=True) for due, plan in plans for run in plan.starts
    ]
    inserted = db.insert_runs(tx, new_runs) if new_runs else set()
    existing = frozenset(run.id for run in new_runs if run.id not in inserted)
    history, advances = [], []
    noted: list[HistoryEntry] = []
    limited: list[StoredSchedule] = []  # schedules under max_runs, as advanced
    for due, plan in plans:
        record = due.record
        settled = settle(plan, existing)
        for run in settled.starts:
            observe_lateness(tx, record.workflow, run.occurrence_ms, now_ms)
        for decision in settled.decisions:
            kind, reason = decision.decision, decision.reason
            history.append((
                record.key, decision.occurrence_ms, decision.last_occurrence_ms, kind.value,
                reason, decision.run_id, due.revision, decision.count, now_ms,
            ))  # fmt: skip
            count_firings(tx, kind.value, decision.count)
            if kind is not Decision.STARTED:
                noted.append(_entry(record.key, decision, kind, reason, due.revision, now_ms))
        # The last run this plan inserted is the schedule's last, created now (a run a
        # trigger got in first was recorded as last by the trigger).
        new = settled.starts
        waiting = _update_queue(tx, record.key, plan)
        latest = max((run.occurrence_ms for run in new), default=None)
        advances.append((
            plan.next_fire_ms, plan.due_ms, plan.buffered_ms, waiting,
            now_ms if new else None, new[-1].run_id if new else None, latest, latest,
            len(new), record.key,
        ))  # fmt: skip
        if record.max_runs is not None:
            advanced = FiringState(
                due.firing.state, plan.next_fire_ms, plan.next_fire_ms, plan.buffered_ms
            )
            counted = due.stored.runs_counted + len(new)
            limited.append(replace(due.stored, firing=advanced, runs_counted=counted))
    tx.write_many(((INSERT_HISTORY, history), (ADVANCE, advances)))
    for stored in limited:  # after ADVANCE, whose firing state a deactivation replaces
        entry = _deactivate_if_spent(tx, stored, now_ms)
        if entry is not None:
            noted.append(entry)
    return [run.id for run in new_runs if run.id in inserted], noted


def _apply_backfill(
    tx: Transaction, due: DueSchedule, plan: Plan, has_run: frozenset[str], now_ms: int
) -> HistoryEntry | None:
    """Carry out a backfill batch's plan: cancel, insert its runs (``ON CONFLICT DO
    NOTHING`` still guards each), queue, record every decision, and note the last run.
    The schedule's next occurrence and due time are left as they are, unless its runs
    reach ``max_runs``: it deactivates itself (the entry recorded is returned)."""
    record = due.record
    for run_id in plan.cancel_run_ids:
        if not cancel_idle_run(tx, run_id, now_ms)[0]:
            tx.execute(REQUEST_CANCEL, run_id)
    settled = settle(plan, has_run)
    new = settled.starts
    if new:
        tx.executemany(INSERT_RUN, [_run_values(due, run, now_ms) for run in new])
        tx.executemany(QUEUE_INSERTED, [(run.available_ms, run.run_id) for run in new])
    waiting = _update_queue(tx, record.key, plan)
    history = []
    for decision in settled.decisions:
        history.append((
            record.key, decision.occurrence_ms, decision.last_occurrence_ms,
            decision.decision.value, decision.reason, decision.run_id, due.revision,
            decision.count, now_ms,
        ))  # fmt: skip
        count_firings(tx, decision.decision.value, decision.count)
    if history:
        tx.executemany(INSERT_HISTORY, history)
    last = new[-1].run_id if new else None
    latest = max((run.occurrence_ms for run in new), default=None)
    tx.execute(
        RECORD_BACKFILL, plan.buffered_ms, waiting, now_ms if last else None, last, latest,
        latest, len(new), record.key,
    )  # fmt: skip
    if record.max_runs is None:
        return None
    firing = replace(due.firing, buffered_ms=plan.buffered_ms)
    counted = replace(due.stored, firing=firing, runs_counted=due.stored.runs_counted + len(new))
    return _deactivate_if_spent(tx, counted, now_ms)


def _run_values(
    due: DueSchedule, run: PlannedRun, now_ms: int, *, fired: bool = False
) -> tuple[object, ...]:
    """A planned run of the schedule as ``INSERT_RUN``'s values (``_new_run``)."""
    return NEW_RUN.values(_new_run(due, run, now_ms, fired=fired))


def _new_run(due: DueSchedule, run: PlannedRun, now_ms: int, *, fired: bool = False) -> NewRun:
    """A planned run of the schedule as inserted. A run ``fired`` for its occurrence (not
    a backfill's, late by construction) has the schedule's deadline."""
    record = due.record
    deadline = record.deadline_ms
    # A run a calendar moved is due where it moved: its deadline counts from there (a run
    # moved to Monday did not miss a deadline on the Friday holiday it could not run on).
    due_ms = run.occurrence_ms if run.moved_ms is None else run.moved_ms
    deadline_ms = capped(due_ms + deadline) if fired and deadline is not None else None
    return NewRun(
        id=run.run_id, workflow=record.workflow, version=record.version,
        input_json=record.input_json, priority=record.priority, pool=record.pool,
        created_ms=now_ms, available_ms=run.available_ms, schedule_key=record.key,
        schedule_revision=due.revision, scheduled_for_ms=run.occurrence_ms,
        retry_json=record.retry_json, deadline_ms=deadline_ms,
    )  # fmt: skip
