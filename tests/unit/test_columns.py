"""The tables' columns helpers: rows read into records and records written as
values by field name, so that a column cannot be read or written at another's place."""

from __future__ import annotations

import pytest

from tickwork._store.columns import Columns
from tickwork._store.run_rows import (
    NEW_RUN,
    QUEUED_RUN,
    RUN_COLUMNS,
    inserted_run,
    run_from_row,
)
from tickwork._store.schedule_rows import (
    CHANGEABLE,
    FIRING,
    HISTORY_COLUMNS,
    STORED,
    STORED_COLUMNS,
    history_from_row,
    stored_from_row,
)
from tickwork._values.clock import from_ms
from tickwork._values.models import Decision, Overlap, ScheduleState
from tickwork._values.records import FiringState, NewRun, ScheduleRecord, StoredSchedule

RECORD = ScheduleRecord(
    key="nightly", workflow="report", version="v1", input_json='{"a": 1}',
    cron="0 3 * * *", every_ms=None, timezone="Europe/London", overlap=Overlap.SKIP,
    catchup=3, catchup_window_ms=60_000, jitter_ms=500, pool="default", priority=2,
    retry_json=None, start_ms=1, end_ms=None, definition="{}", pause_after_failures=4,
)  # fmt: skip
FIRING_STATE = FiringState(ScheduleState.PAUSED, 10, None, 7, 8, 9)
STORED_ROW = StoredSchedule(RECORD, 3, 1_000, FIRING_STATE)


def test_a_stored_row_reads_back_into_the_record_it_was_written_from() -> None:
    row = (*STORED.values(STORED_ROW), 5)  # the queue's "waiting" follows the row
    assert len(row) == len(STORED_COLUMNS)
    assert stored_from_row(row) == STORED_ROW


def test_each_value_is_written_under_its_own_columns_name() -> None:
    by_column = dict(zip(STORED.names, STORED.values(STORED_ROW), strict=True))
    assert by_column["input"] == '{"a": 1}'
    assert by_column["start_at"] == 1
    assert by_column["anchor_at"] == 1_000
    assert by_column["state"] == "paused"  # the enums' stored text, not the enums
    assert type(by_column["state"]) is str
    assert (by_column["overlap"], type(by_column["overlap"])) == ("skip", str)
    assert (by_column["paused_at"], by_column["resumed_at"]) == (8, 9)
    assert by_column["pause_after_failures"] == 4


def test_a_replaced_definition_writes_everything_but_its_key() -> None:
    assert "key" not in CHANGEABLE.names
    written = dict(zip(CHANGEABLE.names, CHANGEABLE.values(RECORD), strict=True))
    assert written["workflow"] == "report" and written["catchup_window_ms"] == 60_000
    assert FIRING.assign().startswith("state = ?, next_fire_at = ?")


def test_a_history_row_reads_into_its_entry_by_column_name() -> None:
    stored = {"key": "nightly", "occurrence": 60_000, "decision": "skipped_overlap",
              "reason": "busy", "run_id": None, "revision": 2, "decided_at": 61_000,
              "count": 3, "last_occurrence": 180_000}  # fmt: skip
    entry = history_from_row(tuple(stored[name] for name in HISTORY_COLUMNS))
    assert entry.decision is Decision.SKIPPED_OVERLAP
    assert (entry.occurrence, entry.last_occurrence) == (from_ms(60_000), from_ms(180_000))
    assert (entry.count, entry.revision, entry.reason) == (3, 2, "busy")


def test_a_new_run_is_written_under_its_columns_names_and_read_back_as_stored() -> None:
    new = NewRun(
        id="r1", workflow="report", version="v1", input_json='{"a": 1}', priority=2,
        pool="default", created_ms=5_000, available_ms=6_000, schedule_key="nightly",
        schedule_revision=3, scheduled_for_ms=4_000, retry_json=None,
    )  # fmt: skip
    written = dict(zip(NEW_RUN.names, NEW_RUN.values(new), strict=True))
    assert written["input"] == '{"a": 1}' and written["created_at"] == 5_000
    assert written["scheduled_for"] == 4_000 and written["schedule_revision"] == 3
    queued = dict(zip(QUEUED_RUN.names, QUEUED_RUN.values(new), strict=True))
    assert queued["available_at"] == 6_000 and queued["id"] == "r1"
    row = {**written, "status": "pending", "result": None, "error": None, "attempt": 1,
           "started_at": None, "finished_at": None, "traceback": None}  # fmt: skip
    run = run_from_row(tuple(row[name] for name in RUN_COLUMNS))
    assert run == inserted_run(new)


def test_columns_leaving_out_a_field_before_the_last_refuse_to_read() -> None:
    """A row is read into its record by position: leaving out a middle field would hand
    the next column's value to it, so such columns are for writing only."""
    without_key = Columns(FiringState, fields=["state", "next_fire_ms", "due_ms"])
    assert without_key.read(("active", 1, 2)) == FiringState(ScheduleState.ACTIVE, 1, 2)
    middle_left_out = Columns(FiringState, fields=["state", "due_ms"])
    with pytest.raises(TypeError, match="write-only"):
        middle_left_out.read(("active", 2))
