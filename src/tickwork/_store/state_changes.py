"""A schedule's state changes in SQL: asked for (pause, resume, deactivate, activate, each
with an optional note) or made by the schedule itself (``pause_after_failures``), and the
count of failed runs in a row that the latter watches.

The rules are ``_policy``'s (``transition``, ``auto_pauses``, ``auto_pause_note``); here
they are read and written inside the caller's transaction. Every state change keeps its
note (or none) and its instant on the row, and starts the count of failures afresh.
Every change is recorded in the history, its note as its reason (empty without one; an
auto-pause's names the last failed run and its error; a registration's ``paused=`` says
so).

The count is kept by the statement a run's end already spends on its schedule
(``end_run_of_schedule``), with the wake-up of an occurrence buffered behind the run: a
completed run resets the count and wakes in one key seek that writes nothing unless a
streak just ended or something is buffered; a failed one adds one, then wakes. They run
before the run's own row is written, so that an ending locks the schedule's row before
the run's, in the order firing does (it holds the schedule and may ask the run to stop:
``cancel_previous``); the other order could deadlock on PostgreSQL.
"""

from __future__ import annotations

from .._rules import policy as _policy
from .._values.clock import from_ms
from .._values.models import Decision, HistoryEntry, RunStatus, ScheduleAction, ScheduleState
from .._values.records import FiringState, StoredSchedule
from .schedule_rows import FIRING, SELECT_STORED, stored_from_row
from .transaction import Transaction

__all__ = ["WAKE_BUFFERED", "change_state", "end_run_of_schedule", "mark_state_changed"]

# Write a state change (from _policy.transition): the firing state, the note and when;
# failures in a row count afresh.
CHANGE_STATE = f"""
UPDATE tickwork_schedules SET {FIRING.assign()}, note = ?,
    state_changed_at = ?, failed_in_row = 0, updated_at = ?
WHERE key = ?
"""
# A state change written by another statement (registering with paused=): no note.
MARK_STATE_CHANGED = """
UPDATE tickwork_schedules SET note = NULL, state_changed_at = ?, failed_in_row = 0
WHERE key = ?
"""
# A run of the schedule ends: its buffered occurrence, if any, is due now (the buffered
# case of _policy.due_at, done without reading the schedule on the hot path). It writes
# the row even when the schedule is due already, to lock it: a firing pass that took the
# row first read the run as unfinished and may have moved due_at past the buffered
# occurrence, so this waits for that pass and then pulls due_at back; a pass coming later
# skips the locked row (PostgreSQL) and the next one sees the run ended.
WAKE_BUFFERED = """
UPDATE tickwork_schedules SET due_at = CASE WHEN due_at IS NULL OR due_at > ? THEN ?
    ELSE due_at END
WHERE key = ? AND buffered_for IS NOT NULL AND state = 'active'
"""
# A run of the schedule completed: a streak of failures ends, and the wake-up above, in
# one seek by key that writes (and, on PostgreSQL, locks) nothing unless either applies.
END_COMPLETED = """
UPDATE tickwork_schedules SET failed_in_row = 0,
    due_at = CASE WHEN buffered_for IS NOT NULL AND state = 'active'
        AND (due_at IS NULL OR due_at > ?) THEN ? ELSE due_at END
WHERE key = ? AND (failed_in_row <> 0 OR (buffered_for IS NOT NULL AND state = 'active'))
"""
# A run of the schedule failed for good: one more in a row, and what auto_pauses needs.
COUNT_FAILURE = """
UPDATE tickwork_schedules SET failed_in_row = failed_in_row + 1 WHERE key = ?
RETURNING failed_in_row, pause_after_failures, state
"""
# A state change in the history: at the instant it was made, the note as its reason.
INSERT_STATE_CHANGE = """
INSERT INTO tickwork_schedule_history (key, occurrence, last_occurrence, decision, reason,
    run_id, revision, count, decided_at)
VALUES (?, ?, NULL, ?, ?, ?, ?, 1, ?)
"""


def change_state(
    tx: Transaction,
    stored: StoredSchedule,
    firing: FiringState,
    *,
    now_ms: int,
    note: str | None,
    decision: Decision,
    run_id: str | None = None,
) -> HistoryEntry:
    """Write ``firing`` (a changed state) with ``note`` and record it in the history (the
    note as its reason, empty without one). Returns the entry recorded."""
    key = stored.record.key
    reason = note or ""
    tx.execute(CHANGE_STATE, *FIRING.values(firing), note, now_ms, now_ms, key)
    tx.execute(
        INSERT_STATE_CHANGE, key, now_ms, decision.value, reason, run_id, stored.revision, now_ms
    )
    return HistoryEntry(
        key=key,
        occurrence=from_ms(now_ms),
        decision=decision,
        reason=reason,
        run_id=run_id,
        revision=stored.revision,
        decided_at=from_ms(now_ms),
    )


def mark_state_changed(
    tx: Transaction, key: str, state: ScheduleState, revision: int, now_ms: int
) -> None:
    """Note that the state changed to ``state`` (by a registration's ``paused=``): no
    note, now; recorded in the history as a pause or a resume."""
    tx.execute(MARK_STATE_CHANGED, now_ms, key)
    paused = state is ScheduleState.PAUSED
    decision = Decision.PAUSED if paused else Decision.RESUMED
    reason = f"registered with paused={paused}"
    tx.execute(INSERT_STATE_CHANGE, key, now_ms, decision.value, reason, None, revision, now_ms)


def end_run_of_schedule(
    tx: Transaction, key: str, *, status: RunStatus, run_id: str, error: str | None, now_ms: int
) -> tuple[HistoryEntry | None, bool]:
    """A run of schedule ``key`` ended as ``status``, before the run's own row is written:
    count it (pausing the schedule when ``pause_after_failures`` is reached) and wake the
    occurrence buffered behind it. Returns the auto-pause's history entry, if it paused
    (the caller logs it after the commit), and whether the row was written (the caller
    tells listening workers: a buffered occurrence may be due)."""
    if status is RunStatus.COMPLETED:  # the common case: one statement
        tx.execute(END_COMPLETED, now_ms, now_ms, key)
        return None, tx.rowcount > 0
    # a cancelled run neither counts nor resets
    paused = _count_failure(tx, key, run_id, error, now_ms) if status is RunStatus.FAILED else None
    tx.execute(WAKE_BUFFERED, now_ms, now_ms, key)  # after a pause: a paused one waits
    return paused, tx.rowcount > 0


def _count_failure(
    tx: Transaction, key: str, run_id: str, error: str | None, now_ms: int
) -> HistoryEntry | None:
    """One more failure in a row; the auto-pause's entry if that pauses the schedule."""
    counted = tx.execute(COUNT_FAILURE, key).fetchone()
    if counted is None:  # the schedule was removed; its runs stay
        return None
    failed_in_row, pause_after, state = counted
    if not _policy.auto_pauses(ScheduleState(state), failed_in_row, pause_after):
        return None
    # locked already: COUNT_FAILURE wrote the row in this transaction
    stored = stored_from_row(tx.execute(SELECT_STORED, key).fetchone())
    paused = _policy.transition(stored, ScheduleAction.PAUSE, now_ms)
    assert paused is not None  # it was active
    note = _policy.auto_pause_note(failed_in_row, run_id, error)
    return change_state(
        tx, stored, paused, now_ms=now_ms, note=note, decision=Decision.AUTO_PAUSED, run_id=run_id
    )
