"""Schedules at the API level: validate and register, change state, trigger, backfill.

Everything a user passes is checked here, before the store is touched, so a bad cadence
never gets in. Decisions are the pure planner's; this module only builds its inputs from
stored rows (``plan_input``) and hands them over inside the store's transaction. Firing
what is due is the firing loop's (``_firing``), which builds them the same way.
"""

from __future__ import annotations

import logging
import secrets
from collections.abc import Mapping, Sequence
from dataclasses import fields, replace
from datetime import datetime
from functools import cache
from typing import Any

from .. import cron
from .._rules.backfill import plan_backfill
from .._rules.liveness import overdue_by
from .._rules.occurrences import holiday_rule, occurrences_between
from .._rules.planning import Plan, PlanInput
from .._rules.policy import current_occurrence
from .._rules.spec import (
    ScheduleSpec,
    aware_ms,
    check_key,
    option_defaults,
    stored_value,
    to_overlap,
)
from .._runtime.core import Runtime
from .._store import DueSchedule, NewRun, ScheduleRecord
from .._values.business_days import BusinessDays
from .._values.checks import check_limit, check_note
from .._values.clock import from_ms
from .._values.durations import Duration
from .._values.durations import to_ms as duration_ms
from .._values.hints import close_names
from .._values.ids import JSON, canonical_json, occurrence_run_id, schedule_key
from .._values.models import (
    Backfilled,
    Decision,
    DstGap,
    DstRepeat,
    HistoryEntry,
    OnHoliday,
    Overlap,
    ScheduleAction,
    ScheduleInfo,
    ScheduleState,
    Triggered,
)
from .._values.records import OPTIONS
from ..errors import ConfigError, ScheduleConflict
from .calendar_days import CalendarDays
from .calendar_wait import WaitingForCalendars

__all__ = ["Schedules", "plan_input", "with_days"]

_LOG = logging.getLogger("tickwork.firing")

#: declared schedules registered per transaction at a worker's start (one commit each
#: instead of one per schedule; each gap between statements stays short)
REGISTER_BATCH = 500
#: the most occurrences one backfill starts; a longer span is refused (ConfigError)
MAX_BACKFILL = 100_000
#: occurrences a backfill decides per transaction, like catch-up's bounded batches
BACKFILL_BATCH = 1000
#: the most schedules whose keys a "did you mean" looks through (beyond it: no hint)
HINT_KEYS = 1000
#: the most deadline misses the dashboard's banner lists
RECENT_MISSES = 100


