"""What the dashboard warns about at the top of a page: nobody serving (DESIGN §8), and
deadlines missed (DESIGN §2, ``deadline``).

A scheduler cannot report its own absence, so the pages a person looks at say it: the
Schedules page and a schedule's page when a schedule is overdue or no live worker serves
its pool and workflow, the Runs page when runs wait for a workflow no live worker
registers, the Workers page when no worker is alive. Pure: plain values in (schedules,
workers, counts), banners out; the rules are ``_liveness``'s. A deadline missed within
the last day (``Engine.console.recent_deadline_misses``) is shown on the Schedules page and on
its schedule's page, the latest miss of each schedule, saying when and why.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from urllib.parse import quote, urlencode

from .._rules.liveness import (
    HeldBack,
    held_back_text,
    unserved_reason,
    unserved_schedules,
    unserved_workflows,
)
from .._values.models import HistoryEntry, ScheduleInfo, WorkerInfo
from .display import format_elapsed

__all__ = [
    "MISSES_SHOWN_FOR",
    "Banner",
    "BannerLine",
    "calendar_banners",
    "deadline_banners",
    "runs_banners",
    "schedule_banners",
    "schedules_banners",
    "workers_banners",
]


#: how long a deadline missed stays in a banner
MISSES_SHOWN_FOR = timedelta(days=1)


@dataclass(frozen=True, slots=True)
class BannerLine:
    """One thing concerned: ``label`` (a schedule's key, a workflow) linking to ``href``
    (a path under the dashboard's root), and what is wrong with it."""

    label: str
    href: str
    text: str


@dataclass(frozen=True, slots=True)
class Banner:
    """A warning: ``kind`` names it (``overdue``, ``unserved``, ``waiting``, ``no-workers``:
    the element's id, for people's eyes and tests alike)."""

    kind: str
    title: str
    lines: tuple[BannerLine, ...] = ()


def _schedule_href(key: str) -> str:
    return f"/schedule?key={quote(key, safe='')}"


def _overdue_text(info: ScheduleInfo, workers: Sequence[WorkerInfo]) -> str:
    assert info.overdue_by is not None
    text = f"overdue by {format_elapsed(info.overdue_by)}"
    reason = unserved_reason(info.pool, info.workflow, workers)
    return text if reason is None else f"{text}: {reason}"


def schedules_banners(
    schedules: Sequence[ScheduleInfo], workers: Sequence[WorkerInfo]
) -> list[Banner]:
    """The Schedules page's: overdue schedules; active ones no live worker serves."""
    banners = []
    overdue = [s for s in schedules if s.overdue_by is not None]
    if overdue:
        banners.append(
            Banner(
                "overdue",
                f"{len(overdue)} schedule(s) overdue: the next occurrence passed and no "
                "worker fired it.",
                tuple(
                    BannerLine(s.key, _schedule_href(s.key), _overdue_text(s, workers))
                    for s in overdue
                ),
            )
        )
    late = {s.key for s in overdue}
    unserved = [(s, why) for s, why in unserved_schedules(schedules, workers) if s.key not in late]
    if unserved:
        banners.append(
            Banner(
                "unserved",
                f"No live worker serves {len(unserved)} active schedule(s): they will not fire.",
                tuple(BannerLine(s.key, _schedule_href(s.key), why) for s, why in unserved),
            )
        )
    return banners


def calendar_banners(held: Sequence[HeldBack]) -> list[Banner]:
    """The Schedules page's: the declared schedules that live workers hold back (their
    records say so) or this app declares, not registered because their calendar is not
    stored (``_calendar_wait``); each links to its schedule's page, which says why."""
    if not held:
        return []
    lines = tuple(BannerLine(h.key, _schedule_href(h.key), held_back_text(h)) for h in held)
    title = f"{len(lines)} declared schedule(s) not registered: their calendar is missing."
    return [Banner("calendar-missing", title, lines)]


def schedule_banners(info: ScheduleInfo, workers: Sequence[WorkerInfo]) -> list[Banner]:
    """A schedule's page: overdue, or (active and) served by no live worker."""
    if info.overdue_by is not None:
        return [
            Banner(
                "overdue",
                f"This schedule is {_overdue_text(info, workers)}. Its next occurrence "
                "passed and no worker fired it.",
            )
        ]
    unserved = unserved_schedules([info], workers)
    if unserved:
        return [Banner("unserved", f"It will not fire: {unserved[0][1]}.")]
    return []


def runs_banners(pending: Mapping[str, int], workers: Sequence[WorkerInfo]) -> list[Banner]:
    """The Runs page's: ``pending`` (workflow -> runs waiting) for workflows no live worker
    registers."""
    waiting = unserved_workflows((w for w, count in pending.items() if count > 0), workers)
    if not waiting:
        return []
    return [
        Banner(
            "waiting",
            "Runs wait for workflows no live worker registers: they will not start.",
            tuple(
                BannerLine(
                    workflow,
                    "/runs?" + urlencode({"workflow": workflow, "status": "pending"}),
                    f"{pending[workflow]} pending run(s)",
                )
                for workflow in waiting
            ),
        )
    ]


def workers_banners(workers: Sequence[WorkerInfo]) -> list[Banner]:
    """The Workers page's: no worker alive."""
    if any(w.alive for w in workers):
        return []
    return [
        Banner(
            "no-workers",
            "No live worker: nothing fires schedules or executes runs. Start one with "
            "`tickwork worker APP`.",
        )
    ]


def deadline_banners(misses: Sequence[HistoryEntry], now: datetime) -> list[Banner]:
    """The deadlines missed lately (``misses``: newest first), the latest of each schedule:
    the Schedules page's with every schedule's, a schedule's page with its own."""
    latest: dict[str, HistoryEntry] = {}
    for miss in misses:
        latest.setdefault(miss.key, miss)
    if not latest:
        return []
    return [
        Banner(
            "deadline-missed",
            f"{len(latest)} schedule(s) missed a deadline in the last day: a run had not "
            "completed in time.",
            tuple(
                BannerLine(
                    key,
                    _schedule_href(key),
                    f"{format_elapsed(now - miss.decided_at)} ago: {miss.reason}",
                )
                for key, miss in latest.items()
            ),
        )
    ]
