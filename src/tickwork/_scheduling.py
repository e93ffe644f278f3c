"""Schedules at the API level: validate and register, change state, fire, trigger.

Everything a user passes is checked here, before the store is touched, so a bad cadence
never gets in. Firing decisions are the pure planner's; this module only builds its
inputs from stored rows and hands them over inside the store's firing transaction.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from . import _clock, cron
from ._durations import Duration, to_ms
from ._ids import JSON, canonical_json, occurrence_run_id, schedule_key
from ._models import HistoryEntry, Overlap, ScheduleInfo
from ._occurrences import cadence_for
from ._planning import Plan, PlanInput, plan
from ._registry import check_pool, check_priority
from ._retry import Retry
from ._store import DueSchedule, NewRun, ScheduleRecord
from ._worker import Core
from .errors import ConfigError, ScheduleConflict

__all__ = ["ON_CONFLICT", "Schedules"]

ON_CONFLICT = ("update", "error", "keep")
_MAX_KEY = 150
#: schedules fired per transaction; a tick runs as many transactions as it needs.
FIRE_BATCH = 1000
_MAX_PASSES = 10_000
#: the last instant a datetime can hold, in epoch milliseconds
_LAST_MS = _clock.to_ms(datetime.max.replace(tzinfo=UTC))


@dataclass(frozen=True)
class _Options:
    """``schedule()`` arguments, checked and converted once."""

    record: ScheduleRecord
    anchor_ms: int
    first_fire_ms: int | None
    on_conflict: str
    paused: bool | None


class Schedules:
    """The schedule operations ``Engine`` (and the CLI, the server) expose."""

    def __init__(self, core: Core) -> None:
        self._core = core

    def _changed(self) -> None:
        """Tell this process's worker loop to fire now rather than at its next look."""
        self._core.schedules_changed.set()
        self._core.wake.set()

    # -- registering -----------------------------------------------------------------------

    def register(
        self,
        workflow: str,
        input: JSON,
        *,
        every: Duration | None,
        cron_expr: str | None,
        timezone: str,
        key: str | None,
        overlap: str,
        catchup: int | str,
        catchup_window: Duration | None,
        jitter: Duration | None,
        paused: bool | None,
        pool: str | None,
        priority: int | None,
        retry: Retry | None,
        start_at: datetime | None,
        end_at: datetime | None,
        on_conflict: str,
    ) -> str:
        """Validate everything, then register; return the key."""
        definition = self._core.registry.get(workflow)
        value = definition.validate_input(input)
        if (every is None) == (cron_expr is None):
            raise ConfigError("Pass exactly one of every= or cron=")
        cron.load_zone(timezone)
        if cron_expr is not None:
            if not isinstance(cron_expr, str):
                raise ConfigError(f"cron must be a string, not {cron_expr!r}")
            cron_expr = " ".join(cron_expr.split())
            cron.parse(cron_expr, timezone)
        every_ms = None if every is None else to_ms(every)
        try:
            overlap_value = Overlap(overlap).value
        except ValueError:
            raise ConfigError(
                f"Unknown overlap {overlap!r}: expected one of {[o.value for o in Overlap]}"
            ) from None
        catchup_value = _check_catchup(catchup)
        if retry is not None and not isinstance(retry, Retry):
            raise ConfigError(f"retry must be a tickwork.Retry, not {retry!r}")
        if paused is not None and not isinstance(paused, bool):
            raise ConfigError(f"paused must be True, False or None, not {paused!r}")
        if on_conflict not in ON_CONFLICT:
            raise ConfigError(f"on_conflict must be one of {ON_CONFLICT}, not {on_conflict!r}")
        start_ms = _instant(start_at, "start_at")
        end_ms = _instant(end_at, "end_at")
        if start_ms is not None and end_ms is not None and end_ms <= start_ms:
            raise ConfigError("end_at must be later than start_at")
        cadence = (
            {"every": every_ms}
            if every_ms is not None
            else {"cron": cron_expr, "timezone": timezone}
        )
        identity: dict[str, JSON] = {**cadence, "input": value}
        if pool is not None:
            identity["pool"] = check_pool(pool)
        if priority is not None:
            identity["priority"] = check_priority(priority)
        if key is None:
            key = schedule_key(definition.name, identity)
        _check_key(key)
        fields: dict[str, Any] = dict(
            key=key,
            workflow=definition.name,
            version=definition.version,
            input_json=None if value is None else canonical_json(value),
            cron=cron_expr,
            every_ms=every_ms,
            timezone=timezone,
            overlap=overlap_value,
            catchup=catchup_value,
            catchup_window_ms=None if catchup_window is None else to_ms(catchup_window),
            jitter_ms=None if jitter is None else to_ms(jitter),
            pool=definition.pool if pool is None else pool,
            priority=definition.priority if priority is None else priority,
            retry_json=None if retry is None else canonical_json(retry.to_json()),
            start_ms=start_ms,
            end_ms=end_ms,
        )
        record = ScheduleRecord(
            **fields,
            definition=canonical_json({k: v for k, v in fields.items() if k != "key"}),
        )
        now = self._core.now_ms()
        try:
            outcome = self._core.store.upsert_schedule(
                record,
                now_ms=now,
                grid=lambda stored: _firing_grid(record, stored, now),
                on_conflict=on_conflict,
                paused=paused,
            )
        except OverflowError as exc:  # a cron occurrence past datetime's range
            raise ConfigError(f"Schedule {key!r}: its occurrences pass year 9999") from exc
        if outcome.outcome == "conflict":
            raise ScheduleConflict(
                f"Schedule {key!r} exists with another definition (on_conflict='error')"
            )
        self._changed()
        return key

    # -- state -----------------------------------------------------------------------------

    def set_state(self, key: str, action: str) -> bool:
        """pause / resume / deactivate / activate; False for an unknown key."""
        now = self._core.now_ms()
        next_fire = None
        if action == "activate":
            due = self._core.store.get_schedule_record(key)
            if due is None:
                return False
            next_fire = _next_from(due.record, due.anchor_ms, now)
        changed = self._core.store.set_schedule_state(
            key, action=action, now_ms=now, next_fire_ms=next_fire
        )
        self._changed()
        return changed

    def unschedule(self, key: str) -> bool:
        return self._core.store.delete_schedule(key)

    def get(self, key: str) -> ScheduleInfo | None:
        return self._core.store.get_schedule(key)

    def list_all(self) -> list[ScheduleInfo]:
        return self._core.store.list_schedules(limit=None)

    def history(self, key: str, limit: int) -> list[HistoryEntry]:
        if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= 10_000:
            raise ConfigError(f"limit must be an int from 1 to 10000, not {limit!r}")
        return self._core.store.schedule_history(key, limit=limit)

    def trigger(self, key: str) -> str | None:
        """Start the current occurrence (the latest at or before now), idempotently."""
        due = self._core.store.get_schedule_record(key)
        if due is None:
            return None
        now = self._core.now_ms()
        record = due.record
        latest = now if record.end_ms is None else min(now, record.end_ms)
        occurrence = cadence_for(record, due.anchor_ms).latest_at_or_before(latest)
        if occurrence is None and record.every_ms is not None and due.anchor_ms <= latest:
            occurrence = due.anchor_ms  # before the first interval: its start is current
        if occurrence is None or (record.start_ms is not None and occurrence < record.start_ms):
            occurrence = now  # before start_at nothing has occurred: this instant stands in
        run = NewRun(
            id=occurrence_run_id(key, occurrence),
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
        run_id = self._core.store.trigger_schedule(
            key, now_ms=now, occurrence_ms=occurrence, run=run
        )
        self._changed()
        return run_id

    # -- firing ----------------------------------------------------------------------------

    def tick(self) -> list[str]:
        """Fire every due occurrence at ``clock.now()``; the ids of the runs started."""
        core = self._core
        workflows = core.registry.names()
        started: list[str] = []
        now = core.now_ms()
        due = core.store.next_schedule_due_ms(pools=core.pools, workflows=workflows)
        if due is None or due > now:
            return started  # a cheap read spares the write transaction of a pass
        for _ in range(_MAX_PASSES):
            now = core.now_ms()  # each pass stamps its runs with its own time
            result = core.store.fire_due(
                now_ms=now,
                pools=core.pools,
                workflows=workflows,
                limit=FIRE_BATCH,
                decide=self._decide,
            )
            started.extend(result.run_ids)
            for key, error in result.errors:
                core.hooks.report(error, {"where": "firing schedule", "schedule_key": key})
            if result.fired == 0:
                break
        if started:
            core.wake.set()
        return started

    def next_due_ms(self) -> int | None:
        core = self._core
        return core.store.next_schedule_due_ms(pools=core.pools, workflows=core.registry.names())

    @staticmethod
    def _decide(due: DueSchedule, now_ms: int) -> Plan:
        record = due.record
        state = PlanInput(
            key=record.key,
            overlap=Overlap(record.overlap),
            catchup=record.catchup,
            catchup_window_ms=record.catchup_window_ms,
            jitter_ms=record.jitter_ms,
            end_ms=record.end_ms,
            next_fire_ms=due.next_fire_ms,
            buffered_ms=due.buffered_ms,
            paused_from_ms=due.paused_from_ms,
            paused_until_ms=due.resumed_ms,
            active_run_ids=due.active_run_ids,
            now_ms=now_ms,
        )
        return plan(state, cadence_for(record, due.anchor_ms))


def _firing_grid(
    record: ScheduleRecord, stored: DueSchedule | None, now: int
) -> tuple[int, int | None]:
    """(interval anchor, next occurrence) to store for ``record`` registered at ``now``.

    A new schedule, or one whose cadence changed, starts afresh from now. Otherwise the
    stored anchor and next occurrence are kept, unless new bounds exclude the latter.
    """
    if stored is None or _cadence(stored.record) != _cadence(record):
        anchor = now if record.start_ms is None else record.start_ms
        return anchor, _next_from(record, anchor, now)
    kept = stored.next_fire_ms
    if (
        kept is not None
        and _bounded(record, kept) == kept
        and (record.start_ms is None or kept >= record.start_ms)
    ):
        return stored.anchor_ms, kept
    return stored.anchor_ms, _next_from(record, stored.anchor_ms, now)


def _next_from(record: ScheduleRecord, anchor_ms: int, now_ms: int) -> int | None:
    """The first occurrence strictly after now, at or after ``start_at``, before ``end_at``.

    Never at registration: interval = anchor + every at the earliest.
    """
    after = now_ms
    if record.start_ms is not None:
        after = max(now_ms, record.start_ms - 1)
    return _bounded(record, cadence_for(record, anchor_ms).next_after(after))


def _cadence(record: ScheduleRecord) -> tuple[object, ...]:
    return record.cron, record.every_ms, record.timezone, record.start_ms


def _bounded(record: ScheduleRecord, occurrence: int | None) -> int | None:
    if occurrence is None or (record.end_ms is not None and occurrence > record.end_ms):
        return None
    if occurrence > _LAST_MS:  # stored, it could never be read back as a datetime
        raise ConfigError(f"Schedule {record.key!r}: its next occurrence passes year 9999")
    return occurrence


def _check_catchup(catchup: object) -> int | None:
    if catchup == "all":
        return None
    if isinstance(catchup, bool) or not isinstance(catchup, int) or catchup < 1:
        raise ConfigError(f'catchup must be an int >= 1 or "all", not {catchup!r}')
    return catchup


_KEY_CHARS = re.compile(r"^[^\s\x00-\x1f/]+$")


def _check_key(key: object) -> None:
    if not isinstance(key, str) or not key or len(key) > _MAX_KEY or not _KEY_CHARS.match(key):
        raise ConfigError(
            f"A schedule key must be 1 to {_MAX_KEY} characters without spaces, control "
            f"characters or '/', not {key!r}"
        )


def _instant(value: object, name: str) -> int | None:
    if value is None:
        return None
    if not isinstance(value, datetime) or value.tzinfo is None:
        raise ConfigError(f"{name} must be an aware datetime, not {value!r}")
    return _clock.to_ms(value)