class Schedules:
    """The schedule operations ``Engine`` (and the CLI, the server) expose."""

    def __init__(self, runtime: Runtime) -> None:
        self._runtime = runtime
        #: the stored calendars' days, read again when one changes (firing reads them too)
        self.calendars = CalendarDays(lambda: runtime.store)
        #: those days as a trigger or backfill last read them
        self._days: dict[str, BusinessDays] = {}
        #: declared schedules left out for a calendar not stored (``register_declared``)
        self._waiting = WaitingForCalendars(runtime)

    # -- registering -----------------------------------------------------------------------

    def register(self, spec: ScheduleSpec) -> str:
        """Register ``spec`` (its workflow bound) after checking it against the workflow;
        return the key."""
        record = self._record(spec)
        now = self._runtime.now_ms()
        try:
            outcome = self._runtime.store.schedules.upsert_schedule(
                record,
                now_ms=now,
                on_conflict=spec.on_conflict,
                paused=spec.paused,
            )
        except OverflowError as exc:  # a cron occurrence past datetime's range
            raise ConfigError(f"Schedule {record.key!r}: its occurrences pass year 9999") from exc
        if outcome.outcome == "conflict":
            raise ScheduleConflict(
                f"Schedule {record.key!r} exists with another definition (on_conflict='error')"
            )
        self._runtime.schedule_changed()
        return record.key

    def register_many(self, specs: Sequence[ScheduleSpec]) -> list[str]:
        """Register every spec, in order, as ``register`` would one after the other; return
        their keys. All are checked first, so a bad one stores none; then they are stored
        ``REGISTER_BATCH`` to a transaction, a few statements each (``upsert_schedules``).

        A conflict (``on_conflict="error"``) raises ``ScheduleConflict`` once its batch is
        stored: the batches after it are not.
        """
        records = [(self._record(spec), spec) for spec in specs]
        try:
            for start in range(0, len(records), REGISTER_BATCH):
                batch = records[start : start + REGISTER_BATCH]
                try:
                    outcomes = self._runtime.store.schedules.upsert_schedules(
                        [(record, spec.on_conflict, spec.paused) for record, spec in batch],
                        now_ms=self._runtime.now_ms(),
                    )
                except OverflowError as exc:  # a cron occurrence past datetime's range
                    raise ConfigError(f"A schedule's occurrences pass year 9999: {exc}") from exc
                for (record, _), outcome in zip(batch, outcomes, strict=True):
                    if outcome.outcome == "conflict":
                        raise ScheduleConflict(
                            f"Schedule {record.key!r} exists with another definition "
                            "(on_conflict='error')"
                        )
        finally:
            if records:
                self._runtime.schedule_changed()  # a local worker looks again
        return [record.key for record, _ in records]

    def register_declared(self, specs: Sequence[ScheduleSpec]) -> list[str]:
        """``register_many``, but one schedule's missing calendar does not stop the rest:
        a spec whose calendar is not stored waits (``_calendar_wait``), reported naming
        it and its calendar, and is registered by the first firing poll after that
        calendar is stored. The keys registered."""
        return self.register_many(self._waiting.split(specs, self._key))

    def waiting_for_calendars(self, specs: Sequence[ScheduleSpec]) -> dict[str, str]:
        """Of ``specs`` (the declared ones), those whose calendar is not stored: key to
        calendar name, by key (one read of the calendars' names)."""
        stored = self._runtime.store.calendars.calendar_stamps()
        waiting = {
            self._key(spec): spec.calendar
            for spec in specs
            if spec.calendar is not None and spec.calendar not in stored
        }
        return dict(sorted(waiting.items()))

    def held_back(self) -> tuple[tuple[str, str], ...]:
        """The declared schedules ``register_declared`` left out and still waiting for
        their calendar: (key, calendar) pairs by key (the worker's record, at each
        renewal)."""
        return self._waiting.pairs()

    def register_waiting(self) -> None:
        """Register the declared schedules whose calendar has been stored since (the
        firing side, at each poll and pass)."""
        if not self._waiting:
            return
        try:
            for key in self.register_many(self._waiting.ready()):
                _LOG.info("declared schedule %r registered: its calendar is stored now", key)
        except Exception as exc:  # reported, and the loop goes on
            self._runtime.hooks.report(exc, {"where": "registering declared schedules"})

    def _key(self, spec: ScheduleSpec) -> str:
        """The key ``spec`` is stored under (derived when not given)."""
        if spec.key is not None:
            return spec.key
        assert spec.workflow is not None  # declared specs are bound to their workflow
        definition = self._runtime.registry.get(spec.workflow)
        return _derived_key(spec, definition.name, definition.validate_input(spec.input))

    def _record(self, spec: ScheduleSpec) -> ScheduleRecord:
        """The row to store for ``spec``: its input checked against the workflow, its key
        derived when not given, the workflow's pool and priority as defaults."""
        if spec.workflow is None:
            raise ConfigError("A schedule needs a workflow")
        definition = self._runtime.registry.get(spec.workflow)
        value = definition.validate_input(spec.input)
        key = spec.key if spec.key is not None else _derived_key(spec, definition.name, value)
        values: dict[str, Any] = dict(
            key=key,
            workflow=definition.name,
            version=definition.version,
            input_json=None if value is None else canonical_json(value),
            cron=spec.cron,
            every_ms=spec.every_ms,
            timezone=spec.timezone,
            overlap=spec.overlap,
            catchup=spec.catchup_count,
            catchup_window_ms=spec.catchup_window_ms,
            jitter_ms=spec.jitter_ms,
            pool=definition.pool if spec.pool is None else spec.pool,
            priority=definition.priority if spec.priority is None else spec.priority,
            retry_json=None if spec.retry is None else canonical_json(spec.retry.to_json()),
            start_ms=spec.start_ms,
            end_ms=spec.end_ms,
            pause_after_failures=spec.pause_after_failures,
            dst_gap=spec.dst_gap,
            dst_repeat=spec.dst_repeat,
            calendar=spec.calendar,
            on_holiday=spec.on_holiday,
            business_days=self._calendar_of(spec),
            max_runs=spec.max_runs,
            deadline_ms=spec.deadline_ms,
        )
        return ScheduleRecord(**values, definition=_definition(values, _more_options(spec)))

    def _calendar_of(self, spec: ScheduleSpec) -> BusinessDays | None:
        """The days of the calendar ``spec`` names, which must be stored (else
        ``ConfigError`` naming it, before anything is stored)."""
        if spec.calendar is None:
            return None
        year = from_ms(self._runtime.now_ms()).year
        days = self.calendars.one(spec.calendar, range(year - 1, year + 2))
        if days is None:
            raise ConfigError(
                f"No calendar {spec.calendar!r}: store it first with "
                f"engine.calendar({spec.calendar!r}, ...), or pick another"
            )
        if spec.cron is not None:  # "23BD" may never occur with this calendar's weekend
            cron.parse(spec.cron, spec.timezone, calendar=days)
        return days

    # -- state -----------------------------------------------------------------------------

    def set_state(self, key: str, action: ScheduleAction, note: str | None = None) -> bool | None:
        """pause / resume / deactivate / activate, with a note saying why: True when the
        state changed, False when the schedule already was so (nothing written, its note
        kept), None for an unknown key. A bad note is refused (``ConfigError``) first."""
        try:
            action = ScheduleAction(action)
        except ValueError:
            expected = sorted(known.value for known in ScheduleAction)
            raise ConfigError(f"Unknown state change {action!r}: expected {expected}") from None
        note = check_note(note)
        now = self._runtime.now_ms()
        store = self._runtime.store
        days = None
        if action in (ScheduleAction.RESUME, ScheduleAction.ACTIVATE):
            # Placing the next occurrence and a "previous" move's wake-up takes the
            # calendars' holidays, not only their weekends.
            year = from_ms(now).year
            days = self.calendars.current(range(year - 1, year + 2))
        changed = store.schedules.change_schedule_state(
            key, action=action, now_ms=now, note=note, calendars=days
        )
        if changed:
            self._runtime.schedule_changed()
        return changed

    def keys_like(self, key: str) -> tuple[str, ...]:
        """The stored key closest to ``key`` (a typo's fix), looked for among at most
        ``HINT_KEYS`` schedules: none when there are more (a hint must stay cheap)."""
        if not isinstance(key, str):
            return ()
        found = self._runtime.store.schedules.schedule_keys(HINT_KEYS + 1)
        if len(found) > HINT_KEYS:
            return ()
        return close_names(key, found)

    def keys(self, limit: int) -> list[str]:
        """The first ``limit`` keys in key order (a form's suggestions)."""
        check_limit(limit)
        return self._runtime.store.schedules.schedule_keys(limit)

    def unschedule(self, key: str) -> bool:
        return self._runtime.store.schedules.delete_schedule(key)

    def get(self, key: str) -> ScheduleInfo | None:
        info = self._runtime.store.schedules.get_schedule(key)
        return None if info is None else self._with_lateness([info])[0]

    def list_all(
        self, *, workflow: str | None = None, state: ScheduleState | str | None = None
    ) -> list[ScheduleInfo]:
        """Every schedule, or those of ``workflow`` and in ``state`` (chosen by the
        store's WHERE, not after reading them all)."""
        if workflow is not None and not isinstance(workflow, str):
            raise ConfigError(f"workflow must be a workflow name, not {workflow!r}")
        try:
            wanted = None if state is None else ScheduleState(state)
        except ValueError:
            raise ConfigError(
                f"Unknown state {state!r}: expected active, paused or inactive"
            ) from None
        store = self._runtime.store
        return self._with_lateness(
            store.schedules.list_schedules(workflow=workflow, state=wanted, limit=None)
        )

    def _with_lateness(self, schedules: list[ScheduleInfo]) -> list[ScheduleInfo]:
        """``schedules`` with ``overdue_by`` at the engine's now (rule: ``_liveness``)."""
        now = self._runtime.now_ms()
        # Copied only when overdue (rarely): a copy of every one doubled what a /metrics
        # scrape or the Schedules page costs (~20 µs a schedule).
        return [
            info if (late := overdue_by(info, now)) is None else replace(info, overdue_by=late)
            for info in schedules
        ]

    def history(self, key: str, limit: int) -> list[HistoryEntry]:
        check_limit(limit)
        return self._runtime.store.schedules.schedule_history(key, limit=limit)

    def recent_deadline_misses(self, within: Duration) -> list[HistoryEntry]:
        """The deadline misses of every schedule recorded within ``within`` of now."""
        since = self._runtime.now_ms() - duration_ms(within, "within")
        return self._runtime.store.deadlines.recent_deadline_misses(
            since_ms=since, limit=RECENT_MISSES
        )

    def trigger(self, key: str, *, new_run: bool = False) -> Triggered | None:
        """Start the current occurrence (the latest at or before now), idempotently; with
        ``new_run``, a new run now whatever that occurrence has."""
        due = self._runtime.store.schedules.get_schedule_record(key)
        if due is None:
            return None
        now = self._runtime.now_ms()
        if due.record.calendar is not None:  # which occurrence is current honours it
            year = from_ms(now).year
            self._days = self.calendars.current(range(year - 1, year + 2))
            due = self._with_days(due)
        record = due.record
        if new_run:
            # Its own occurrence, now; the suffix keeps two in one millisecond apart.
            occurrence, reason = now, "run now: a new run"
            run_id = f"{occurrence_run_id(key, now)}~now-{secrets.token_hex(4)}"
        else:
            occurrence, reason = current_occurrence(record, due.anchor_ms, now), "run now"
            run_id = occurrence_run_id(key, occurrence)
        run = NewRun(
            id=run_id,
            workflow=record.workflow,
            version=record.version,
            input_json=record.input_json,
            priority=record.priority,
            pool=record.pool,
            created_ms=now,
            available_ms=now,
            schedule_key=key,
            schedule_revision=due.revision,
            scheduled_for_ms=occurrence,
            retry_json=record.retry_json,
        )
        triggered = self._runtime.store.firing.trigger_schedule(
            key, now_ms=now, occurrence_ms=occurrence, run=run, reason=reason
        )
        self._runtime.schedule_changed()
        return triggered

    # -- backfill --------------------------------------------------------------------------

    def backfill(
        self, key: str, start: datetime, end: datetime, overlap: Overlap | str | None
    ) -> Backfilled:
        """Start a run for every occurrence in ``[start, end)``, oldest first, in batches
        of ``BACKFILL_BATCH`` (one transaction each); the run ids, oldest first, and how
        many were started and how many had runs already."""
        policy = None if overlap is None else to_overlap(overlap)
        due, occurrences = self._backfill_span(key, start, end)
        chosen = due.record.overlap if policy is None else policy
        run_ids: list[str] = []
        already = 0
        for first in range(0, len(occurrences), BACKFILL_BATCH):
            batch = occurrences[first : first + BACKFILL_BATCH]
            now = self._runtime.now_ms()
            decided: list[Plan] = []  # the plan the store wrote (its last call's)

            def decide(
                due: DueSchedule,
                has_run: frozenset[str],
                queued: frozenset[int],
                batch: list[int] = batch,
                now: int = now,
                decided: list[Plan] = decided,
            ) -> Plan:
                state = plan_input(self._with_days(due), now)
                decided[:] = [plan_backfill(state, batch, chosen, has_run=has_run, queued=queued)]
                return decided[0]

            done = self._runtime.store.firing.backfill_schedule(
                key, occurrences=batch, now_ms=now, decide=decide
            )
            if done is None:
                raise ConfigError(f"No schedule {key!r}: it was removed during the backfill")
            run_ids.extend(done)
            already += sum(
                d.decision is Decision.ALREADY_STARTED for plan in decided for d in plan.decisions
            )
        self._runtime.schedule_changed()  # runs started, a queue to drain: look now
        return Backfilled(run_ids, started=len(run_ids) - already, already_had_runs=already)

    def backfill_count(self, key: str, start: datetime, end: datetime) -> int:
        """How many occurrences a backfill of ``[start, end)`` decides (checked like it)."""
        return len(self._backfill_span(key, start, end)[1])

    def _backfill_span(
        self, key: str, start: datetime, end: datetime
    ) -> tuple[DueSchedule, list[int]]:
        """The schedule and its occurrences in ``[start, end)``; ConfigError for a bad
        span, an unknown key, or more than ``MAX_BACKFILL`` occurrences."""
        start_ms = aware_ms(start, "A backfill's start")
        end_ms = aware_ms(end, "A backfill's end")
        if end_ms <= start_ms:
            raise ConfigError(f"A backfill's end must be later than its start, not {end}")
        due = (
            self._runtime.store.schedules.get_schedule_record(key) if isinstance(key, str) else None
        )
        if due is None:
            raise ConfigError(f"No schedule {key!r} to backfill")
        if due.record.calendar is not None:  # its days over the span (nBD counts them)
            first, last = from_ms(start_ms).year, from_ms(end_ms).year
            self._days = self.calendars.current(range(first - 1, last + 2))
        due = self._with_days(due)
        found = occurrences_between(due.record, due.anchor_ms, start_ms, end_ms, MAX_BACKFILL)
        if len(found) > MAX_BACKFILL:
            raise ConfigError(
                f"A backfill starts at most {MAX_BACKFILL:,} occurrences; {start} to {end} "
                f"holds more: backfill a shorter span at a time"
            )
        return due, found

    def _with_days(self, due: DueSchedule) -> DueSchedule:
        """``due`` with its calendar's days as this engine last read them."""
        return with_days(due, self._days)


