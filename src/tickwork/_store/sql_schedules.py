"""The schedule half of the store contract in SQL: register, change state, read.

Every rule lives in pure code (``_policy`` for registration and state); here a method
reads rows, calls a rule and writes what it returns, in one transaction. Starting runs of
schedules (fire, trigger, backfill) is the firing part's (``sql_firing.py``); a schedule
whose runs reach ``max_runs`` is deactivated by either (``deactivate_if_spent``).

Registration in bulk (a worker's declared schedules at start-up) is the same rule over a
batch in a few statements: the batch's stored rows in one read, the new ones in one
insert that returns the keys it took, the changed ones in one ``executemany``.

``overlap="buffer_all"`` keeps its waiting occurrences in ``tickwork_schedule_queue``
(migration 0009); a state change that ends the wait and a delete forget them here.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace

from .._rules import policy as _policy
from .._values.business_days import BusinessDays
from .._values.models import Decision, HistoryEntry, ScheduleAction, ScheduleInfo
from .._values.records import DueSchedule, FiringState, ScheduleRecord, StoredSchedule
from .schedule_contract import Registration
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
    stored_from_row,
)
from .sql_calendars import hold_calendars
from .state_changes import change_state, mark_state_changed
from .transaction import Database, Transaction, marks

__all__ = ["SchedulesSql", "deactivate_if_spent"]

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
# Forget a schedule's queue (deactivated, activated afresh, or deleted).
CLEAR_QUEUE = "DELETE FROM tickwork_schedule_queue WHERE key = ?"
FORGET_WAITING = "UPDATE tickwork_schedules SET waiting = 0 WHERE key = ?"
# A schedule's decisions, newest first.
SELECT_HISTORY = f"""
SELECT {", ".join(HISTORY_COLUMNS)} FROM tickwork_schedule_history
WHERE key = ? ORDER BY id DESC LIMIT ?
"""
# Forget a schedule's history (before the schedule itself).
DELETE_HISTORY = "DELETE FROM tickwork_schedule_history WHERE key = ?"
# Forget a schedule (its runs stay).
DELETE_SCHEDULE = "DELETE FROM tickwork_schedules WHERE key = ?"


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
            deactivate_if_spent(tx, row, now_ms)  # max_runs lowered to what it started
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

    def schedule_history(self, key: str, *, limit: int = 100) -> list[HistoryEntry]:
        with self._db.read() as tx:
            if self._db.plan_for_values:  # a daily schedule's entries among every-second ones
                tx.execute(self._db.plan_for_values)
            rows = tx.execute(SELECT_HISTORY, key, limit).fetchall()
        return [history_from_row(row) for row in rows]


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
        deactivate_if_spent(tx, plan.row, now_ms)  # max_runs lowered to what it started


def deactivate_if_spent(
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
