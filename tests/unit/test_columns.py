"""The schedules table's columns helper: rows read into records and records written as
values by field name, so that a column cannot be read or written at another's place."""

from __future__ import annotations

from tickwork._models import ScheduleState
from tickwork._records import FiringState, ScheduleRecord, StoredSchedule
from tickwork._store.schedule_rows import (
    CHANGEABLE,
    FIRING,
    STORED,
    STORED_COLUMNS,
    stored_from_row,
)

RECORD = ScheduleRecord(
    key="nightly", workflow="report", version="v1", input_json='{"a": 1}', cron="0 3 * * *",
    every_ms=None, timezone="Europe/London", overlap="skip", catchup=3, catchup_window_ms=60_000,
    jitter_ms=500, pool="default", priority=2, retry_json=None, start_ms=1, end_ms=None,
    definition="{}", pause_after_failures=4,
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
    assert by_column["state"] == "paused"  # the enum's stored text, not the enum
    assert type(by_column["state"]) is str
    assert (by_column["paused_at"], by_column["resumed_at"]) == (8, 9)
    assert by_column["pause_after_failures"] == 4


def test_a_replaced_definition_writes_everything_but_its_key() -> None:
    assert "key" not in CHANGEABLE.names
    written = dict(zip(CHANGEABLE.names, CHANGEABLE.values(RECORD), strict=True))
    assert written["workflow"] == "report" and written["catchup_window_ms"] == 60_000
    assert FIRING.assign().startswith("state = ?, next_fire_at = ?")