#: the spec's fields the schedules table keeps in columns of their own (``ScheduleRecord``),
#: and those that instruct the registration rather than define the schedule
_IN_COLUMNS = frozenset(
    {"workflow", "input", "every", "cron", "timezone", "key", "overlap", "catchup",
     "catchup_window", "jitter", "pool", "priority", "retry", "start_at", "end_at",
     "pause_after_failures", "dst_gap", "dst_repeat", "calendar", "on_holiday",
     "max_runs", "deadline"}
)  # fmt: skip
_INSTRUCTIONS = frozenset({"paused", "on_conflict"})
#: the DST and calendar options at their defaults: named in a key or a definition only
#: when not so
_POLICY_DEFAULTS: dict[str, object] = {
    "dst_gap": DstGap.SHIFT,
    "dst_repeat": DstRepeat.FIRST,
    "calendar": None,
    "on_holiday": OnHoliday.SKIP,
}


def _more_options(spec: ScheduleSpec) -> dict[str, JSON]:
    """The options set away from their defaults that have no column of their own: the
    definition's JSON keeps them (``ScheduleRecord.option`` reads one back), so a new
    option is a spec field and nothing more until a query has to read it."""
    return {name: stored_value(value) for name, value in spec.options(_without_column()).items()}


@cache
def _without_column() -> tuple[tuple[str, object], ...]:
    """The spec's options (names and defaults) that have no column of their own."""
    return tuple(
        (name, default)
        for name, default in option_defaults()
        if name not in _IN_COLUMNS and name not in _INSTRUCTIONS
    )


