"""New runs: inserted pending and queued, or straight into an idle executor's claim.

A new run has a row in ``tickwork_runs`` and, while unfinished, one in ``tickwork_queue``
(``sql_runs.py`` says why), written together; an id that exists inserts nothing (start is
idempotent by id; an occurrence's run id is unique).

``StraightClaim``: ``Engine.start`` and ``emit`` hand a run they insert to an idle
executor of their own process in the same transaction (``Runtime._handing_over``).
Inserted pending and then claimed, the run would cost two more writes (its queue row and
its run row updated to running, each moving index entries) and a claim's read would find
what was just written. Instead the claim's candidates are read first (the new run is not
among them yet): when the new run is due, the executor may take it (pool, workflow,
concurrency room) and no candidate comes before it in the claim's order, it goes in
running under the executor's lease at once; otherwise it goes in pending and the claim is
made as always. Only where a claim reads its candidates before it writes (SQLite:
``Database.claim_candidates``); PostgreSQL's claim is one statement that reads and
writes, and there the runs go in pending.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from .._values.records import NewRun
from .claim_records import ClaimRequest
from .claim_room import open_workflows
from .counters import observe_lateness
from .run_rows import (
    CLAIM_COLUMNS,
    COL_WORKFLOW,
    EVENT_MARK,
    NEW_RUN,
    QUEUED_RUN,
    TakenRun,
    claim_order,
    new_lease_token,
)
from .transaction import Database, Transaction, marks, select_among_in_chunks

__all__ = [
    "INSERT_RUN",
    "QUEUE_INSERTED",
    "StraightClaim",
    "insert_run_row",
    "insert_runs_checked",
]

# Insert a new run unless one with the same id exists (start is idempotent by id; an
# occurrence's run id is unique).
INSERT_RUN = f"""
INSERT INTO tickwork_runs ({NEW_RUN.select()}, status, attempt, event_mark)
VALUES ({marks(len(NEW_RUN.names))}, 'pending', 1, {EVENT_MARK})
ON CONFLICT (id) DO NOTHING
"""
# ... and its place in the queue (only when the run was inserted).
QUEUE_RUN = f"""
INSERT INTO tickwork_queue ({QUEUED_RUN.select()}, status)
VALUES ({marks(len(QUEUED_RUN.names))}, 'pending')
"""
# The same for runs inserted in bulk (executemany, where no row count tells which ids
# were new): a pending run without its queue row can only be one this transaction just
# inserted (every run in flight has one; an ended run is not pending).
QUEUE_INSERTED = """
INSERT INTO tickwork_queue (id, workflow, pool, priority, status, available_at, schedule_key,
    created_at)
SELECT id, workflow, pool, priority, status, ?, schedule_key, created_at FROM tickwork_runs
WHERE id = ? AND status = 'pending'
ON CONFLICT (id) DO NOTHING
"""


# A new run inserted already running (as sql_runs.START_RUN leaves a claimed run) ...
INSERT_RUNNING = f"""
INSERT INTO tickwork_runs ({NEW_RUN.select()}, status, attempt, started_at, attempt_started_at,
    event_mark)
VALUES ({marks(len(NEW_RUN.names))}, 'running', 1, ?, ?, {EVENT_MARK})
ON CONFLICT (id) DO NOTHING
"""
# ... and its place in the queue under the lease (as sql_runs.LEASE_RUN leaves it).
QUEUE_RUNNING = f"""
INSERT INTO tickwork_queue ({QUEUED_RUN.select()}, status, lease_token)
VALUES ({marks(len(QUEUED_RUN.names))}, 'running', ?)
"""


def insert_run_row(tx: Transaction, run: NewRun, *, notify_via: Database | None = None) -> bool:
    """Insert ``run`` in the transaction ``tx``; False if its id exists already. With
    ``notify_via``, the insert also tells listening workers "runs" changed: its queue row's
    statement carries that database's NOTIFY (``execute_notifying``), one round trip fewer."""
    tx.execute(INSERT_RUN, *NEW_RUN.values(run))
    if tx.rowcount != 1:
        return False
    if notify_via is None:
        tx.execute(QUEUE_RUN, *QUEUED_RUN.values(run))
    else:
        notify_via.execute_notifying(tx, "runs", QUEUE_RUN, *QUEUED_RUN.values(run))
    if run.scheduled_for_ms is not None:
        observe_lateness(tx, run.workflow, run.scheduled_for_ms, run.created_ms)
    return True


# Which of some run ids exist; {keys} is the ids' condition (Database.select_among).
SELECT_EXISTING = "SELECT id FROM tickwork_runs WHERE id {keys}"


