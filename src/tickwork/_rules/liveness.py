"""Who serves what: a worker's liveness, a schedule's lateness, and what no live worker
serves. Pure rules over plain values (DESIGN §8, "Nobody serving").

A worker renews its record every ``renew_ms`` (``DEFAULT_RENEW_MS``, or
``$TICKWORK_WORKER_HEARTBEAT``); it is alive until it has missed ``MISSED_RENEWALS`` of
them (or stopped), and its record is forgotten ``FORGET_AFTER_MS`` after it was last seen.
Each worker stores its own interval, so a reader needs none of its configuration.

A schedule is overdue when it is active and its next occurrence passed more than
``OVERDUE_GRACE_MS`` ago with nothing decided about it (fired, skipped, dropped) yet. A
healthy worker fires within milliseconds of the occurrence, so a lateness that lasts is
the sign that no worker serves the schedule — the failure a scheduler cannot report
about itself. The grace is for what is not that: a worker in another process sees a
resume or a registration only at its next look (every poll interval, 1 s by default),
so "overdue by 271 ms" right after Resume, with a live worker, was a false alarm.

A declared schedule whose calendar is not stored has no row at all: its worker holds it
back (``_calendar_wait``) and says so in its record (``WorkerInfo.waiting_for_calendars``).
``held_back_schedules`` gathers what the live workers hold back, so that a face without
the app (``tickwork schedules list``, ``tickwork serve``) says why it does not fire.
"""

from __future__ import annotations

from collections.abc import Container, Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import timedelta

from .._values.clock import to_ms
from .._values.models import ScheduleInfo, ScheduleState, WorkerInfo

__all__ = [
    "DEFAULT_RENEW_MS",
    "FORGET_AFTER_MS",
    "FORGET_BATCH",
    "MISSED_RENEWALS",
    "OVERDUE_GRACE_MS",
    "HeldBack",
    "held_back_schedules",
    "held_back_text",
    "overdue_by",
    "overdue_ms",
    "seen_since_ms",
    "unserved_reason",
    "unserved_run",
    "unserved_schedules",
    "unserved_workflows",
    "worker_alive",
]

#: how often a worker renews its record unless told otherwise ("every few seconds")
DEFAULT_RENEW_MS = 5_000
#: renewals a worker may miss before it is taken for gone
MISSED_RENEWALS = 3
#: how long a gone worker's record is kept: a day, so the morning shift sees the night's
FORGET_AFTER_MS = 86_400_000
#: how many gone workers' records one renewal removes at most (bounded writes)
FORGET_BATCH = 100
#: how long past its occurrence a schedule may stay undecided before it is overdue: ten
#: of a worker's default poll intervals, the looks in which another process's resume or
#: registration is seen (docs/behaviour.md advises alerting past a minute all the same)
OVERDUE_GRACE_MS = 10_000


def worker_alive(*, last_seen_ms: int, renew_ms: int, stopped: bool, now_ms: int) -> bool:
    """Whether a worker is alive at ``now_ms``: not stopped, and fewer than
    ``MISSED_RENEWALS`` renewals missed since it was last seen."""
    return not stopped and now_ms - last_seen_ms <= MISSED_RENEWALS * renew_ms


def seen_since_ms(now_ms: int) -> int:
    """The oldest last renewal a worker may have and still be listed (and kept)."""
    return now_ms - FORGET_AFTER_MS


def overdue_ms(
    state: ScheduleState, next_fire_ms: int | None, now_ms: int, active_since_ms: int | None = None
) -> int | None:
    """How many milliseconds the next occurrence of a schedule is in the past, undecided;
    None when it is not overdue: in the future, none left, not ``active`` (a paused or
    inactive schedule's occurrences are missed on purpose), or undecided for no more than
    ``OVERDUE_GRACE_MS`` since it passed or since the schedule became active
    (``active_since_ms``, its last state change: a resumed schedule's missed occurrence
    waits for a worker's next look like any other). Past the grace it is the whole
    lateness, from the occurrence."""
    if state is not ScheduleState.ACTIVE or next_fire_ms is None:
        return None
    undecided_since = max(next_fire_ms, active_since_ms or next_fire_ms)
    if now_ms - undecided_since <= OVERDUE_GRACE_MS:
        return None
    return now_ms - next_fire_ms