def _definition(record: Mapping[str, Any], more: dict[str, JSON]) -> str:
    """The canonical JSON of the fields that define ``record`` (a record's values by
    field name; equal: unchanged).

    It names the options added since the first release (pause_after_failures, max_runs,
    deadline; the DST and calendar options away from their defaults; those without a
    column, under ``OPTIONS``) only when set, so the definitions stored before they
    existed stay equal (re-registering them changes nothing). The calendar's days are not
    the schedule's definition: a calendar changes on its own (DESIGN §3)."""
    defining: dict[str, JSON] = {name: record[name] for name in _DEFINING}
    for added in _ADDED_COLUMNS:
        if defining[added] is None:
            del defining[added]
    for name, default in _POLICY_DEFAULTS.items():
        value = record[name]
        if value != default:
            defining[name] = str(value)
    if more:
        defining[OPTIONS] = more
    return canonical_json(defining)


#: a record's columns added after its first release, named in its definition when set
_ADDED_COLUMNS = ("pause_after_failures", "max_runs", "deadline_ms")
#: the record's fields its definition names (the policy options only when not defaults)
_DEFINING = tuple(
    field.name
    for field in fields(ScheduleRecord)
    if field.name not in ("key", "definition", "business_days", *_POLICY_DEFAULTS)
)