def insert_runs_checked(tx: Transaction, runs: Sequence[NewRun]) -> set[str]:
    """``Database.insert_runs`` where write transactions take turns (SQLite): the ids
    that exist read first (no other writer can add one meanwhile), then every run
    inserted and queued in bulk (``ON CONFLICT`` and ``QUEUE_INSERTED`` still guard each)."""
    ids = [run.id for run in runs]
    existing = {row[0] for row in select_among_in_chunks(tx, SELECT_EXISTING, ids)}
    tx.executemany(INSERT_RUN, [NEW_RUN.values(run) for run in runs])
    tx.executemany(QUEUE_INSERTED, [(run.available_ms, run.id) for run in runs])
    return {run_id for run_id in ids if run_id not in existing}


#: where QUEUED_RUN's values hold available_at
_QUEUED_AVAILABLE = QUEUED_RUN.names.index("available_at")


class StraightClaim:
    """The claim ``request`` (None: none) in the transaction ``tx``: ``insert`` each new
    run through it, then ``taken`` is what the claim took."""

    __slots__ = (
        "_candidates", "_db", "_opened", "_opened_read", "_request", "_straight", "_taken", "_tx",
    )  # fmt: skip

    def __init__(self, db: Database, tx: Transaction, request: ClaimRequest | None) -> None:
        self._db, self._tx, self._request = db, tx, request
        #: the workflows the claim may take runs of, and their room, read when first asked
        self._opened: tuple[list[str], dict[str, int]] | None = None
        self._opened_read = False
        #: the claim's candidates, read at the first insert it may take
        self._candidates: list[Any] | None = None
        self._taken: TakenRun | None = None
        self._straight = True

    def insert(self, run: NewRun, *, notify: bool = False) -> bool:
        """Insert ``run`` (as ``insert_run_row``, ``notify`` telling listening workers),
        running under the claim's lease when the claim takes it; False if its id exists
        already."""
        if self._taken is None and self._takes(run):
            return self._insert_running(run, notify)
        return insert_run_row(self._tx, run, notify_via=self._db if notify else None)

    def taken(self) -> list[TakenRun]:
        """What the claim took: the new run it took at its insert, or else the most
        urgent due runs now (as ``RunsSql.claim_in``)."""
        if self._taken is not None:
            return [self._taken]
        opened = self._open()
        if self._request is None or opened is None:
            return []
        return self._db.take_runs(self._tx, self._request, *opened)

    def _takes(self, run: NewRun) -> bool:
        """Whether the claim would take ``run`` first, were it queued pending now."""
        request = self._request
        # An idle claim looks for a suspect first (lost_workers.py).
        if request is None or request.idle or request.limit != 1 or not self._straight:
            return False
        if run.available_ms > request.now_ms or run.pool not in request.pools:
            return False
        opened = self._open()
        if opened is None:
            return False
        workflows, room = opened
        if run.workflow not in workflows or room.get(run.workflow, 1) <= 0:
            return False
        if self._candidates is None:
            found = self._db.claim_candidates(self._tx, request, *opened)
            if found is None:  # the dialect claims in one statement: after the inserts
                self._straight = False
                return False
            self._candidates = found
        first = next((row for row in self._candidates if room.get(row[COL_WORKFLOW], 1) > 0), None)
        return first is None or (-run.priority, run.available_ms, run.id) < claim_order(first)

    def _open(self) -> tuple[list[str], dict[str, int]] | None:
        if not self._opened_read:
            self._opened = open_workflows(self._db, self._tx, self._request)
            self._opened_read = True
        return self._opened

    def _insert_running(self, run: NewRun, notify: bool) -> bool:
        request, tx = self._request, self._tx
        assert request is not None
        now_ms = request.now_ms
        tx.execute(INSERT_RUNNING, *NEW_RUN.values(run), now_ms, now_ms)
        if tx.rowcount != 1:
            return False
        token = new_lease_token(request.worker)
        queued = list(QUEUED_RUN.values(run))
        queued[_QUEUED_AVAILABLE] = now_ms + request.lease_ms  # when the lease runs out
        if notify:
            self._db.execute_notifying(tx, "runs", QUEUE_RUNNING, *queued, token)
        else:
            tx.execute(QUEUE_RUNNING, *queued, token)
        if run.scheduled_for_ms is not None:
            observe_lateness(tx, run.workflow, run.scheduled_for_ms, run.created_ms)
        self._taken = (_candidate_row(run), token, [], 0, False)
        return True


def _candidate_row(run: NewRun) -> tuple[Any, ...]:
    """The row the claim would have read for ``run`` queued pending (CLAIM_COLUMNS)."""
    values = dict.fromkeys(CLAIM_COLUMNS)
    values.update(
        id=run.id, workflow=run.workflow, version=run.version, status="pending",
        input=run.input_json, attempt=1, priority=run.priority, pool=run.pool,
        schedule_key=run.schedule_key, scheduled_for=run.scheduled_for_ms,
        created_at=run.created_ms, schedule_revision=run.schedule_revision,
        cancel_requested=0, retry=run.retry_json, recoveries=0, recovery_mark=0, suspect=0,
        parent_id=run.parent_id,
    )  # fmt: skip
    return tuple(values.values())