def overdue_by(info: ScheduleInfo, now_ms: int) -> timedelta | None:
    """``ScheduleInfo.overdue_by`` at ``now_ms`` (``overdue_ms``)."""
    next_ms = None if info.next_fire_at is None else to_ms(info.next_fire_at)
    since = None if info.state_changed_at is None else to_ms(info.state_changed_at)
    late = overdue_ms(info.state, next_ms, now_ms, since)
    return None if late is None else timedelta(milliseconds=late)


def unserved_reason(pool: str, workflow: str, workers: Sequence[WorkerInfo]) -> str | None:
    """Why no live worker would fire or run work of ``workflow`` in ``pool``, in words;
    None when some live worker serves both."""
    live = [w for w in workers if w.alive]
    if any(pool in w.pools and workflow in w.workflows for w in live):
        return None
    if not live:
        return "no worker is alive"
    in_pool = any(pool in w.pools for w in live)
    has_workflow = any(workflow in w.workflows for w in live)
    if not in_pool and not has_workflow:
        return f"no live worker serves pool {pool!r} or registers workflow {workflow!r}"
    if not in_pool:
        return f"no live worker serves pool {pool!r}"
    if not has_workflow:
        return f"no live worker registers workflow {workflow!r}"
    return f"no live worker both serves pool {pool!r} and registers workflow {workflow!r}"


def unserved_run(pool: str, workflow: str, workers: Sequence[WorkerInfo]) -> str | None:
    """What a waiter on a run is told when no live worker would run it: the pool and the
    workflow named, then why (``unserved_reason``); None when some live worker serves both."""
    reason = unserved_reason(pool, workflow, workers)
    if reason is None:
        return None
    return f"no live worker serves pool {pool!r} / workflow {workflow!r}: {reason}"


def unserved_schedules(
    schedules: Iterable[ScheduleInfo], workers: Sequence[WorkerInfo]
) -> list[tuple[ScheduleInfo, str]]:
    """The active schedules no live worker serves, each with the reason."""
    found = []
    for info in schedules:
        if info.state is not ScheduleState.ACTIVE:
            continue
        reason = unserved_reason(info.pool, info.workflow, workers)
        if reason is not None:
            found.append((info, reason))
    return found


def unserved_workflows(waiting: Iterable[str], workers: Sequence[WorkerInfo]) -> list[str]:
    """The workflows among ``waiting`` (those runs wait for) that no live worker registers,
    sorted."""
    registered = {name for w in workers if w.alive for name in w.workflows}
    return sorted(set(waiting) - registered)


@dataclass(frozen=True, slots=True)
class HeldBack:
    """A declared schedule not registered because its calendar is not stored: ``workers``
    the live ones holding it back (none: only this process's app declares it)."""

    key: str
    calendar: str
    workers: tuple[WorkerInfo, ...] = ()


def held_back_schedules(
    workers: Sequence[WorkerInfo],
    *,
    declared: Mapping[str, str] | None = None,
    stored: Container[str] = (),
) -> list[HeldBack]:
    """The declared schedules the live ``workers`` hold back for a calendar not stored,
    and those of ``declared`` (this app's, key to calendar), by key; the keys in ``stored``
    left out (registered since: a record is renewed at the worker's next look)."""
    found: dict[str, HeldBack] = {
        key: HeldBack(key, calendar) for key, calendar in (declared or {}).items()
    }
    for worker in workers:
        if not worker.alive:
            continue
        for key, calendar in worker.waiting_for_calendars:
            held = found.get(key, HeldBack(key, calendar))
            found[key] = HeldBack(key, held.calendar, (*held.workers, worker))
    return [found[key] for key in sorted(found) if key not in stored]


def held_back_text(held: HeldBack) -> str:
    """Why it does not fire, and how to make it: ``not registered: no calendar 'uk' is
    stored (declared by worker web-1:4242); ...``."""
    name = held.calendar
    if held.workers:
        first = held.workers[0]
        others = len(held.workers) - 1
        who = f"declared by worker {first.host}:{first.pid}"
        who += f" and {others} other(s)" if others else ""
    else:
        who = "declared by this app"
    return (
        f"not registered: no calendar {name!r} is stored ({who}); set it (tickwork "
        f"calendars set {name} ...) or declare it (Engine(calendars=[Calendar({name!r}, "
        "...)])), and the worker registers the schedule then"
    )
