"""``list_runs`` in SQL: every filter and page read from an index (migration 0004; on
SQLite ascending since 0021, read backwards: a new run goes in at the right edge).

Runs are listed newest first by ``(created_at, id)``; the page after a run is the keyset
``(created_at, id) < (its created_at, its id)``, both read first in the same transaction
(a row comparison both planners turn into an index range). Each combination of filters
is written for one index, so that what it reads does not grow with the history kept:

======================================  ===============================================
filters                                 index
======================================  ===============================================
none                                    ``tickwork_runs_created``
workflow                                ``tickwork_runs_workflow``
schedule (+ workflow)                   ``tickwork_runs_schedule``
parent (+ any but an unfinished status)  ``tickwork_runs_parent`` (migration 0024)
ended status                            ``tickwork_runs_status_ended``
ended status, workflow                  ``tickwork_runs_workflow_status_ended``
ended status, schedule (+ workflow)     ``tickwork_runs_schedule_status_ended``
unfinished status (+ any)               ``tickwork_queue``, then sorted
======================================  ===============================================

All but the last return their rows in order and stop at the limit. Unfinished runs have
no list index of their own (it would be written at every change of status); the queue
(migration 0011) holds only the runs in flight, so the sort is of those, whatever the
history: their ids are read there, their rows by id.

A filter on an ended status repeats the indexes' WHERE word for word (``statuses.py``):
SQLite uses a partial index only then, and PostgreSQL's generic plan of a prepared
statement could not otherwise tell that a parameter is an ended status. What the chosen
index does not order or hold is written behind the dialect's ``no_index`` (SQLite's
unary ``+``), so that SQLite, which has no statistics, cannot pick another index for it.
On PostgreSQL, which plans each list for its values (``Database.plan_for_values``), the
index's first column is written as a range of one value and ordered on (``LEADING``):
from its statistics it once read the newest runs of a workflow that was common through
``tickwork_runs_created``, which walks every newer run of other workflows when that one
stopped long ago (a million runs: 0.1 -> 63 ms). SQLite has no statistics to mislead it.
"""

from __future__ import annotations

from typing import Any

from .._values.models import ACTIVE_STATUSES, RunStatus
from .run_rows import RUN_COLUMNS
from .statuses import ENDED

__all__ = ["LIST_RUNS", "SELECT_KEYSET", "list_runs_query"]

# Runs matching some filters, newest first; {where} is "WHERE ..." or nothing, {hide} is
# "" or the dialect's no_index when the order is not the index's.
LIST_RUNS = f"""
SELECT {", ".join(RUN_COLUMNS)} FROM tickwork_runs {{where}}
ORDER BY {{leading}}{{hide}}created_at DESC, {{hide}}id DESC LIMIT ?
"""
# The chosen index's first column, equal to one value, written as a range and put first
# in the order: a range is no constant to PostgreSQL, so the order (column, created_at,
# id) is one only that index gives, and no statistics can make it walk
# tickwork_runs_created instead, past every newer run of other values (a workflow or a
# schedule common long ago and gone since; failures of an old incident).
LEADING = "{column} >= ? AND {column} <= ?"
# The keyset of the run a page goes on after: its place in the newest-first order.
SELECT_KEYSET = "SELECT created_at, id FROM tickwork_runs WHERE id = ?"
# Runs listed after that keyset (a page stable while new runs arrive); {hide} as above.
OLDER_THAN = "({hide}created_at, id) < (?, ?)"
# Runs in flight with some status (and more): {where} filters the queue.
IN_QUEUE = "id IN (SELECT id FROM tickwork_queue WHERE {where})"


def list_runs_query(
    *,
    workflow: str | None,
    status: RunStatus | None,
    schedule_key: str | None,
    after: tuple[int, str] | None,
    no_index: str,
    ranged: bool,
    parent_id: str | None = None,
) -> tuple[str, list[Any]]:
    """``LIST_RUNS`` for these filters and the keyset ``after`` (None: the first page),
    with its parameters but the limit; ``no_index`` is ``Database.no_index``, ``ranged``
    whether the planner plans for values from statistics (PostgreSQL: ``LEADING``)."""
    if status is not None and status in ACTIVE_STATUSES:
        return _in_flight(workflow, status, schedule_key, after, no_index, parent_id)
    # Which filters the index holds: a parent's children and a schedule's runs are fewer
    # than a workflow's.
    by_parent = parent_id is not None
    by_schedule = schedule_key is not None and not by_parent
    by_workflow = workflow is not None and not by_schedule and not by_parent
    leading = ""
    if by_parent:
        leading = "parent_id"  # the only index that holds it: first, whatever the planner
    elif ranged and (by_schedule or by_workflow or status is not None):
        leading = "schedule_key" if by_schedule else "workflow" if by_workflow else "status"
    clauses: list[str] = []
    params: list[Any] = []
    for column, value, hide in (
        ("parent_id", parent_id, ""),
        ("status", None if status is None else str(status), no_index if by_parent else ""),
        ("schedule_key", schedule_key, no_index if by_parent else ""),
        ("workflow", workflow, "" if by_workflow else no_index),
    ):
        if value is None:
            continue
        if column == leading:
            clauses.append(LEADING.format(column=column))
            params += [value, value]
        else:
            clauses.append(f"{hide}{column} = ?")
            params.append(value)
        if column == "status":
            clauses.append(ENDED)
    if after is not None:
        clauses.append(OLDER_THAN.format(hide=""))
        params += after
    where = f"WHERE {' AND '.join(clauses)}" if clauses else ""
    order = f"{leading}, " if leading else ""
    return LIST_RUNS.format(where=where, hide="", leading=order), params


def _in_flight(
    workflow: str | None,
    status: RunStatus,
    schedule_key: str | None,
    after: tuple[int, str] | None,
    no_index: str,
    parent_id: str | None,
) -> tuple[str, list[Any]]:
    """``list_runs_query`` for an unfinished status: the runs' ids from the queue."""
    queued = ["status = ?"]
    params: list[Any] = [str(status)]
    for column, value in (("schedule_key", schedule_key), ("workflow", workflow)):
        if value is not None:
            queued.append(f"{column} = ?")
            params.append(value)
    clauses = [IN_QUEUE.format(where=" AND ".join(queued))]
    if parent_id is not None:
        clauses.append(f"{no_index}parent_id = ?")
        params.append(parent_id)
    if after is not None:
        clauses.append(OLDER_THAN.format(hide=no_index))
        params += after
    where = f"WHERE {' AND '.join(clauses)}"
    return LIST_RUNS.format(where=where, hide=no_index, leading=""), params
