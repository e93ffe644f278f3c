"""The HTTP API's JSON forms of tickwork's values, both ways: the server encodes, the
``Client`` decodes, so a remote caller gets back exactly what ``Engine`` returns.

- Instants: ISO 8601 in UTC with milliseconds and ``Z`` (``2026-03-01T12:00:00.000Z``),
  the precision the stores keep.
- Lengths of time (a schedule's ``every``, ``jitter``): duration strings as
  ``parse_duration`` reads them (``"1h30m"``, ``"500ms"``), exact to the millisecond.
- Enums: their values (``"pending"``, ``"skip"``...).
- Errors: ``{"error": {"code": ..., "message": ..., "details": {...}}}`` where ``code``
  is the class's stable ``.code`` and ``details`` its attributes (``CronError.field``...),
  so the client raises the very same class with the same message and attributes.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime, timedelta, tzinfo
from enum import StrEnum
from typing import Any

from .. import cron as cron_module
from .. import errors
from .._rules.liveness import HeldBack, held_back_text
from .._rules.preview import (
    DstMark,
    HolidayMark,
    MarkedOccurrence,
    dst_marks,
    holiday_marks,
    utc_offset_text,
)
from .._rules.spec import ScheduleSpec, option_names
from .._values.business_days import BusinessDays
from .._values.checkpoints import asleep_in, ended_at, waiting_for
from .._values.durations import Duration, describe_duration, format_duration, parse_duration
from .._values.models import (
    Backfilled,
    HistoryEntry,
    OnHoliday,
    RunInfo,
    ScheduleAction,
    ScheduleInfo,
    ScheduleState,
    StepInfo,
    Triggered,
    WorkerInfo,
)
from .._values.retry import Retry
from .._values.wire_values import duration_to_wire, form, instant, instant_from_wire, to_json

__all__ = [
    "DONE",
    "ERROR_CLASSES",
    "backfill_text",
    "backfilled_to_wire",
    "error_body",
    "error_details",
    "error_from_wire",
    "error_line",
    "history_list_to_wire",
    "instant",
    "instant_from_wire",
    "preview_to_wire",
    "run_detail_to_wire",
    "run_page_to_wire",
    "schedule_list_to_wire",
    "spec_to_wire",
    "state_change_text",
    "state_change_to_wire",
    "step_to_wire",
    "triggered_to_wire",
    "worker_from_wire",
    "worker_list_to_wire",
    "worker_to_wire",
]

#: every error class by its wire ``code``
ERROR_CLASSES: dict[str, type[errors.TickworkError]] = {
    cls.code: cls
    for cls in (getattr(errors, name) for name in errors.__all__)
    if isinstance(cls, type) and issubclass(cls, errors.TickworkError)
}
_DETAIL_TYPES = (str, int, float, bool, type(None))


# -- schedules -------------------------------------------------------------------------


def schedule_list_to_wire(
    schedules: list[ScheduleInfo], held: Sequence[HeldBack] = ()
) -> dict[str, Any]:
    """``GET /schedules``'s answer (and ``tickwork schedules list --json``'s): the stored
    schedules, then the declared ones not registered for a calendar not stored."""
    return {
        "schedules": [to_json(s) for s in schedules],
        "not_registered": [held_back_to_wire(h) for h in held],
    }


def held_back_to_wire(held: HeldBack) -> dict[str, Any]:
    """A declared schedule held back: its key, its calendar, the live workers holding it
    back (ids; none: only the serving app declares it), and why in words."""
    return {
        "key": held.key,
        "calendar": held.calendar,
        "workers": [w.id for w in held.workers],
        "reason": held_back_text(held),
    }


#: the state each action leads to
_TARGETS = {
    ScheduleAction.PAUSE: ScheduleState.PAUSED,
    ScheduleAction.RESUME: ScheduleState.ACTIVE,
    ScheduleAction.DEACTIVATE: ScheduleState.INACTIVE,
    ScheduleAction.ACTIVATE: ScheduleState.ACTIVE,
}
#: each action as done: "nightly: paused"
DONE = {
    ScheduleAction.PAUSE: "paused",
    ScheduleAction.RESUME: "resumed",
    ScheduleAction.DEACTIVATE: "deactivated",
    ScheduleAction.ACTIVATE: "activated",
}


def state_change_text(info: ScheduleInfo, action: ScheduleAction, changed: bool) -> str:
    """What a state change did, for people: ``nightly: paused (db migration)``, or, when
    the schedule already was so, ``nightly: already paused, nothing changed (its note
    stays: 'db migration')``; ``nightly: not resumed: it is inactive``."""
    note = f" ({info.note})" if info.note else ""
    if changed:
        return f"{info.key}: {DONE[action]}{note}"
    kept = f" (its note stays: {info.note!r})" if info.note else ""
    if info.state is _TARGETS[action]:
        return f"{info.key}: already {info.state.value}, nothing changed{kept}"
    return f"{info.key}: not {DONE[action]}: it is {info.state.value}, nothing changed{kept}"


def state_change_to_wire(
    info: ScheduleInfo, action: ScheduleAction, changed: bool
) -> dict[str, Any]:
    """A state change's answer: the schedule, whether its state ``changed`` (False: it
    already was so, nothing was written, its note kept) and the ``message`` people see."""
    message = state_change_text(info, action, changed)
    return {**to_json(info), "changed": changed, "message": message}


def history_list_to_wire(entries: list[HistoryEntry]) -> dict[str, Any]:
    """``GET /schedules/{key}/history``'s answer (and ``schedules history --json``'s)."""
    return {"history": [to_json(e) for e in entries]}


def backfilled_to_wire(key: str, done: Backfilled) -> dict[str, Any]:
    """A backfill's answer: every occurrence's run id, oldest first, and how many of them
    it started and how many had runs already."""
    return {
        "key": key,
        "run_ids": done.run_ids,
        "count": len(done.run_ids),
        "started": done.started,
        "already_had_runs": done.already_had_runs,
    }


def backfill_text(key: str, done: Backfilled) -> str:
    """What a backfill did, for people: ``nightly: backfilled 5 occurrence(s): 3
    started, 2 already had runs``."""
    return (
        f"{key}: backfilled {len(done.run_ids)} occurrence(s): {done.started} started, "
        f"{done.already_had_runs} already had runs"
    )


def triggered_to_wire(key: str, triggered: Triggered) -> dict[str, Any]:
    # the schedule's key too: a trigger's answer says which schedule it started
    return {"key": key, **to_json(triggered)}


# -- runs ------------------------------------------------------------------------------


def run_page_to_wire(runs: list[RunInfo], *, offset: int, limit: int) -> dict[str, Any]:
    """``GET /runs``'s answer (and ``runs list --json``'s) from ``runs``, read one past
    ``offset + limit`` to know whether another page follows."""
    page = runs[offset : offset + limit]
    more = len(runs) > offset + limit
    return {
        "runs": [to_json(r) for r in page],
        "next_before": page[-1].id if more and page else None,
        "next_offset": offset + limit if more else None,
    }


def run_detail_to_wire(run: RunInfo, steps: list[StepInfo]) -> dict[str, Any]:
    """``GET /runs/{id}``'s answer (and ``runs show --json``'s): the run with its steps,
    each with when it really ended (``ended_at``) and what a wait waits for."""
    asleep = asleep_in(run, steps)
    return {**to_json(run), "steps": [step_to_wire(s, run, asleep=s is asleep) for s in steps]}


#: how much of a failed run's error a list shows (its page, or ``runs show``, has it all)
ERROR_LINE = 80


def error_line(error: str | None, width: int = ERROR_LINE) -> str | None:
    """A run's error for a list: its first line, cut to ``width`` characters; "…" says
    there is more."""
    if not error or not error.strip():
        return None
    first = next(line.strip() for line in error.splitlines() if line.strip())
    if len(first) > width:
        return first[: width - 1].rstrip() + "…"
    return first if first == error.strip() else first + " …"


def step_to_wire(
    step: StepInfo, run: RunInfo | None = None, *, asleep: bool = False
) -> dict[str, Any]:
    """A checkpoint as stored; with its ``run``, also when it ended (a sleep at its wake,
    a wait when its event came; null while it sleeps or waits) and what a wait waits
    for (``_values/checkpoints.py``). A client reads the stored fields back alone."""
    wire = to_json(step)
    if run is not None:
        wire["ended_at"] = instant(ended_at(step, run, asleep=asleep))
        wait = waiting_for(step)
        wire["waiting_for"] = None if wait is None else {
            "names": list(wait.names), "match": wait.match, "until": instant(wait.until),
        }  # fmt: skip
    return wire


# -- cadence previews ------------------------------------------------------------------


def preview_to_wire(
    *,
    cron: str | None,
    every: Duration | None,
    timezone: str,
    occurrences: list[datetime],
    after: datetime,
    dst_gap: str = "shift",
    dst_repeat: str = "first",
    calendar: BusinessDays | None = None,
    on_holiday: str = "skip",
) -> dict[str, Any]:
    """``GET /cron/preview``'s answer (and ``tickwork cron --json``'s): the cadence, in
    words, and each occurrence (of the preview after ``after``) in UTC and in the zone.

    What DST did, a cron expression's under its policy, in fields present only when DST
    touched something (so a preview DST leaves alone reads as it always did): an
    occurrence's ``dst`` is ``"moved"`` (its local time fell in a spring-forward gap) or
    ``"doubled"`` (its local time repeats and runs at both instants), with ``dst_wall``
    the local time the expression named; ``dst_skipped`` lists the local times
    ``dst_gap="skip"`` left without a run. With a ``calendar`` (its ``nBD`` / ``LBD``
    counted on it), the answer names it and ``on_holiday``, and an occurrence on its day
    off has ``holiday``: ``"skipped"`` (no run) or ``"moved"`` with ``runs_at``, the
    instant its run moved to, and ``holiday_reason`` as the history would say it.
    """
    zone = cron_module.load_zone(timezone)
    marks: dict[datetime, MarkedOccurrence] = {}
    skipped: list[str] = []
    if cron is not None:
        expr = cron_module.parse(
            cron, timezone, dst_gap=dst_gap, dst_repeat=dst_repeat, calendar=calendar
        )
        description, every_text = expr.explain(), None
        for entry in dst_marks(expr, after, occurrences):
            if entry.mark is DstMark.SKIPPED:
                skipped.append(_wall(entry))
            elif entry.mark is not None:
                marks[entry.at] = entry
    else:
        assert every is not None  # the preview itself refused neither
        step = parse_duration(every)
        every_text, description = duration_to_wire(step), f"every {describe_duration(step)}"
    holidays = {}
    if calendar is not None:
        holidays = holiday_marks(calendar, on_holiday, timezone, occurrences)
    answer: dict[str, Any] = {
        "cron": cron,
        "every": every_text,
        "timezone": timezone,
        "description": description,
        "occurrences": [
            _occurrence(when, zone, timezone, marks.get(when), holidays.get(when))
            for when in occurrences
        ],
    }
    if skipped:
        answer["dst_skipped"] = skipped
    if calendar is not None:
        answer.update(calendar=calendar.name, on_holiday=str(OnHoliday(on_holiday)))
    return answer


def _occurrence(
    when: datetime,
    zone: tzinfo,
    timezone: str,
    marked: MarkedOccurrence | None,
    holiday: HolidayMark | None,
) -> dict[str, Any]:
    occurrence = {
        "utc": instant(when),
        "local": when.astimezone(zone).isoformat(timespec="milliseconds"),
        "utc_offset": utc_offset_text(when, timezone),
    }
    if marked is not None:
        occurrence.update(dst=str(marked.mark), dst_wall=_wall(marked))
    if holiday is not None:
        occurrence.update(holiday=holiday.kind, holiday_reason=holiday.reason)
        if holiday.runs_at is not None:
            occurrence["runs_at"] = instant(holiday.runs_at)
    return occurrence


def _wall(marked: MarkedOccurrence) -> str:
    """The local time an expression named, as ISO 8601 without an offset (it may be one
    the zone skipped, or one it has twice)."""
    return marked.wall.isoformat(timespec="seconds")


# -- workers ---------------------------------------------------------------------------


def worker_to_wire(worker: WorkerInfo) -> dict[str, Any]:
    # waiting_for_calendars travels as an object (key: calendar), stored as sorted pairs
    return {**to_json(worker), "waiting_for_calendars": dict(worker.waiting_for_calendars)}


def worker_list_to_wire(workers: list[WorkerInfo]) -> dict[str, Any]:
    """``GET /workers``'s answer (and ``tickwork workers --json``'s)."""
    return {"workers": [worker_to_wire(w) for w in workers]}


def worker_from_wire(data: dict[str, Any]) -> WorkerInfo:
    # a server before issue 47's records sends no waiting_for_calendars
    pairs = tuple(sorted(data.get("waiting_for_calendars", {}).items()))
    worker: WorkerInfo = form(WorkerInfo).validate_python({**data, "waiting_for_calendars": pairs})
    return worker


# -- errors ----------------------------------------------------------------------------


def error_body(code: str, message: str, details: dict[str, Any] | None = None) -> dict[str, Any]:
    """The JSON body of an error response."""
    error: dict[str, Any] = {"code": code, "message": message}
    if details:
        error["details"] = details
    return {"error": error}


def _detail(value: object) -> bool:
    """Whether an error attribute crosses the wire: a scalar, or a tuple of scalars (which
    travels as a list and comes back as a tuple: ``UnknownWorkflowError.suggestions``)."""
    if isinstance(value, tuple | list):
        return all(isinstance(item, _DETAIL_TYPES) for item in value)
    return isinstance(value, _DETAIL_TYPES)


def error_details(exc: BaseException) -> dict[str, Any]:
    """The plain attributes an error carries (``CronError.field``...), for the wire."""
    return {
        name: list(value) if isinstance(value, tuple) else value
        for name, value in vars(exc).items()
        if not name.startswith("_") and _detail(value)
    }


def error_from_wire(
    code: str, message: str, details: dict[str, Any] | None
) -> errors.TickworkError | None:
    """The error a server sent, as its own class with its message and attributes; None for
    a code that names no tickwork error class (the API's own: ``UNAUTHORIZED``...)."""
    cls = ERROR_CLASSES.get(code)
    if cls is None or cls is errors.ApiError:
        return None
    # Rebuilt without calling the class's __init__, whose parameters differ from class to
    # class: the message comes back as it was, the attributes from the details.
    exc = cls.__new__(cls, message)
    BaseException.__init__(exc, message)
    for name, value in (details or {}).items():
        if isinstance(name, str) and not name.startswith("_") and _detail(value):
            setattr(exc, name, tuple(value) if isinstance(value, list) else value)
    return exc


def spec_to_wire(spec: ScheduleSpec) -> dict[str, Any]:
    """A schedule spec as the API's ``ScheduleCreate`` body: every option by name,
    durations as strings ("1h30m": the API refuses bare numbers), instants as ISO 8601,
    the retry policy as an object."""
    body: dict[str, Any] = {}
    for name in option_names():
        value = getattr(spec, name)
        if isinstance(value, timedelta):
            value = format_duration(value)
        elif isinstance(value, datetime):
            value = value.astimezone(UTC).isoformat()
        elif isinstance(value, StrEnum):  # overlap, the DST and holiday policies
            value = value.value
        elif isinstance(value, Retry):
            value = {
                "max_attempts": value.max_attempts,
                "backoff": format_duration(value.backoff),
                "factor": value.factor,
                "max_backoff": format_duration(value.max_backoff),
            }
        body[name] = value
    return body
