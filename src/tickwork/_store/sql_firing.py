"""Firing in SQL: the store's part that starts runs of schedules (DESIGN §3), and the one
read of when the firing loop is next due.

Registration and state changes stay in ``sql_schedules.py``; here are the transactions
that decide occurrences. Every rule lives in pure code (``_planning``); a method reads
rows, calls the planner and writes what it returns, in one transaction. Firing is one
transaction per batch of due schedules: claim the rows, read their unfinished runs, ask
the planner, insert runs with ``ON CONFLICT (id) DO NOTHING``, append history, advance
``next_fire_at``. The unique run id of an occurrence, not the lock, is what makes a second
start of the same occurrence impossible. A trigger starts one occurrence now; a backfill is
decided by the planner too, a bounded batch per transaction.

``overlap="buffer_all"`` keeps its waiting occurrences in ``tickwork_schedule_queue``
(migration 0009), their count in the schedule's ``waiting`` and the oldest in
``buffered_for``; firing reads the oldest two only of a schedule where some wait.

When the loop is next due (``next_firing_due_ms``) is one statement: the schedules' next
occurrence, the next deadline to check and the next debounce/batch buffer to flush. An
idle worker reads it once a poll (``_services/worker.py``); read as three transactions, it was
nine round trips a second on PostgreSQL (BEGIN, SELECT, COMMIT each). Now it is one
statement the dialect runs outside any transaction (``Database.read_rows``): one round
trip. The three reads are the owners' own statements (here, ``sql_deadlines``,
``sql_events``), each an index seek; each row says which it is. A new kind of firing
adds its row.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace

from .._rules import policy as _policy
from .._rules.planning import Plan, PlannedDecision, PlannedRun, fires_ahead, settle
from .._values.clock import capped, from_ms
from .._values.ids import occurrence_run_id
from .._values.models import Decision, HistoryEntry, Overlap, RunStatus, Triggered
from .._values.records import DueSchedule, FiringState, NewRun, StoredSchedule
from .counters import count_firings, observe_lateness
from .firing_contract import BackfillDecide, FireResult
from .run_inserts import INSERT_RUN, QUEUE_INSERTED, insert_run_row
from .run_rows import NEW_RUN
from .schedule_rows import (
    SELECT_STORED,
    STORED_COLUMNS,
    due_from_row,
    key_from_row,
    waiting_from_row,
)
from .sql_deadlines import NEXT_DEADLINE
from .sql_events import NEXT_BUFFER_DUE
from .sql_runs import REQUEST_CANCEL, cancel_idle_run
from .sql_schedules import deactivate_if_spent
from .transaction import INDEXED, SOUGHT, Database, Transaction, in_filters, marks

__all__ = [
    "ADVANCE",
    "FIRST_DUE_ROWS",
    "FIRST_SCHEDULES_DUE",
    "INSERT_HISTORY",
    "NEXT_SCHEDULE_DUE",
    "FiringSql",
    "first_due",
]

#: IN lists are cut into chunks of this many values (SQLite's parameter limit is 999 on
#: old builds)
_CHUNK = 500

# One schedule's revision (a trigger records it).
SELECT_REVISION = "SELECT revision FROM tickwork_schedules WHERE key = ?"
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
# The deadlines' and the buffers' next due times, one row each ('d', 'b').
OTHERS_DUE = f"""
SELECT 'd', ({NEXT_DEADLINE.strip()}), NULL
UNION ALL SELECT 'b', ({NEXT_BUFFER_DUE.strip()}), NULL
"""
# With them, the schedules' next due time ('s'); {filters} as in NEXT_SCHEDULE_DUE.
WITH_NEXT_SCHEDULE = f"SELECT 's', ({NEXT_SCHEDULE_DUE.strip()}), NULL UNION ALL {OTHERS_DUE}"
# With them, the first due schedules and their policy ('s' rows), for fire_ahead.
WITH_FIRST_SCHEDULES = (
    f"SELECT 's', due_at, overlap FROM ({FIRST_SCHEDULES_DUE.strip()}) AS first_due"
    f" UNION ALL {OTHERS_DUE}"
)


class FiringSql:
    """Firing over a dialect's ``Database`` (see ``Store``)."""

    __slots__ = ("_db",)

    def __init__(self, db: Database) -> None:
        self._db = db

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
            _apply_backfill(tx, self._db, due, plan, has_run, now_ms)
            if plan.starts:
                self._db.notify(tx, "runs")
            if plan.enqueued or plan.cancel_run_ids:
                self._db.notify(tx, "schedules")
            return plan.backfilled

        return self._db.write(work)

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

    def next_firing_due_ms(
        self, *, pools: Sequence[str], workflows: Sequence[str], ahead_ms: int = 0
    ) -> int | None:
        """``store.firing.next_firing_due_ms``: the earliest of the three, or None."""
        db = self._db
        if not pools or not workflows:
            rows = db.read_rows(OTHERS_DUE)
        elif ahead_ms:
            statement = WITH_FIRST_SCHEDULES.format(filters=in_filters(pools, workflows))
            rows = db.read_rows(statement, *pools, *workflows, FIRST_DUE_ROWS)
        else:
            statement = WITH_NEXT_SCHEDULE.format(filters=in_filters(pools, workflows))
            rows = db.read_rows(statement, *pools, *workflows)
        schedules = sorted(
            (int(due), policy) for kind, due, policy in rows if kind == "s" and due is not None
        )
        dues = [int(due) for kind, due, _ in rows if kind != "s" and due is not None]
        if schedules:
            first = first_due(schedules, ahead_ms) if ahead_ms else schedules[0][0]
            if first is not None:
                dues.append(first)
        return min(dues) if dues else None


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
            if not cancel_idle_run(db, tx, run_id, now_ms)[0]:
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
        entry = deactivate_if_spent(tx, stored, now_ms)
        if entry is not None:
            noted.append(entry)
    return [run.id for run in new_runs if run.id in inserted], noted


def _apply_backfill(
    tx: Transaction,
    db: Database,
    due: DueSchedule,
    plan: Plan,
    has_run: frozenset[str],
    now_ms: int,
) -> HistoryEntry | None:
    """Carry out a backfill batch's plan: cancel, insert its runs (``ON CONFLICT DO
    NOTHING`` still guards each), queue, record every decision, and note the last run.
    The schedule's next occurrence and due time are left as they are, unless its runs
    reach ``max_runs``: it deactivates itself (the entry recorded is returned)."""
    record = due.record
    for run_id in plan.cancel_run_ids:
        if not cancel_idle_run(db, tx, run_id, now_ms)[0]:
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
    return deactivate_if_spent(tx, counted, now_ms)


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
