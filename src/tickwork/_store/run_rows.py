"""Run and checkpoint rows, read and written by column name.

The runs, queue and steps tables are declared as ``Columns`` of their records
(``columns.py``): ``RUN`` reads a ``RunInfo``, ``STEP`` a ``StepInfo``, ``NEW_RUN`` and
``QUEUED_RUN`` write a ``NewRun`` into the runs table and the queue. A claim candidate
is a run row followed by what its executor needs besides; those columns' positions are
looked up by name once, at import, so reading stays as cheap as indexing a tuple
(claiming and finishing runs is the hot path).
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import Any

from .._values.clock import from_ms
from .._values.ids import from_json
from .._values.models import RunInfo, RunStatus, StepInfo
from .._values.records import NewRun, tries_from_json
from .claim_records import ClaimedRun
from .columns import Columns

__all__ = [
    "CLAIM_COLUMNS",
    "CLAIM_SELECT",
    "COL_ATTEMPT_STARTED_AT",
    "COL_DUE_AT",
    "COL_ID",
    "COL_SCHEDULE_KEY",
    "COL_STARTED_AT",
    "COL_WORKFLOW",
    "EVENT_MARK",
    "NEW_RUN",
    "QUEUED_RUN",
    "RUN",
    "RUN_COLUMNS",
    "STEP",
    "STEP_COLUMNS",
    "TakenRun",
    "claim_order",
    "claimed_runs",
    "count_recoveries",
    "ended_run",
    "inserted_run",
    "is_take_over",
    "lease_worker",
    "new_lease_token",
    "run_from_row",
    "running_from_row",
    "step_from_row",
]


def _instant(ms: int | None) -> Any:
    return None if ms is None else from_ms(ms)


#: a stored status as its member: a dict's lookup, not ``RunStatus(text)`` (two Python
#: calls through Enum's machinery, for every run claimed or read)
_STATUS = {status.value: status for status in RunStatus}.__getitem__

#: a run as stored
RUN: Columns[RunInfo] = Columns(
    RunInfo,
    read={"status": _STATUS, "input": from_json, "result": from_json,
          "scheduled_for": _instant, "created_at": from_ms, "started_at": _instant,
          "finished_at": _instant},
)  # fmt: skip
RUN_COLUMNS = RUN.names
#: a new run as inserted (its status, attempt and the rest start as the table says)
NEW_RUN: Columns[NewRun] = Columns(
    NewRun,
    fields=("id", "workflow", "version", "input_json", "priority", "pool", "schedule_key",
            "schedule_revision", "scheduled_for_ms", "retry_json", "created_ms", "deadline_ms",
            "parent_id", "joined"),
    column={"input_json": "input", "scheduled_for_ms": "scheduled_for", "retry_json": "retry",
            "created_ms": "created_at", "deadline_ms": "deadline_at"},
)  # fmt: skip
#: a new run's ``event_mark``, in its insert: the last position in the events' order
#: taken (migration 0022), after which its waits' look back takes events (``since="run"``)
EVENT_MARK = "(SELECT last FROM tickwork_event_order)"
#: a new run's place in the queue
QUEUED_RUN: Columns[NewRun] = Columns(
    NewRun,
    fields=("id", "workflow", "pool", "priority", "available_ms", "schedule_key", "created_ms"),
    column={"available_ms": "available_at", "created_ms": "created_at"},
)
#: a checkpoint as stored
STEP: Columns[StepInfo] = Columns(
    StepInfo,
    read={"result": from_json, "started_at": from_ms, "finished_at": from_ms,
          "tries": tries_from_json},
)  # fmt: skip
#: a candidate for claiming: the run, then what its executor needs besides, then what
#: tells a take-over (``lease_token`` of a running run) and its lost workers (0006, 0014)
CLAIM_COLUMNS = (
    *RUN_COLUMNS, "attempt_started_at", "cancel_requested", "retry", "lease_token",
    "recoveries", "recovery_mark", "suspect",
)  # fmt: skip
#: the columns of CLAIM_COLUMNS that the queue holds (migration 0011): a claim reads them
#: from its row ``q``, the others from the run's row ``r``
QUEUED_COLUMNS = frozenset({"lease_token", "cancel_requested", "suspect"})
#: CLAIM_COLUMNS as a claim selects them from ``tickwork_queue q`` joined to ``tickwork_runs r``
CLAIM_SELECT = ", ".join(
    f"{'q' if name in QUEUED_COLUMNS else 'r'}.{name}" for name in CLAIM_COLUMNS
)
STEP_COLUMNS = STEP.names

#: positions in a claim candidate's row (it begins like a run row)
COL_ID = CLAIM_COLUMNS.index("id")
COL_WORKFLOW = CLAIM_COLUMNS.index("workflow")
COL_STATUS = CLAIM_COLUMNS.index("status")
COL_PRIORITY = CLAIM_COLUMNS.index("priority")
COL_SCHEDULE_KEY = CLAIM_COLUMNS.index("schedule_key")
COL_STARTED_AT = CLAIM_COLUMNS.index("started_at")
COL_ATTEMPT_STARTED_AT = CLAIM_COLUMNS.index("attempt_started_at")
COL_CANCEL_REQUESTED = CLAIM_COLUMNS.index("cancel_requested")
COL_RETRY = CLAIM_COLUMNS.index("retry")
COL_LEASE_TOKEN = CLAIM_COLUMNS.index("lease_token")
COL_RECOVERIES = CLAIM_COLUMNS.index("recoveries")
COL_RECOVERY_MARK = CLAIM_COLUMNS.index("recovery_mark")
COL_SUSPECT = CLAIM_COLUMNS.index("suspect")
#: position of a candidate's available_at, after CLAIM_COLUMNS (a claim reads it)
COL_DUE_AT = len(CLAIM_COLUMNS)
#: positions in a checkpoint row
STEP_COL_RUN_ID = STEP.index("run_id")
STEP_COL_STATUS = STEP.index("status")


def claim_order(row: Sequence[Any]) -> tuple[int, int, str]:
    """A claim candidate's place in the claim's order: highest priority, then first due."""
    return -row[COL_PRIORITY], row[COL_DUE_AT], row[COL_ID]


def new_lease_token(worker: str) -> str:
    """A lease token only has to differ from every other lease's (it fences, it is no
    secret): the worker id and 48 random bits, drawn without a system call."""
    return f"{worker}.{random.getrandbits(48):012x}"


def run_from_row(row: Sequence[Any]) -> RunInfo:
    """The run a row of ``RUN_COLUMNS`` (or ``CLAIM_COLUMNS``) holds."""
    return RUN.read(row)


def running_from_row(row: Sequence[Any], status: RunStatus, started_ms: int | None) -> RunInfo:
    """The run a row holds, with its status and start given (as a claim leaves them)."""
    return RUN.read(row, status=status, started_at=_instant(started_ms))


def step_from_row(row: Sequence[Any]) -> StepInfo:
    """The checkpoint a row of ``STEP_COLUMNS`` holds."""
    return STEP.read(row)


def inserted_run(run: NewRun) -> RunInfo:
    """The run as ``run_inserts.INSERT_RUN`` stores it (no need to read it back)."""
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
        parent_id=run.parent_id,
    )


def ended_run(
    running: RunInfo,
    status: RunStatus,
    result_json: str | None,
    error: str | None,
    now_ms: int,
    traceback: str | None = None,
) -> RunInfo:
    """The run as ``sql_runs.FINISH_RUN`` leaves it (no need to read it back). Built
    field by field: ``dataclasses.replace`` reads every field by name first (every run's
    end goes through here)."""
    r = running
    return RunInfo(
        id=r.id, workflow=r.workflow, version=r.version, status=status, input=r.input,
        result=from_json(result_json), error=error, attempt=r.attempt, priority=r.priority,
        pool=r.pool, schedule_key=r.schedule_key, scheduled_for=r.scheduled_for,
        created_at=r.created_at, started_at=r.started_at, finished_at=from_ms(now_ms),
        schedule_revision=r.schedule_revision, traceback=traceback,
    )  # fmt: skip


#: how a lease token ends after its worker's id: a dot and 12 hex digits
_TOKEN_SUFFIX = 13


def lease_worker(token: str) -> str:
    """The id of the worker a lease token was given to (migration 0014's index)."""
    return token[:-_TOKEN_SUFFIX]


def is_take_over(row: Sequence[Any]) -> bool:
    """Whether claiming the candidate ``row`` takes it over from a lost worker: it is
    still ``running`` under a token, so its lease expired. A released lease (graceful
    shutdown) has no token and a run handed back (sleep, retry) is not running."""
    return row[COL_STATUS] == "running" and row[COL_LEASE_TOKEN] is not None


def count_recoveries(
    row: Sequence[Any], steps: Sequence[Sequence[Any]], *, shared: bool = False
) -> tuple[int, int, int]:
    """What claiming the candidate ``row`` (with its checkpoint rows ``steps``) does to
    its count of lost workers: ``(recoveries, recovery_mark)`` to store, and how many
    workers the run has lost in a row at its current progress.

    A take-over (``is_take_over``) counts the lost worker against the run, unless the
    worker was ``shared``: other runs of it were in flight, and which one's step killed
    it cannot be told, so the loss counts against none (the count is neither raised nor
    cleared; the run then runs alone: ``lost_workers.py``). The mark is the number of
    completed checkpoints, which only grows: a take-over at the mark of the previous one
    made no progress (the same step lost its worker again) and adds one; at another mark
    it is the first loss there. Any other claim stores both as they are.
    """
    recoveries, stored_mark = row[COL_RECOVERIES], row[COL_RECOVERY_MARK]
    mark = sum(1 for step in steps if step[STEP_COL_STATUS] == "completed")
    if is_take_over(row) and not shared:
        recoveries = recoveries + 1 if mark == stored_mark else 1
        stored_mark = mark
    return recoveries, stored_mark, recoveries if mark == stored_mark else 0


#: a run taken under a new lease in a transaction: its candidate row (``CLAIM_COLUMNS``),
#: its lease token, its checkpoint rows (``STEP_COLUMNS``), the workers it lost in a row
#: at its current progress, and whether it must run alone (a suspect)
TakenRun = tuple[Sequence[Any], str, list[Any], int, bool]


def claimed_runs(taken: list[TakenRun], now_ms: int) -> list[ClaimedRun]:
    """The runs taken at ``now_ms``, as their executors get them (built after the commit,
    out of the writer's way)."""
    claimed = []
    for row, token, steps, lost_workers, alone in taken:
        started_ms, attempt_started_ms = row[COL_STARTED_AT], row[COL_ATTEMPT_STARTED_AT]
        claimed.append(
            ClaimedRun(
                # As the claim leaves it: running, started now unless it had started before.
                info=running_from_row(row, RunStatus.RUNNING, started_ms or now_ms),
                lease_token=token,
                steps=[step_from_row(step) for step in steps],
                attempt_started_ms=now_ms if attempt_started_ms is None else attempt_started_ms,
                resumed=started_ms is not None,
                cancel_requested=bool(row[COL_CANCEL_REQUESTED]),
                retry_json=row[COL_RETRY],
                lost_workers=lost_workers,
                alone=alone,
            )
        )
    return claimed
