"""Pruning in SQL: one bounded batch of what retention no longer keeps (``prune_batch``).

A pass walks the workflows that have ended runs, in name order, then the schedules'
history, by key; a batch goes on from where the last one stopped (``PrunePosition``), in
one short write transaction of its own (``Database.write_alone``: on PostgreSQL this
process's firings and checkpoints do not wait behind it). Every lookup is a seek on an
index made for it (migrations 0003, 0005): ``tickwork_runs_ended`` (workflow,
finished_at) over ended runs only, and ``tickwork_schedule_history_decided`` (key,
decided_at). Candidates are read with the dialect's ``SKIP LOCKED`` (PostgreSQL), so two
pruners at once take different rows and neither waits; SQLite's write transactions take
turns anyway. Steps are deleted explicitly before their runs (not by the cascade) so
every row removed is counted. The rules (which cutoff, what fits in a batch) are ``_retention``'s.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from .._rules.retention import (
    KEEP_HISTORY,
    MOST_VISITS,
    Cutoffs,
    PruneBatch,
    PrunePosition,
    candidate_limit,
    take_within,
)
from .statuses import ENDED
from .transaction import Database, Transaction, marks

__all__ = ["PruneSql"]

#: IN lists are cut into chunks of this many values (old SQLite builds allow 999)
_CHUNK = 500
#: the floor of a walk not begun: before any instant (a 64-bit integer, as stored)
_NO_FLOOR = -(2**63)
#: ENDED said of the runs table under its alias r
_ENDED_IN_R = ENDED.replace("status", "r.status")

# The first workflow with ended runs, by name (a seek on tickwork_runs_ended, whose WHERE
# this repeats word for word so SQLite uses it).
FIRST_WORKFLOW = f"""
SELECT workflow FROM tickwork_runs
WHERE {ENDED}
ORDER BY workflow LIMIT 1
"""
# The first workflow with ended runs whose name is after the given one.
NEXT_WORKFLOW = f"""
SELECT workflow FROM tickwork_runs
WHERE {ENDED} AND workflow > ?
ORDER BY workflow LIMIT 1
"""
# A workflow's ended runs that ended from the floor on and before the cutoff, oldest
# first, with when each ended and how many steps it has; not a schedule's latest run, nor
# the run of its latest occurrence (its schedule row names them: a primary-key probe;
# migration 0014), nor the child of a parent still unfinished (in the queue: its result is
# kept until the parent has read it, DESIGN §10). The dialect's SKIP LOCKED is appended:
# rows another pruner holds are left to it.
SELECT_PRUNABLE_RUNS = f"""
SELECT r.id, r.finished_at, (SELECT COUNT(*) FROM tickwork_steps s WHERE s.run_id = r.id)
FROM tickwork_runs r
WHERE r.workflow = ? AND {_ENDED_IN_R}
    AND r.finished_at >= ? AND r.finished_at < ?
    AND NOT EXISTS (SELECT 1 FROM tickwork_schedules k
                    WHERE k.key = r.schedule_key
                        AND (k.last_run_id = r.id OR k.last_occurrence_at = r.scheduled_for))
    AND NOT EXISTS (SELECT 1 FROM tickwork_queue p WHERE p.id = r.parent_id)
