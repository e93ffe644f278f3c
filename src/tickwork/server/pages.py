"""The dashboard's pages and the actions on them: schedules, their history, runs, steps,
workers; with their banners when nobody serves what the page shows (``banners.py``).

Each page reads through the engine's public methods on a worker thread (they block on
the database) and hands plain values to its template. Actions come here only after the
session and its CSRF token were checked (``dashboard.py``), and answer with a redirect
back to the page they were sent from.
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping
from datetime import UTC, datetime, timedelta
from typing import Any
from urllib.parse import urlencode

from markupsafe import Markup
from starlette.concurrency import run_in_threadpool
from starlette.datastructures import FormData
from starlette.requests import Request
from starlette.responses import Response

from .. import cron
from .._edge.wire import DONE, backfill_text, state_change_text
from .._engine import Engine
from .._rules.calendars import business_days
from .._rules.liveness import HeldBack, held_back_schedules, held_back_text
from .._rules.occurrences import HolidayRule
from .._rules.preview import UpcomingMark, schedule_marks
from .._values.business_days import BusinessDays
from .._values.checkpoints import asleep_in, child_wait, child_wait_words
from .._values.holidays import Holiday
from .._values.models import (
    ACTIVE_STATUSES,
    Decision,
    HistoryEntry,
    Overlap,
    RunInfo,
    RunStatus,
    ScheduleAction,
    ScheduleInfo,
    ScheduleState,
    StepInfo,
    WorkerInfo,
)
from ..cron import load_zone
from ..errors import ConfigError
from .banners import (
    MISSES_SHOWN_FOR,
    calendar_banners,
    deadline_banners,
    runs_banners,
    schedule_banners,
    schedules_banners,
    workers_banners,
)
from .charts import (
    STRIP_RUNS,
    duration_chart,
    lateness_chart,
    run_strip,
    started_apart,
    step_timeline,
)
from .rendering import Renderer, root
from .sessions import Session
from .waits import waiting_for

__all__ = ["ACTIONS", "CHART_RUNS", "RUNS_LIMIT", "SCHEDULES_PER_PAGE", "Pages"]

RUNS_LIMIT = 100
#: a run's children listed on its page (the rest: the runs page, filtered by parent)
CHILDREN_SHOWN = 100
#: schedule keys the Runs page's filter suggests, the first in key order: each view reads
#: them, and a longer list helps no one typing (any key may still be typed)
SUGGESTED_KEYS = 500
# Schedules shown on a page of the Schedules page: their strips and rows are what it
# costs (~0.5 ms a schedule; a thousand on one page took 0.5 s at every refresh).
SCHEDULES_PER_PAGE = 100
CHART_RUNS = 100  # a schedule's runs in its lateness and duration charts
#: a schedule's newest history entries read to tell which charted runs a person started
CHART_HISTORY = 2000
#: what the Schedules page's buttons post: the state changes, and these
ACTIONS = (*ScheduleAction, "trigger", "new_run", "backfill")


class Pages:
    """The pages and actions of logged-in sessions, over one engine."""

    def __init__(self, engine: Engine, renderer: Renderer) -> None:
        self.engine = engine
        self.renderer = renderer

    # -- schedules -------------------------------------------------------------------------

    async def schedules(self, request: Request, session: Session) -> Response:
        schedules, workers, misses = await run_in_threadpool(self._schedules_and_workers)
        held = await run_in_threadpool(self._held_back, workers, {s.key for s in schedules})
        number, pages = _page_number(request.query_params.get("page", "")), _pages(schedules)
        number = min(number, pages)  # past the end (schedules were removed): the last page
        first = (number - 1) * SCHEDULES_PER_PAGE
        shown = schedules[first : first + SCHEDULES_PER_PAGE]
        strips = await run_in_threadpool(self._strips, shown, root(request))
        return self.renderer.render(
            request,
            "schedules.html",
            session,
            refresh=True,
            schedules=shown,
            # Banners are about every schedule, whichever page is shown.
            banners=schedules_banners(schedules, workers)
            + calendar_banners(held)
            + deadline_banners(misses, self.engine.clock.now()),
            strips=strips,
            page="schedules",
            total=len(schedules),
            first=first + 1,
            number=number,
            pages=pages,
        )

    def _schedules_and_workers(
        self,
    ) -> tuple[list[ScheduleInfo], list[WorkerInfo], list[HistoryEntry]]:
        engine = self.engine
        misses = engine.console.recent_deadline_misses(MISSES_SHOWN_FOR)
        return engine.list_schedules(), engine.list_workers(), misses

    def _held_back(self, workers: list[WorkerInfo], stored: set[str]) -> list[HeldBack]:
        """The declared schedules not registered for a calendar not stored: those the live
        workers' records hold back (``tickwork serve`` without the app sees them too),
        and this app's own (``serve APP`` before its worker started, or without one)."""
        declared = self.engine.console.declared_waiting_for_calendars()
        return held_back_schedules(workers, declared=declared, stored=stored)

    def _strips(self, schedules: list[ScheduleInfo], here: str) -> dict[str, Markup]:
        """Each schedule's strip of its last runs, all read at once: ``STRIP_RUNS`` rows
        of each schedule's index (``tickwork_runs_schedule``), whatever the history kept
        (docs/behaviour.md); a schedule that never ran is not asked for."""
        now = self.engine.clock.now()
        ran = [s.key for s in schedules if s.last_run_id]
        recent = self.engine.console.recent_runs_by_schedule(ran, limit=STRIP_RUNS) if ran else {}
        return {s.key: run_strip(recent.get(s.key, []), now=now, root=here) for s in schedules}

    async def schedule(self, request: Request, session: Session) -> Response:
        key = request.query_params.get("key", "")
        data = await run_in_threadpool(self._schedule_data, key, root(request))
        if data is None:
            held = await run_in_threadpool(self._held_back_one, key)
            if held is not None:  # declared, but its worker holds it back: say why
                return self.renderer.render(
                    request,
                    "error.html",
                    session,
                    status_code=404,
                    title=f"Schedule {key!r} is not registered",
                    message=f"It does not fire: {held_back_text(held)}.",
                )
            return self.renderer.not_found(request, session, f"schedule {key!r}")
        backfill = await run_in_threadpool(self._backfill_preview, key, request.query_params)
        return self.renderer.render(
            request,
            "schedule.html",
            session,
            refresh=True,
            page="schedules",
            backfill=backfill,
            overlaps=[o.value for o in Overlap],
            **data,
        )

    def _held_back_one(self, key: str) -> HeldBack | None:
        """``key``, if it is a declared schedule held back (``_held_back``)."""
        if not key:
            return None
        held = self._held_back(self.engine.list_workers(), set())
        return next((h for h in held if h.key == key), None)

    def _backfill_preview(self, key: str, params: Mapping[str, str]) -> dict[str, Any]:
        """The backfill form's values and, once a span is asked for (its first step, a
        GET), how many occurrences it holds, or why it cannot be backfilled."""
        typed = {name: params.get(name, "").strip() for name in ("from", "to", "overlap")}
        preview: dict[str, Any] = {**typed, "count": None, "error": None}
        if not typed["from"] or not typed["to"]:
            return preview
        try:
            start, end = _form_instant(typed["from"]), _form_instant(typed["to"])
            if typed["overlap"] and typed["overlap"] not in {o.value for o in Overlap}:
                raise ConfigError(f"Unknown overlap {typed['overlap']!r}")
            preview["count"] = self.engine.backfill_count(key, start, end)
        except ConfigError as exc:
            preview["error"] = str(exc)
        return preview

    def _schedule_data(self, key: str, here: str) -> dict[str, Any] | None:
        info = self.engine.get_schedule(key) if key else None
        if info is None:
            return None
        recent = self.engine.list_runs(schedule_key=key, limit=CHART_RUNS)
        # Which of them a person started (run now, backfill): the entries that say so,
        # read further back only when the shown ones do not cover every charted run.
        history = self.engine.schedule_history(key, limit=100)
        now = self.engine.clock.now()
        decided = {entry.run_id for entry in history}
        if any(r.scheduled_for is not None and r.id not in decided for r in recent):
            history = self.engine.schedule_history(key, limit=CHART_HISTORY)
        return {
            "s": info,
            "banners": schedule_banners(info, self.engine.list_workers())
            + deadline_banners(_recent_misses(history, now), now),
            "history": history[:100],
            "upcoming": self._upcoming(info),
            "zone": load_zone(info.timezone),
            "runs": recent[:10],
            "lateness": lateness_chart(recent, apart=started_apart(history), root=here),
            "durations": duration_chart(recent, root=here),
        }

    def _upcoming(self, info: ScheduleInfo, count: int = 5) -> list[UpcomingMark]:
        """The next ``count`` occurrences, from the stored next fire time on, never in the
        past: those of an overdue or paused schedule start from now (the overdue banner
        and catch-up speak of the missed ones). Each is marked with what DST or the
        schedule's calendar does to it (moved, skipped, doubled)."""
        first, now = info.next_fire_at, self.engine.clock.now()
        if first is None or info.state is ScheduleState.INACTIVE:
            return []
        days = self._business_days(info, first if first > now else now)
        rule = None
        if days is not None:
            rule = HolidayRule(days, info.on_holiday, load_zone(info.timezone))
        if info.every is not None:
            if first < now:
                first += -((first - now) // info.every) * info.every
            return schedule_marks(None, first, [first + i * info.every for i in range(count)], rule)
        assert info.cron is not None
        expr = cron.parse(
            info.cron, info.timezone, dst_gap=info.dst_gap, dst_repeat=info.dst_repeat,
            calendar=days,
        )  # fmt: skip
        start = max(first, now) - timedelta(milliseconds=1)  # the first itself included
        upcoming = list(itertools.islice(expr.iter(start), count))
        return schedule_marks(expr, start, upcoming, rule)

    def _business_days(self, info: ScheduleInfo, around: datetime) -> BusinessDays | None:
        """The schedule's calendar's days this year and the next (None: no calendar; a
        calendar since deleted: its weekend only)."""
        if info.calendar is None:
            return None
        calendar = self.engine.get_calendar(info.calendar)
        if calendar is None:
            return BusinessDays(info.calendar)
        public: list[Holiday] = []
        for year in (around.year, around.year + 1):
            try:
                public.extend(self.engine.calendar_holidays(info.calendar, year))
            except ConfigError:  # a year not resolvable here (no holidays extra)
                continue
        return business_days(calendar, public)

    async def schedule_action(self, request: Request, session: Session, form: FormData) -> Response:
        key, action = form.get("key"), form.get("action")
        if not isinstance(key, str) or action not in ACTIONS:
            return self.renderer.not_found(request, session, "such action")
        assert isinstance(action, str)
        back = self.renderer.back
        if action == "backfill":
            return await self._backfill(request, form, key)
        if action in ("trigger", "new_run"):
            triggered = await run_in_threadpool(self.engine.run_now, key, action == "new_run")
            if triggered is None:
                return back(request, form, f"No schedule {key!r}.")
            if triggered.started:
                return back(request, form, f"{key}: started run", triggered.run_id)
            return back(
                request, form, f"{key}: occurrence already ran: run", triggered.run_id,
                after=f"({triggered.status.value})", new_run_key=key,
            )  # fmt: skip
        state_action = ScheduleAction(action)  # the buttons left: the state changes
        typed = form.get("note")  # the text field beside the buttons: why
        note = typed.strip() or None if isinstance(typed, str) else None
        try:
            changed = await run_in_threadpool(
                self.engine.console.change_state, key, state_action, note
            )
        except ConfigError as exc:  # a note too long, or with control characters
            return back(request, form, f"{key}: not {DONE[state_action]}: {exc}")
        info = None if changed is None else await run_in_threadpool(self.engine.get_schedule, key)
        if info is None:
            return back(request, form, f"No schedule {key!r}.")
        if changed:
            return back(request, form, f"{key}: {DONE[state_action]}.")
        return back(request, form, state_change_text(info, state_action, changed=False) + ".")

    async def _backfill(self, request: Request, form: FormData, key: str) -> Response:
        """The backfill form's second step (a POST with its CSRF token): start the runs."""
        values = {name: form.get(name) for name in ("from", "to", "overlap")}
        texts = {name: v.strip() if isinstance(v, str) else "" for name, v in values.items()}
        try:
            start, end = _form_instant(texts["from"]), _form_instant(texts["to"])
            done = await run_in_threadpool(
                self.engine.console.backfill_counted,
                key,
                start,
                end,
                overlap=texts["overlap"] or None,
            )
        except ConfigError as exc:
            return self.renderer.back(request, form, f"{key}: not backfilled: {exc}")
        return self.renderer.back(request, form, f"{backfill_text(key, done)}; see its history.")

    # -- runs ------------------------------------------------------------------------------

    async def runs(self, request: Request, session: Session) -> Response:
        params = request.query_params
        filters = {
            "status": params.get("status", ""),
            "workflow": params.get("workflow", "").strip(),
            "schedule": params.get("schedule", "").strip(),
            "parent": params.get("parent", "").strip(),
        }
        before = params.get("before", "").strip()
        data = await run_in_threadpool(self._runs_data, filters, before)
        return self.renderer.render(
            request,
            "runs.html",
            session,
            refresh=True,
            page="runs",
            filters=filters,
            statuses=[s.value for s in RunStatus],
            **data,
        )

    def _runs_data(self, filters: dict[str, str], before: str) -> dict[str, Any]:
        error = ""
        status = filters["status"] or None
        runs: list[RunInfo] = []
        if status is not None and status not in {s.value for s in RunStatus}:
            error = f"Unknown status {status!r}."
        else:
            runs = self.engine.list_runs(
                status=status,
                workflow=filters["workflow"] or None,
                schedule_key=filters["schedule"] or None,
                limit=RUNS_LIMIT + 1,  # one more: is there an older page?
                before=before or None,
                parent=filters["parent"] or None,
            )
        older = runs[RUNS_LIMIT - 1].id if len(runs) > RUNS_LIMIT else None
        runs = runs[:RUNS_LIMIT]
        schedule_keys = self.engine.console.schedule_keys(SUGGESTED_KEYS)
        workflows = sorted({*self.engine.workflows(), *(r.workflow for r in runs)})
        pending = {
            w: n
            for (w, status), n in self.engine.console.stats().runs.items()
            if status == "pending"
        }
        return {
            "runs": runs,
            "banners": runs_banners(pending, self.engine.list_workers()),
            "error": error,
            "paged": bool(before),
            "older": None if older is None else urlencode({**filters, "before": older}),
            "newest": urlencode({name: value for name, value in filters.items() if value}),
            "schedule_keys": schedule_keys,
            "workflows": workflows,
        }

    # -- workers ---------------------------------------------------------------------------

    async def workers(self, request: Request, session: Session) -> Response:
        workers = await run_in_threadpool(self.engine.list_workers)
        return self.renderer.render(
            request,
            "workers.html",
            session,
            refresh=True,
            page="workers",
            workers=workers,
            banners=workers_banners(workers),
        )

    async def run(self, request: Request, session: Session) -> Response:
        run_id = request.query_params.get("id", "")
        run = await run_in_threadpool(self.engine.get_run, run_id) if run_id else None
        if run is None:
            return self.renderer.not_found(request, session, f"run {run_id!r}")
        steps = await run_in_threadpool(self.engine.list_steps, run_id)
        children = await run_in_threadpool(self._children, run, steps, root(request))
        return self.renderer.render(
            request,
            "run.html",
            session,
            page="runs",
            run=run,
            steps=steps,
            **children,
            timeline=step_timeline(run, steps, now=self.engine.clock.now()),
            refresh=run.status in ACTIVE_STATUSES,
            waiting_for=waiting_for(run, steps),
            asleep_in=asleep_in(run, steps),
        )

    def _children(self, run: RunInfo, steps: list[StepInfo], at: str) -> dict[str, Any]:
        """A run's child runs as its page shows them (DESIGN §10): counts by status, the
        first ``CHILDREN_SHOWN`` newest first with their strip, and what a waiting parent
        waits for ("3 of 20 runs of resize")."""
        counts = self.engine.console.child_counts(run.id)
        shown = self.engine.list_runs(parent=run.id, limit=CHILDREN_SHOWN) if counts else []
        waits_for_children = None
        if run.status is RunStatus.WAITING:
            for step in reversed(steps):
                wait = child_wait(step)
                if wait is not None:
                    left = self.engine.console.children_remaining(run.id, step)
                    waits_for_children = child_wait_words(wait, left)
                    break
        return {
            "child_counts": sorted(counts.items()),
            "children_total": sum(counts.values()),
            "children": shown,
            "children_strip": run_strip(shown, now=self.engine.clock.now(),
                                        root=at) if shown else "",
            "waits_for_children": waits_for_children,
        }  # fmt: skip

    async def events(self, request: Request, session: Session) -> Response:
        """Events, newest first, with the runs each started and woke; the runs waiting
        and what each waits for (DESIGN §9)."""
        name = request.query_params.get("name") or None
        events = await run_in_threadpool(self.engine.list_events, name=name, limit=EVENTS_SHOWN)
        waiting = await run_in_threadpool(
            self.engine.list_runs, status="waiting", limit=EVENTS_SHOWN
        )
        waits = []
        for run in waiting:
            steps = await run_in_threadpool(self.engine.list_steps, run.id)
            waits.append((run, waiting_for(run, steps)))
        subscriptions = await run_in_threadpool(self.engine.list_subscriptions)
        return self.renderer.render(
            request,
            "events.html",
            session,
            refresh=True,
            page="events",
            events=events,
            event_name=name,
            waits=waits,
            subscriptions=subscriptions,
        )

    async def subscription(self, request: Request, session: Session) -> Response:
        """A subscription's decisions (debounced, batched, started and why, dropped),
        newest first, like a schedule's history (DESIGN §9)."""
        key = request.query_params.get("key", "")
        subs = await run_in_threadpool(self.engine.list_subscriptions)
        sub = next((s for s in subs if s.key == key), None)
        history = (
            await run_in_threadpool(self.engine.subscription_history, key, limit=EVENTS_SHOWN)
            if key
            else []
        )
        if sub is None and not history:
            return self.renderer.not_found(request, session, f"subscription {key!r}")
        return self.renderer.render(
            request,
            "subscription.html",
            session,
            refresh=True,
            page="events",
            key=key,
            sub=sub,
            history=history,
        )

    async def cancel_run(self, request: Request, session: Session, form: FormData) -> Response:
        run_id = form.get("id")
        if not isinstance(run_id, str):
            return self.renderer.not_found(request, session, "such run")
        cancelled = await run_in_threadpool(self.engine.cancel, run_id)
        text = "Cancelled." if cancelled else "Not cancelled: the run is unknown or finished."
        return self.renderer.back(request, form, text, run_id)


#: events and waiting runs the Events page lists, newest first
EVENTS_SHOWN = 100


def _page_number(text: str) -> int:
    """``?page=``, 1-based; anything else is the first page."""
    return int(text) if text.isdigit() and len(text) <= 9 and int(text) >= 1 else 1


def _pages(schedules: list[ScheduleInfo]) -> int:
    return max(1, -(-len(schedules) // SCHEDULES_PER_PAGE))


def _form_instant(text: str) -> datetime:
    """A form's instant: ISO 8601 (a ``datetime-local`` field's ``2026-03-01T09:00``);
    UTC when it names no offset, as the form says."""
    try:
        value = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        raise ConfigError(f"{text!r} is not a time such as 2026-03-01T09:00") from None
    return value if value.tzinfo is not None else value.replace(tzinfo=UTC)


def _recent_misses(history: list[HistoryEntry], now: datetime) -> list[HistoryEntry]:
    """The deadline misses among a schedule's latest entries recorded within the day (what
    the Schedules page's banner shows of it)."""
    since = now - MISSES_SHOWN_FOR
    return [h for h in history if h.decision is Decision.DEADLINE_MISSED and h.decided_at >= since]