def _derived_key(spec: ScheduleSpec, workflow: str, value: JSON) -> str:
    """The key of a spec without one: a hash of what identifies the schedule, pool and
    priority only when given and the DST and calendar options only when not the defaults
    (so keys derived before they existed stay the same)."""
    cadence: dict[str, JSON] = (
        {"every": spec.every_ms}
        if spec.every_ms is not None
        else {"cron": spec.cron, "timezone": spec.timezone}
    )
    identity: dict[str, JSON] = {**cadence, "input": value}
    if spec.pool is not None:
        identity["pool"] = spec.pool
    if spec.priority is not None:
        identity["priority"] = spec.priority
    for name, default in _POLICY_DEFAULTS.items():
        if getattr(spec, name) != default:
            identity[name] = str(getattr(spec, name))
    return check_key(schedule_key(workflow, identity))


def plan_input(due: DueSchedule, now_ms: int) -> PlanInput:
    """What the planner needs of a stored schedule at ``now_ms``."""
    record, firing = due.record, due.firing
    return PlanInput(
        key=record.key,
        overlap=record.overlap,
        catchup=record.catchup,
        catchup_window_ms=record.catchup_window_ms,
        jitter_ms=record.jitter_ms,
        end_ms=record.end_ms,
        next_fire_ms=firing.next_fire_ms,
        buffered_ms=firing.buffered_ms,
        paused_ms=firing.paused_ms,
        resumed_ms=firing.resumed_ms,
        active_run_ids=due.active_run_ids,
        now_ms=now_ms,
        waiting=due.waiting,
        queued_ms=due.queued_ms,
        holidays=holiday_rule(record),
        max_runs=record.max_runs,
        runs_counted=due.stored.runs_counted,
    )


def with_days(due: DueSchedule, days: Mapping[str, BusinessDays]) -> DueSchedule:
    """``due`` with its calendar's days as read for this pass (``days``, by name)."""
    name = due.record.calendar
    if name is None:
        return due
    record = replace(due.record, business_days=days.get(name))
    return replace(due, stored=replace(due.stored, record=record))
