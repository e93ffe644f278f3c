"""Schedule rows, read and written by column name.

The schedules table is declared once, as ``Columns`` of its records (``columns.py``):
``DEFINITION`` (a ``ScheduleRecord``), ``FIRING`` (a ``FiringState``) and ``STORED`` (a
``StoredSchedule``: both, with the revision and anchor). Reads and writes take their
column lists and values from them, so that a new column is one field. The listed and
history rows are joins and summaries; their positions are looked up by name once.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import fields
from datetime import timedelta
from typing import Any

from .._values.clock import from_ms
from .._values.ids import from_json
from .._values.models import (
    Decision,
    DstGap,
    DstRepeat,
    HistoryEntry,
    OnHoliday,
    Overlap,
    RunStatus,
    ScheduleInfo,
    ScheduleState,
)
from .._values.records import DueSchedule, FiringState, ScheduleRecord, StoredSchedule
from .columns import Columns

__all__ = [
    "CHANGEABLE",
    "DEFINITION",
    "FIRING",
    "HISTORY",
    "HISTORY_COLUMNS",
    "INFO_COLUMNS",
    "SELECT_STORED",
    "STORED",
    "STORED_COLUMNS",
    "due_from_row",
    "history_from_row",
    "info_from_row",
    "key_from_row",
    "stored_from_row",
    "waiting_from_row",
]


def _instant(ms: int | None) -> Any:
    return None if ms is None else from_ms(ms)


#: a schedule's definition (its calendar's days are the calendar's rows, not its own)
DEFINITION: Columns[ScheduleRecord] = Columns(
    ScheduleRecord,
    column={"input_json": "input", "retry_json": "retry", "start_ms": "start_at",
            "end_ms": "end_at"},
    read={"overlap": Overlap, "dst_gap": DstGap, "dst_repeat": DstRepeat,
          "on_holiday": OnHoliday},
    write={"overlap": Overlap, "dst_gap": DstGap, "dst_repeat": DstRepeat,
           "on_holiday": OnHoliday},  # each member's value (tests still pass text)
    fields=[field.name for field in fields(ScheduleRecord) if field.name != "business_days"],
)  # fmt: skip
#: what replacing a definition writes: all of it but its key
CHANGEABLE = DEFINITION.without("key")
#: where a schedule stands
FIRING: Columns[FiringState] = Columns(
    FiringState,
    column={"next_fire_ms": "next_fire_at", "due_ms": "due_at", "buffered_ms": "buffered_for",
            "paused_ms": "paused_at", "resumed_ms": "resumed_at"},
    read={"state": ScheduleState},
    write={"state": ScheduleState},
)  # fmt: skip
#: a schedule's row: its definition, revision, interval anchor and firing state, and the
#: runs ``max_runs`` counted (migration 0018)
STORED: Columns[StoredSchedule] = Columns(
    StoredSchedule,
    column={"anchor_ms": "anchor_at"},
    parts={"record": DEFINITION, "firing": FIRING},
)
#: a stored schedule as firing and state changes read it (``waiting``: how many
#: occurrences wait in its buffer_all queue, migration 0009)
STORED_COLUMNS = (*STORED.names, "waiting")
#: one schedule's row (a write appends the dialect's row lock, so that its
#: read-modify-write of the row cannot race another's)
SELECT_STORED = f"SELECT {', '.join(STORED_COLUMNS)} FROM tickwork_schedules WHERE key = ?"
#: a state change's note and instant (never changed: its creation), and the option that
#: pauses it after failures (migration 0010)
NOTE_COLUMNS = (
    "s.note", "COALESCE(s.state_changed_at, s.created_at)", "s.pause_after_failures",
)  # fmt: skip
#: the DST policy, the calendar and its holiday policy (migration 0017)
POLICY_COLUMNS = ("s.dst_gap", "s.dst_repeat", "s.calendar", "s.on_holiday")
#: the run limit, its count, and the deadline (migration 0018)
LIMIT_COLUMNS = ("s.max_runs", "s.runs_counted", "s.deadline_ms")
#: a schedule as listed (``s``), with its last run's status (``r``)
INFO_COLUMNS = (
    "s.key", "s.workflow", "s.input", "s.cron", "s.every_ms", "s.timezone", "s.overlap",
    "s.catchup", "s.jitter_ms", "s.pool", "s.priority", "s.state", "s.revision",
    "s.next_fire_at", "s.last_fire_at", "s.last_run_id", "r.status", "s.created_at",
    "s.updated_at", *NOTE_COLUMNS, *POLICY_COLUMNS, *LIMIT_COLUMNS,
)  # fmt: skip
#: one decision of a schedule's history
HISTORY: Columns[HistoryEntry] = Columns(
    HistoryEntry,
    read={"occurrence": from_ms, "decision": Decision, "decided_at": from_ms,
          "last_occurrence": _instant},
)  # fmt: skip
HISTORY_COLUMNS = HISTORY.names


def _at(columns: tuple[str, ...], *names: str) -> tuple[int, ...]:
    """The positions of ``names`` in a row of ``columns`` (ValueError if one is missing)."""
    return tuple(columns.index(name) for name in names)


_KEY, _WAITING = STORED_COLUMNS.index("key"), STORED_COLUMNS.index("waiting")
# Positions in a row of INFO_COLUMNS.
(
    _I_KEY, _I_WORKFLOW, _I_INPUT, _I_CRON, _I_EVERY_MS, _I_TIMEZONE, _I_OVERLAP,
    _I_CATCHUP, _I_JITTER_MS, _I_POOL, _I_PRIORITY, _I_STATE, _I_REVISION, _I_NEXT_FIRE_AT,
    _I_LAST_FIRE_AT, _I_LAST_RUN_ID, _I_LAST_RUN_STATUS, _I_CREATED_AT, _I_UPDATED_AT,
) = _at(
    INFO_COLUMNS, "s.key", "s.workflow", "s.input", "s.cron", "s.every_ms", "s.timezone",
    "s.overlap", "s.catchup", "s.jitter_ms", "s.pool", "s.priority", "s.state", "s.revision",
    "s.next_fire_at", "s.last_fire_at", "s.last_run_id", "r.status", "s.created_at",
    "s.updated_at",
)  # fmt: skip
(_I_NOTE, _I_STATE_CHANGED_AT, _I_PAUSE_AFTER) = _at(INFO_COLUMNS, *NOTE_COLUMNS)
(_I_DST_GAP, _I_DST_REPEAT, _I_CALENDAR, _I_ON_HOLIDAY) = _at(INFO_COLUMNS, *POLICY_COLUMNS)
(_I_MAX_RUNS, _I_RUNS_COUNTED, _I_DEADLINE_MS) = _at(INFO_COLUMNS, *LIMIT_COLUMNS)


def waiting_from_row(row: Sequence[Any]) -> int:
    """How many occurrences wait in the buffer_all queue of a row of ``STORED_COLUMNS``."""
    waiting: int = row[_WAITING]
    return waiting


def key_from_row(row: Sequence[Any]) -> str:
    """The key of a row of ``STORED_COLUMNS``."""
    key: str = row[_KEY]
    return key


def due_from_row(
    row: Sequence[Any], active_run_ids: tuple[str, ...], queued_ms: tuple[int, ...] = ()
) -> DueSchedule:
    """The schedule a row of ``STORED_COLUMNS`` holds, as the planner sees it, with its
    unfinished runs and the oldest occurrences of its buffer_all queue."""
    return DueSchedule(stored_from_row(row), active_run_ids, row[_WAITING], queued_ms)


def stored_from_row(row: Sequence[Any]) -> StoredSchedule:
    """The schedule a row of ``STORED_COLUMNS`` holds, as ``_policy`` reads it."""
    return STORED.read(row)


def info_from_row(row: Sequence[Any]) -> ScheduleInfo:
    """The schedule a row of ``INFO_COLUMNS`` holds."""
    every_ms, jitter_ms = row[_I_EVERY_MS], row[_I_JITTER_MS]
    catchup, last_status = row[_I_CATCHUP], row[_I_LAST_RUN_STATUS]
    max_runs, deadline_ms = row[_I_MAX_RUNS], row[_I_DEADLINE_MS]
    return ScheduleInfo(
        key=row[_I_KEY],
        workflow=row[_I_WORKFLOW],
        input=from_json(row[_I_INPUT]),
        cron=row[_I_CRON],
        every=None if every_ms is None else timedelta(milliseconds=every_ms),
        timezone=row[_I_TIMEZONE],
        overlap=Overlap(row[_I_OVERLAP]),
        catchup="all" if catchup is None else catchup,
        jitter=None if jitter_ms is None else timedelta(milliseconds=jitter_ms),
        pool=row[_I_POOL],
        priority=row[_I_PRIORITY],
        state=ScheduleState(row[_I_STATE]),
        revision=row[_I_REVISION],
        next_fire_at=_instant(row[_I_NEXT_FIRE_AT]),
        last_fire_at=_instant(row[_I_LAST_FIRE_AT]),
        last_run_id=row[_I_LAST_RUN_ID],
        last_run_status=None if last_status is None else RunStatus(last_status),
        created_at=from_ms(row[_I_CREATED_AT]),
        updated_at=from_ms(row[_I_UPDATED_AT]),
        note=row[_I_NOTE],
        state_changed_at=from_ms(row[_I_STATE_CHANGED_AT]),
        pause_after_failures=row[_I_PAUSE_AFTER],
        dst_gap=DstGap(row[_I_DST_GAP]),
        dst_repeat=DstRepeat(row[_I_DST_REPEAT]),
        calendar=row[_I_CALENDAR],
        on_holiday=OnHoliday(row[_I_ON_HOLIDAY]),
        max_runs=max_runs,
        runs_left=None if max_runs is None else max(0, max_runs - row[_I_RUNS_COUNTED]),
        deadline=None if deadline_ms is None else timedelta(milliseconds=deadline_ms),
    )


def history_from_row(row: Sequence[Any]) -> HistoryEntry:
    """The decision a row of ``HISTORY_COLUMNS`` holds."""
    return HISTORY.read(row)