ORDER BY r.finished_at
LIMIT ?
"""
# The steps of some runs about to go; {marks} is one placeholder per run id.
DELETE_STEPS_OF = "DELETE FROM tickwork_steps WHERE run_id IN ({marks})"
# Some ended runs (their steps gone first); {marks} is one placeholder per run id.
DELETE_RUNS = f"""
DELETE FROM tickwork_runs
WHERE id IN ({{marks}}) AND {ENDED}
"""
# Some steps of a run too heavy for one batch (the run goes once the rest fits).
SELECT_SOME_STEPS = "SELECT kind, name FROM tickwork_steps WHERE run_id = ? LIMIT ?"
# One step, by its key.
DELETE_STEP = "DELETE FROM tickwork_steps WHERE run_id = ? AND kind = ? AND name = ?"
# The first schedule key with history.
FIRST_KEY = "SELECT key FROM tickwork_schedule_history ORDER BY key LIMIT 1"
# The first schedule key with history whose key is after the given one.
NEXT_KEY = """
SELECT key FROM tickwork_schedule_history WHERE key > ? ORDER BY key LIMIT 1
"""
# A schedule's history entries decided from the floor on and before the cutoff, oldest
# first (SKIP LOCKED appended, as for runs).
SELECT_OLD_HISTORY = """
SELECT id, decided_at FROM tickwork_schedule_history
WHERE key = ? AND decided_at >= ? AND decided_at < ?
ORDER BY decided_at
LIMIT ?
"""
# The id of a schedule's KEEP_HISTORY-th newest entry (the OFFSET): it and every newer
# entry stay. None when the schedule has fewer.
SELECT_KEPT_FLOOR = """
SELECT id FROM tickwork_schedule_history WHERE key = ? ORDER BY id DESC LIMIT 1 OFFSET ?
"""
# Some history entries; {marks} is one placeholder per id.
DELETE_HISTORY = "DELETE FROM tickwork_schedule_history WHERE id IN ({marks})"


class _Batch:
    """One batch in progress: rows removed so far, where it has got to, and whether the
    next row left out for lack of room (``full``: the batch ends)."""

    __slots__ = ("budget", "full", "position", "removed", "tables")

    def __init__(self, budget: int, position: PrunePosition) -> None:
        self.budget = budget
        self.position = position
        self.removed = 0
        self.full = False
        self.tables = {"runs": 0, "steps": 0, "history": 0}

    @property
    def room(self) -> int:
        return self.budget - self.removed

    def took(self, removed: int, table: str) -> None:
        self.removed += removed
        self.tables[table] += removed
        self.full = self.full or self.room <= 0

    def done(self) -> PruneBatch:
        return PruneBatch(self.removed, self.position, **self.tables)


class PruneSql:
    """``prune_batch`` over a dialect's ``Database`` (see ``store.pruning.prune_batch``)."""

    __slots__ = ("_db",)

    def __init__(self, db: Database) -> None:
        self._db = db

    def prune_batch(self, *, cutoffs: Cutoffs, budget: int, position: PrunePosition) -> PruneBatch:
        if position.phase == "runs" and not _prunes_runs(cutoffs):
            position = position.next_phase()
        if position.phase == "history" and cutoffs.history_ms is None:
            position = position.next_phase()
        if position.done or budget <= 0:
            return PruneBatch(0, position)

        def work(tx: Transaction) -> PruneBatch:
            batch = _Batch(budget, position)
            visits = 0
            while not batch.full and not batch.position.done and visits < MOST_VISITS:
                visits += 1
                if batch.position.phase == "runs":
                    self._runs(tx, batch, cutoffs)
                elif cutoffs.history_ms is None:
                    batch.position = batch.position.next_phase()
                else:
                    self._history(tx, batch, cutoffs.history_ms)
            return batch.done()

        return self._db.write_alone(work)  # other writes never wait behind a batch

    def _runs(self, tx: Transaction, batch: _Batch, cutoffs: Cutoffs) -> None:
        """Remove what fits of the ended runs of the workflow the batch is at."""
        at = batch.position
        workflow = _next_name(tx, at, FIRST_WORKFLOW, NEXT_WORKFLOW)
        if workflow is None:
            batch.position = at.next_phase()
            return
        cutoff = cutoffs.for_workflow(workflow)
        if cutoff is None:  # kept for ever
            batch.position = at.after(workflow)
            return
        limit = candidate_limit(batch.room, at.rows_per_run)
        floor = _NO_FLOOR if at.floor_ms is None else at.floor_ms
        found = tx.execute(
            SELECT_PRUNABLE_RUNS + self._db.lock_suffix, workflow, floor, cutoff, limit
        ).fetchall()
        ended = {run_id: int(finished) for run_id, finished, _ in found}
        take = take_within([(r[0], int(r[2])) for r in found], batch.room, fresh=not batch.removed)
        batch.full = not take.complete  # the next run waits for a batch with room
        if take.steps_of is not None:
            batch.took(_delete_some_steps(tx, take.steps_of, take.steps), "steps")
            floor = ended[take.steps_of]
        if take.run_ids:
            steps, runs = _delete_runs(tx, take.run_ids)
            batch.took(steps, "steps")
            batch.took(runs, "runs")
            floor = ended[take.run_ids[-1]]
            at = replace(at, rows_per_run=take.rows / len(take.run_ids))
        exhausted = take.complete and len(found) < limit
        batch.position = at.after(workflow) if exhausted else at.at(workflow, floor)

    def _history(self, tx: Transaction, batch: _Batch, cutoff: int) -> None:
        """Remove what fits of the old history entries of the schedule the batch is at."""
        at = batch.position
        key = _next_name(tx, at, FIRST_KEY, NEXT_KEY)
        if key is None:
            batch.position = at.next_phase()
            return
        limit = batch.room
        floor = _NO_FLOOR if at.floor_ms is None else at.floor_ms
        statement = SELECT_OLD_HISTORY + self._db.lock_suffix
        old = tx.execute(statement, key, floor, cutoff, limit).fetchall()
        newest_kept = None
        if old:
            kept = tx.execute(SELECT_KEPT_FLOOR, key, KEEP_HISTORY - 1).fetchone()
            newest_kept = None if kept is None else kept[0]
        doomed = [] if newest_kept is None else [r for r in old if r[0] < newest_kept]
        batch.took(_delete_in(tx, DELETE_HISTORY, [entry_id for entry_id, _ in doomed]), "history")
        # The kept entries are the newest: once one is among the old, so is every later one.
        exhausted = len(old) < limit or len(doomed) < len(old)
        floor = int(doomed[-1][1]) if doomed else floor
        batch.position = at.after(key) if exhausted else at.at(key, floor)


