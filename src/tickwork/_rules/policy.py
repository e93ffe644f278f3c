"""Pure schedule rules outside firing: where a registration places a schedule, how its
state changes, and which occurrence a trigger starts.

Beside ``_planning`` (which decides what a firing pass starts) and like it, no I/O and no
clock: ``now_ms`` is an argument and every input is a plain value read by the store. The
store reads a row, calls a function here and writes what it returns, in one transaction.

One rule stays in SQL, on purpose: when a run of a schedule ends, a buffered occurrence's
wake-up is pulled to now (``WAKE_BUFFERED`` in ``_store/state_changes.py``), the buffered
case of ``due_at`` below done by a conditional UPDATE on the hot path of finishing a run,
without reading the schedule first. So is the count of failed runs in a row that
``pause_after_failures`` watches, in the same place: a completed run resets it (in the
same statement as the wake-up), a failed one adds one; ``auto_pauses`` below decides from
the count.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from .._values.checks import MAX_NOTE
from .._values.clock import LAST_MS
from .._values.logs import elapsed, instant
from .._values.models import (
    ACTIVE_STATUSES,
    Decision,
    OnHoliday,
    RunStatus,
    ScheduleAction,
    ScheduleState,
)
from .._values.records import FiringState, ScheduleRecord, StoredSchedule
from ..errors import ConfigError
from .occurrences import SCAN_CAP, holiday_rule, next_decided, occurrences_of

__all__ = [
    "RETRY_BROKEN_MS",
    "STATE_DECISIONS",
    "RegistrationPlan",
    "auto_pause_note",
    "auto_pauses",
    "bounded_occurrence",
    "current_occurrence",
    "deadline_reason",
    "due_at",
    "first_occurrence_after",
    "max_runs_note",
    "placement_on_register",
    "registration",
    "spent",
    "transition",
    "wake_at",
]

#: how a state change with a note is recorded in the history (the note is its reason)
STATE_DECISIONS = {
    ScheduleAction.PAUSE: Decision.PAUSED,
    ScheduleAction.RESUME: Decision.RESUMED,
    ScheduleAction.DEACTIVATE: Decision.DEACTIVATED,
    ScheduleAction.ACTIVATE: Decision.ACTIVATED,
}
#: how long a schedule whose plan could not be made waits before it is looked at again
RETRY_BROKEN_MS = 60_000
#: the last instant a datetime can hold, in epoch milliseconds
_LAST_MS = LAST_MS

_ACTIVE, _PAUSED, _INACTIVE = ScheduleState.ACTIVE, ScheduleState.PAUSED, ScheduleState.INACTIVE


# -- occurrences -----------------------------------------------------------------------------


def bounded_occurrence(record: ScheduleRecord, occurrence: int | None) -> int | None:
    """``occurrence``, or None when there is none or it is past ``end_at``.

    Raises ``ConfigError`` past year 9999: stored, it could never be read back as a
    datetime.
    """
    if occurrence is None or (record.end_ms is not None and occurrence > record.end_ms):
        return None
    if occurrence > _LAST_MS:
        raise ConfigError(f"Schedule {record.key!r}: its next occurrence passes year 9999")
    return occurrence


def first_occurrence_after(record: ScheduleRecord, anchor_ms: int, now_ms: int) -> int | None:
    """The first occurrence strictly after now, at or after ``start_at``, before ``end_at``.

    Never at registration: an interval's is ``anchor + every`` at the earliest.
    """
    after = now_ms
    if record.start_ms is not None:
        after = max(now_ms, record.start_ms - 1)
    occurrences = occurrences_of(record, anchor_ms)
    first = next_decided(occurrences, after)
    rule = holiday_rule(record)
    if rule is not None and rule.policy is OnHoliday.PREVIOUS:
        # Never at registration: an occurrence whose run moved to a previous business day
        # that has passed already came due before the schedule did.
        for _ in range(SCAN_CAP):
            if first is None or occurrences.next_after(first - 1) != first:
                break  # none, or one dst_gap="skip" drops: recorded when it passes
            decided = rule.decide(first)
            if decided is None or decided[0] is None or decided[0] > now_ms:
                break
            first = next_decided(occurrences, first)
    return bounded_occurrence(record, first)


def current_occurrence(record: ScheduleRecord, anchor_ms: int, now_ms: int) -> int:
    """The occurrence a trigger starts: the latest at or before now (and ``end_at``).

    Before an interval's first occurrence its anchor is current; before ``start_at``
    nothing has occurred, so now itself stands in. With ``on_holiday="skip"`` an
    occurrence its calendar skips is no occurrence: the one before it is current.
    """
    latest = now_ms if record.end_ms is None else min(now_ms, record.end_ms)
    occurrences = occurrences_of(record, anchor_ms)
    occurrence = occurrences.latest_at_or_before(latest)
    rule = holiday_rule(record)
    if rule is not None and rule.policy is OnHoliday.SKIP:
        for _ in range(SCAN_CAP):
            if occurrence is None or rule.decide(occurrence) is None:
                break
            # the whole day is skipped: step back a day, not an occurrence at a time
            occurrence = occurrences.latest_at_or_before(rule.day_start(occurrence) - 1)
    if occurrence is None and record.every_ms is not None and anchor_ms <= latest:
        occurrence = anchor_ms
    if occurrence is None or (record.start_ms is not None and occurrence < record.start_ms):
        occurrence = now_ms
    return occurrence


def wake_at(record: ScheduleRecord, anchor_ms: int, next_fire_ms: int | None) -> int | None:
    """When a schedule must be looked at for ``next_fire_ms``: then, or earlier when a
    later occurrence moves to the previous business day before it (``HolidayRule.wake``)."""
    rule = holiday_rule(record)
    if rule is None or next_fire_ms is None:
        return next_fire_ms
    return min(next_fire_ms, rule.wake(occurrences_of(record, anchor_ms), next_fire_ms))


# -- state -----------------------------------------------------------------------------------


def due_at(
    state: ScheduleState, next_fire_ms: int | None, buffered_ms: int | None, now_ms: int
) -> int | None:
    """When a worker should look at a schedule next: never unless active; at its next
    occurrence; at once when an occurrence is buffered (its earlier run may have ended)."""
    if state is not _ACTIVE:
        return None
    if buffered_ms is None:
        return next_fire_ms
    return now_ms if next_fire_ms is None else min(next_fire_ms, now_ms)


def transition(stored: StoredSchedule, action: ScheduleAction, now_ms: int) -> FiringState | None:
    """The firing state after ``action``, or None when nothing changes (the schedule is
    already so).

    ``resume`` keeps the next occurrence, so occurrences missed meanwhile go to catch-up,
    and keeps the pause's start and end until they are decided (a pause that follows an
    undecided one keeps the earlier start). ``deactivate`` forgets a buffered occurrence
    and the pause; ``activate`` starts afresh from the first occurrence after now, and is
    refused (``ConfigError``) for a schedule that started its ``max_runs``: it would
    only deactivate itself again at its next occurrence.
    """
    firing = stored.firing
    state, next_fire, buffered = firing.state, firing.next_fire_ms, firing.buffered_ms
    paused, resumed = firing.paused_ms, firing.resumed_ms
    if action == ScheduleAction.PAUSE and state is _ACTIVE:
        state, resumed = _PAUSED, None
        paused = now_ms if paused is None else paused
    elif action == ScheduleAction.RESUME and state is _PAUSED:
        state, resumed = _ACTIVE, now_ms
    elif action == ScheduleAction.DEACTIVATE and state is not _INACTIVE:
        state, buffered, paused, resumed = _INACTIVE, None, None, None
    elif action == ScheduleAction.ACTIVATE and state is not _ACTIVE:
        if stored.runs_left == 0:
            raise ConfigError(
                f"Schedule {stored.record.key!r} {max_runs_note(stored.record.max_runs)}: "
                "register it with a higher max_runs (or none) before activating it"
            )
        state, buffered, paused, resumed = _ACTIVE, None, None, None
        next_fire = first_occurrence_after(stored.record, stored.anchor_ms, now_ms)
    else:
        return None
    wake = wake_at(stored.record, stored.anchor_ms, next_fire)
    due = due_at(state, wake, buffered, now_ms)
    return FiringState(state, next_fire, due, buffered, paused, resumed)


# -- pause_after_failures --------------------------------------------------------------------


def auto_pauses(state: ScheduleState, failed_in_row: int, pause_after: int | None) -> bool:
    """Whether a schedule pauses itself now that ``failed_in_row`` of its runs in a row
    ended failed: only an active one with ``pause_after_failures`` set, once reached."""
    return state is _ACTIVE and pause_after is not None and failed_in_row >= pause_after


def auto_pause_note(failed_in_row: int, run_id: str, error: str | None) -> str:
    """The note an auto-pause leaves: how many runs failed, the last of them and its error
    (on one line, cut to fit a note)."""
    runs = "1 failed run" if failed_in_row == 1 else f"{failed_in_row} failed runs in a row"
    head = f"paused after {runs}; the last, {run_id}, failed: "
    text = " ".join((error or "no error recorded").split())  # one line: no control chars
    room = MAX_NOTE - len(head)
    if len(text) > room:
        text = text[: max(0, room - 3)] + "..."
    return (head + text)[:MAX_NOTE]


# -- max_runs ------------------------------------------------------------------------------


def max_runs_note(max_runs: int | None) -> str:
    """The note a schedule that started its ``max_runs`` deactivates itself with."""
    runs = "run" if max_runs == 1 else "runs"
    return f"started its {max_runs} {runs} (max_runs={max_runs})"


def spent(stored: StoredSchedule, now_ms: int) -> FiringState | None:
    """The firing state of a schedule that started its ``max_runs``, deactivated (as
    ``deactivate`` leaves it); None when it has runs left, no limit, or is inactive."""
    if stored.runs_left != 0:
        return None
    return transition(stored, ScheduleAction.DEACTIVATE, now_ms)


# -- deadline ----------------------------------------------------------------------------


def deadline_reason(
    run_id: str, status: RunStatus, finished_ms: int | None, deadline_ms: int, now_ms: int
) -> str | None:
    """Why the run missed its deadline (``deadline_ms``, an instant), seen at ``now_ms``;
    None when it did not: it completed by then, or the deadline has not passed, or it was
    cancelled (a person, or ``overlap="cancel_previous"``, decided it should not complete).
    A run that failed did not complete, whenever it ended."""
    if status is RunStatus.CANCELLED:
        return None
    if status is RunStatus.COMPLETED and finished_ms is not None and finished_ms <= deadline_ms:
        return None
    if now_ms < deadline_ms and status is not RunStatus.COMPLETED:
        return None
    if status is RunStatus.COMPLETED and finished_ms is not None:
        how = f"completed {elapsed(finished_ms - deadline_ms)} late"
    elif status in ACTIVE_STATUSES:
        how = f"still {status.value} {elapsed(now_ms - deadline_ms)} after it"
    else:
        how = f"ended {status.value}"
    return f"run {run_id} had not completed by its deadline {instant(deadline_ms)}: {how}"


# -- registration ----------------------------------------------------------------------------


def placement_on_register(
    record: ScheduleRecord, stored: StoredSchedule | None, now_ms: int
) -> tuple[int, int | None]:
    """(interval anchor, next occurrence) to store for ``record`` registered at ``now_ms``.

    A new schedule, or one whose timing (cadence, zone, ``start_at``) changed, starts
    afresh from now, on the whole second: the registration instant's milliseconds are
    dropped, so ``every="1h"`` registered at 12:00:00.437 fires at 13:00:00.000 (a
    ``start_at`` is kept as given). Otherwise the stored anchor and next occurrence are
    kept, unless the new bounds exclude the latter.
    """
    if stored is None or _timing(stored.record) != _timing(record):
        anchor = now_ms - now_ms % 1000 if record.start_ms is None else record.start_ms
        return anchor, first_occurrence_after(record, anchor, now_ms)
    kept = stored.firing.next_fire_ms
    if (
        kept is not None
        and bounded_occurrence(record, kept) == kept
        and (record.start_ms is None or kept >= record.start_ms)
    ):
        return stored.anchor_ms, kept
    return stored.anchor_ms, first_occurrence_after(record, stored.anchor_ms, now_ms)


@dataclass(frozen=True, slots=True)
class RegistrationPlan:
    """What registering a definition does to its key.

    ``outcome`` is "created", "unchanged", "updated", "kept" or "conflict"; ``revision``
    the schedule's revision afterwards; ``row`` the row to write (the whole row when
    "created" or "updated", only its firing state otherwise), None to write nothing.
    """

    outcome: str
    revision: int
    row: StoredSchedule | None


def registration(
    record: ScheduleRecord,
    stored: StoredSchedule | None,
    *,
    now_ms: int,
    on_conflict: str,
    paused: bool | None,
) -> RegistrationPlan:
    """Register ``record`` over ``stored`` (None: a new key), as ``upsert_schedule`` states.

    New key: revision 1, ``active`` (``paused`` if ``paused``), placed from now. Same
    definition: nothing changes. Another definition: ``on_conflict`` "update" replaces it,
    bumps the revision and keeps the next occurrence unless the timing changed (and a
    buffered occurrence's earlier wake-up); "keep" changes nothing; "error" reports a
    conflict. ``paused`` (not None) then pauses or resumes, except on a conflict.
    """
    if (
        paused is False
        and record.calendar is not None
        and stored is not None
        and stored.record.calendar == record.calendar
    ):
        # the row read back knows its calendar's name only: a resume by paused= places
        # the wake-up with the calendar's days as registration read them (only then: a
        # copy of the record costs every registration at start-up)
        stored = replace(stored, record=replace(stored.record, business_days=record.business_days))
    if stored is None:
        anchor, next_fire = placement_on_register(record, None, now_ms)
        if paused:
            firing = FiringState(_PAUSED, next_fire, None, paused_ms=now_ms)
        else:
            firing = FiringState(_ACTIVE, next_fire, wake_at(record, anchor, next_fire))
        return RegistrationPlan("created", 1, StoredSchedule(record, 1, anchor, firing))
    row: StoredSchedule | None = None
    if stored.record.definition == record.definition:
        outcome = "unchanged"
    elif on_conflict == "error":
        return RegistrationPlan("conflict", stored.revision, None)
    elif on_conflict == "keep":
        outcome = "kept"
    else:
        outcome = "updated"
        anchor, next_fire = placement_on_register(record, stored, now_ms)
        firing = _placed(stored.firing, next_fire, wake_at(record, anchor, next_fire))
        row = StoredSchedule(record, stored.revision + 1, anchor, firing, stored.runs_counted)
    if paused is not None:
        current = stored if row is None else row
        action = ScheduleAction.PAUSE if paused else ScheduleAction.RESUME
        changed = transition(current, action, now_ms)
        if changed is not None:
            row = replace(current, firing=changed)
    return RegistrationPlan(outcome, stored.revision if row is None else row.revision, row)


def _placed(firing: FiringState, next_fire_ms: int | None, wake_ms: int | None) -> FiringState:
    """``firing`` with a new next occurrence (due at ``wake_ms``); a wake-up already given
    to a buffered occurrence is kept when it is earlier."""
    due = None
    if firing.state is _ACTIVE:
        due = wake_ms
        if firing.buffered_ms is not None and firing.due_ms is not None:
            due = firing.due_ms if due is None else min(due, firing.due_ms)
    return replace(firing, next_fire_ms=next_fire_ms, due_ms=due)


def _timing(record: ScheduleRecord) -> tuple[object, ...]:
    """What places a schedule's occurrences: a change starts it afresh from now (the DST
    policy and the calendar change which instants are occurrences)."""
    return (
        record.cron, record.every_ms, record.timezone, record.start_ms, record.dst_gap,
        record.dst_repeat, record.calendar,
    )  # fmt: skip