def _next_name(tx: Transaction, at: PrunePosition, first: str, after: str) -> str | None:
    """The workflow (or schedule key) to work on: the one the position is at, else the
    first, else the one after it (one seek on the phase's index)."""
    if at.name is not None and not at.past:
        return at.name
    row = (tx.execute(first) if at.name is None else tx.execute(after, at.name)).fetchone()
    return None if row is None else str(row[0])


def _prunes_runs(cutoffs: Cutoffs) -> bool:
    return cutoffs.runs_ms is not None or any(c is not None for c in cutoffs.workflows.values())


def _delete_in(tx: Transaction, statement: str, values: Sequence[object]) -> int:
    """Run a ``{marks}`` DELETE over ``values`` in chunks; how many rows went."""
    removed = 0
    for start in range(0, len(values), _CHUNK):
        chunk = values[start : start + _CHUNK]
        tx.execute(statement.format(marks=marks(len(chunk))), *chunk)
        removed += tx.rowcount
    return removed


def _delete_runs(tx: Transaction, run_ids: Sequence[str]) -> tuple[int, int]:
    """Remove runs and their steps; how many steps and how many runs went."""
    return _delete_in(tx, DELETE_STEPS_OF, run_ids), _delete_in(tx, DELETE_RUNS, run_ids)


def _delete_some_steps(tx: Transaction, run_id: str, count: int) -> int:
    """Remove ``count`` steps of a run too heavy for one batch; how many went."""
    keys = tx.execute(SELECT_SOME_STEPS, run_id, count).fetchall()
    removed = 0
    for kind, name in keys:
        tx.execute(DELETE_STEP, run_id, kind, name)
        removed += tx.rowcount
    return removed
