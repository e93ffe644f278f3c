"""``Engine``: the public API for registering workflows, starting runs and running workers.

A facade: each method checks what the user passed and hands the work to the part that
owns it (``Schedules`` for schedules, ``Runtime`` for runs, ``Worker`` for the loop);
what only the faces ask is on ``engine.console`` (``_console``), not here.
``docs/architecture.md`` draws the layers.
"""

from __future__ import annotations

import contextlib
import functools
import os
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from datetime import date, datetime
from typing import Any, TypeVar, Unpack, overload

from ._edge.async_api import with_twins
from ._edge.declared import Declarations, workflow_schedules
from ._rules.calendars import Calendar, days_for_preview, declared_calendars
from ._rules.preview import holiday_marks, preview
from ._rules.registry import (
    Registry,
    WorkflowDef,
    WorkflowOptions,
)
from ._rules.retention import DEFAULT_RETENTION
from ._rules.spec import (
    ScheduleOptions,
    ScheduleSpec,
    check_option_names,
    make_spec,
    takes_schedule_options,
)
from ._runtime.core import Runtime
from ._runtime.hooks import DeadlineHook, Hook
from ._services.apikeys import ApiKeys
from ._services.calendar_ops import Calendars
from ._services.console import Console
from ._services.event_ops import Events
from ._services.firing import Firing, fire_ahead_ms
from ._services.heartbeat import list_workers
from ._services.pruning import Pruner
from ._services.runs import Runs
from ._services.scheduling import Schedules
from ._services.worker import Worker, run_until_idle, run_until_signalled
from ._values import clock as _clock
from ._values.durations import Duration
from ._values.event_flow import SubscriptionDecision
from ._values.events import On
from ._values.handle import RunHandle
from ._values.holidays import Holiday
from ._values.models import (
    ApiKeyInfo,
    CalendarInfo,
    EventInfo,
    HistoryEntry,
    RunInfo,
    RunStatus,
    ScheduleAction,
    ScheduleInfo,
    ScheduleState,
    StepInfo,
    SubscriptionInfo,
    Triggered,
    WorkerInfo,
)
from ._values.retry import Retry
from .errors import ConfigError, UnknownWorkflowError

__all__ = ["DEFAULT_URL", "Engine"]

DEFAULT_URL = "sqlite:///tickwork.db"
F = TypeVar("F", bound=Callable[..., Any])


def _check_declared(definition: WorkflowDef) -> None:
    workflow_schedules(definition)  # refuse a bad one (or one missing its input) now


@with_twins  # the *_async twins (TWINNED in _async_api)
class Engine:
    """Workflows, runs and workers over one database (SQLite file or PostgreSQL)."""

    def __init__(
        self,
        url: str | None = None,
        *,
        clock: _clock.Clock | None = None,
        pools: Sequence[str] | None = None,
        lease: Duration = "30s",
        on_error: Callable[[BaseException, dict[str, Any]], Any] | None = None,
        schedules: Sequence[Mapping[str, Any]] | None = None,
        config: str | os.PathLike[str] | None = None,
        retention: Duration | None = DEFAULT_RETENTION,
        fire_ahead: Duration | None = None,
        calendars: Sequence[Calendar] | None = None,
    ) -> None:
        ahead_ms = fire_ahead_ms(fire_ahead)  # checked before the database is opened
        self._declared_calendars = declared_calendars(calendars)
        self.url = url or os.environ.get("TICKWORK_DATABASE_URL") or DEFAULT_URL
        self._registry = Registry()
        self._runtime = Runtime.open(
            self.url,
            clock=clock,
            pools=pools,
            lease=lease,
            on_error=on_error,
            registry=self._registry,
        )
        self.clock = self._runtime.clock
        self._declarations = Declarations(schedules or [], config)
        self._runs = Runs(self._runtime)
        self._events = Events(self._runtime)
        self._calendars = Calendars(self._runtime)
        self._schedules = Schedules(self._runtime)
        self._firing = Firing(self._runtime, self._schedules, ahead_ms=ahead_ms)
        self._pruner = Pruner(self._runtime, retention)
        self._api_keys = ApiKeys(self._runtime)
        self._calendars_synced = False  # the declared calendars stored by this engine
        # What for_test gives its copy (the declarations and registry are shared below).
        self._settings: dict[str, Any] = {
            "pools": pools,
            "lease": lease,
            "on_error": on_error,
            "retention": retention,
            "fire_ahead": fire_ahead,
            "calendars": calendars,
        }

    # -- registration --------------------------------------------------------------------

    @overload
    def workflow(self, name: F, /) -> F: ...

    @overload
    def workflow(
        self,
        name: str | None = None,
        *,
        version: str = "1",
        retry: Retry | None = None,
        concurrency: int | None = None,
        pool: str = "default",
        priority: int = 0,
        timeout: Duration | None = None,
        schedule: Any = None,
        retention: Duration | None = None,
        max_recoveries: int | None = 5,
        on: On | Sequence[On] | None = None,
    ) -> Callable[[F], F]: ...

    def workflow(
        self,
        name: Any = None,
        *,
        version: str = "1",
        retry: Retry | None = None,
        concurrency: int | None = None,
        pool: str = "default",
        priority: int = 0,
        timeout: Duration | None = None,
        schedule: Any = None,
        retention: Duration | None = None,
        max_recoveries: int | None = 5,
        on: On | Sequence[On] | None = None,
    ) -> Any:
        """Register a workflow: ``@engine.workflow`` or ``@engine.workflow("name", ...)``."""
        if callable(name):
            return self.workflow()(name)
        options = WorkflowOptions(
            name=name,
            version=version,
            retry=retry,
            concurrency=concurrency,
            pool=pool,
            priority=priority,
            timeout=timeout,
            schedule=schedule,
            retention=retention,
            max_recoveries=max_recoveries,
            on=on,
        )
        return self._registry.decorator(
            options, check=_check_declared, added=self._runtime.wake.set
        )

    def workflows(self) -> list[str]:
        """Names of the workflows registered with this engine."""
        return self._registry.names()

    def on_run_started(self, hook: Hook) -> Hook:
        """Call ``hook(run_info)`` when a run first begins executing."""
        self._runtime.hooks.started.append(hook)
        return hook

    def on_run_completed(self, hook: Hook) -> Hook:
        """Call ``hook(run_info)`` when a run completes."""
        self._runtime.hooks.completed.append(hook)
        return hook

    def on_run_failed(self, hook: Hook) -> Hook:
        """Call ``hook(run_info)`` when a run fails for good (its retries spent)."""
        self._runtime.hooks.failed.append(hook)
        return hook

    def on_deadline_missed(self, hook: DeadlineHook) -> DeadlineHook:
        """Call ``hook(missed)`` with a ``DeadlineMissed`` when an occurrence's run had not
        completed its schedule's ``deadline`` after the occurrence: once per run across
        the fleet, in the process whose firing loop (or ``tick``) recorded the miss."""
        self._runtime.hooks.deadline_missed.append(hook)
        return hook

    # -- runs ----------------------------------------------------------------------------

    def start(
        self,
        workflow: str | Callable[..., Any],
        input: Any = None,
        *,
        run_id: str | None = None,
        priority: int | None = None,
        pool: str | None = None,
        delay: Duration | None = None,
    ) -> RunHandle:
        """Start a run now (or after ``delay``). Idempotent by ``run_id``: starting an id
        that exists returns a handle to the existing run and changes nothing.
        """
        definition = self._definition(workflow)
        run_id = self._runs.start(
            definition, input, run_id=run_id, priority=priority, pool=pool, delay=delay
        )
        return RunHandle(
            run_id, get_run=self.get_run, cancel=self.cancel, pause=self._runtime.await_end
        )

    def get_run(self, run_id: str) -> RunInfo | None:
        """The run with this id, or None."""
        return self._runs.get(run_id)

    def list_runs(
        self,
        *,
        workflow: str | None = None,
        status: RunStatus | str | None = None,
        schedule_key: str | None = None,
        limit: int = 100,
        before: str | None = None,
        parent: str | None = None,
    ) -> list[RunInfo]:
        """Runs matching every filter given, newest first.

        ``before=<run id>`` gives the next page after a page that ended with that run
        (stable while new runs arrive); none if there is no such run. ``parent=<run id>``:
        the child runs that run started (``ctx.start``, ``ctx.map``).
        """
        return self._runs.query(
            workflow=workflow, status=status, schedule_key=schedule_key, limit=limit,
            before=before, parent=parent,
        )  # fmt: skip

    def list_steps(self, run_id: str) -> list[StepInfo]:
        """The checkpoints a run has recorded, in order (steps, sleeps, ``now()``s)."""
        return self._runs.steps(run_id)

    def cancel(self, run_id: str) -> bool:
        """Cancel a run: at once if pending, sleeping or waiting, at its next step if
        running; its unfinished child runs (and theirs) with it.

        False when the run is unknown or already finished.
        """
        return self._runs.cancel(run_id)

    # -- schedules -----------------------------------------------------------------------

    @takes_schedule_options
    def schedule(
        self,
        workflow: str | Callable[..., Any],
        input: Any = None,
        **options: Unpack[ScheduleOptions],
    ) -> str:
        """Register a schedule (cron or fixed interval) for ``workflow``; return its key.

        The options are ``ScheduleSpec``'s fields (``inspect.signature`` lists them with
        their defaults; DESIGN §3 says what each does). Everything is validated before
        anything is stored. Registering the same definition again changes nothing, so
        calling this at every start-up is the intended use.
        """
        check_option_names(options, "schedule")
        spec = make_spec(workflow=self._definition(workflow).name, input=input, **options)
        return self.add_schedule(spec)

    def add_schedule(self, spec: ScheduleSpec) -> str:
        """Register a schedule from its spec (what the server and declarations build);
        ``schedule()`` with the spec's fields as arguments. Returns the key."""
        if not isinstance(spec, ScheduleSpec):
            raise ConfigError(f"add_schedule takes a ScheduleSpec, not {spec!r}")
        if not self._calendars_synced and any(
            spec.calendar == calendar.name for calendar in self._declared_calendars
        ):
            self.sync_calendars()  # a declared calendar is there before its first user
        return self._schedules.register(spec)

    def sync_schedules(self) -> list[str]:
        """Register every declared schedule, after the declared calendars
        (``sync_calendars``); return the keys registered.

        Declared: ``@engine.workflow(schedule=...)``, then ``Engine(schedules=[...])``, then
        the config file's ``[[schedules]]`` (``Engine(config=...)``, ``$TICKWORK_CONFIG`` or
        ./tickwork.toml), later sources winning by key. Workers call it when they start.
        A schedule whose calendar is not stored does not stop the others: it is left out,
        reported to ``on_error`` (without one: logged at ERROR) naming it and its
        calendar, and registered by this engine's worker once the calendar is stored.
        """
        self.sync_calendars()
        return self._schedules.register_declared(self._declarations.specs(self._registry))

    def sync_calendars(self) -> list[str]:
        """Store the declared calendars (``Engine(calendars=[Calendar(...)])``) that are
        not stored as declared; return every declared calendar's name. One stored as
        declared is left alone (its resolved years kept). ``sync_schedules`` calls it
        first, so workers store them at start-up before the schedules that use them."""
        names = self._calendars.sync(self._declared_calendars)
        self._calendars_synced = True
        return names

    def unschedule(self, key: str) -> bool:
        """Remove a schedule for the whole fleet (its runs stay); False if unknown."""
        return self._schedules.unschedule(key)

    def pause(self, key: str, note: str | None = None) -> bool:
        """Stop firing; occurrences meanwhile are missed, handled by catch-up on resume.

        ``note`` says why (kept as ``ScheduleInfo.note`` and in the history); False for an
        unknown key. The same ``note=`` is taken by ``resume``, ``deactivate``, ``activate``.
        """
        return self._schedules.set_state(key, ScheduleAction.PAUSE, note) is not None

    def resume(self, key: str, note: str | None = None) -> bool:
        """Fire again after a pause; missed occurrences are decided by ``catchup``."""
        return self._schedules.set_state(key, ScheduleAction.RESUME, note) is not None

    def deactivate(self, key: str, note: str | None = None) -> bool:
        """Stop firing; occurrences while inactive never run."""
        return self._schedules.set_state(key, ScheduleAction.DEACTIVATE, note) is not None

    def activate(self, key: str, note: str | None = None) -> bool:
        """Fire again, from the first occurrence after now."""
        return self._schedules.set_state(key, ScheduleAction.ACTIVATE, note) is not None

    def trigger(self, key: str, new_run: bool = False) -> str | None:
        """Start the current occurrence now (idempotent); its run id, or None if unknown.
        With ``new_run``, start a new run now whatever the current occurrence has."""
        triggered = self._schedules.trigger(key, new_run=new_run)
        return None if triggered is None else triggered.run_id

    def run_now(self, key: str, new_run: bool = False) -> Triggered | None:
        """``trigger``, saying which happened: the run started, or the one the current
        occurrence already had (``started`` False) and its status. What the CLI, the API
        and the dashboard's "Run now" answer with."""
        return self._schedules.trigger(key, new_run=new_run)

    def backfill(
        self,
        key: str,
        start: datetime,
        end: datetime,
        *,
        overlap: str | None = None,
    ) -> list[str]:
        """Start a run for every occurrence of the schedule in ``[start, end)`` (past or
        future), oldest first; their run ids. Idempotent: an occurrence that has a run is
        not started again (its id is returned). Each is recorded as "backfilled"; the
        schedule's next occurrence does not move. ``overlap`` overrides the schedule's
        ("buffer_all": one by one; "allow": all at once). ``ConfigError`` for an unknown
        key, a bad span or more than 100,000 occurrences, with nothing stored."""
        return self._schedules.backfill(key, start, end, overlap).run_ids

    def backfill_count(self, key: str, start: datetime, end: datetime) -> int:
        """How many occurrences ``backfill(key, start, end)`` would decide (the
        dashboard's preview); ``ConfigError`` as ``backfill`` raises it."""
        return self._schedules.backfill_count(key, start, end)

    def get_schedule(self, key: str) -> ScheduleInfo | None:
        return self._schedules.get(key)

    def list_schedules(
        self, *, workflow: str | None = None, state: ScheduleState | str | None = None
    ) -> list[ScheduleInfo]:
        """Every schedule, or only those of ``workflow`` and in ``state`` (each filter
        given); ``ConfigError`` for an unknown state."""
        return self._schedules.list_all(workflow=workflow, state=state)

    def schedule_history(self, key: str, limit: int = 100) -> list[HistoryEntry]:
        """Every decision about the schedule's occurrences, newest first."""
        return self._schedules.history(key, limit)

    # -- workers -------------------------------------------------------------------------

    def list_workers(self) -> list[WorkerInfo]:
        """Every worker seen within the last day, gone ones included (``alive`` False once
        it missed three renewals or stopped), oldest start first."""
        return list_workers(self._runtime)

    # -- business calendars ----------------------------------------------------------------

    def calendar(
        self,
        name: str,
        *,
        holidays: Iterable[date | str] = (),
        country: str | None = None,
        subdivision: str | None = None,
        weekend: Iterable[str] = ("SAT", "SUN"),
    ) -> CalendarInfo:
        """Store the business calendar ``name`` (replacing one of that name whole): the
        dates ``holidays`` lists, plus the public holidays of ``country`` (and
        ``subdivision``) from the optional ``holidays`` package, resolved per year and
        stored; ``weekend``'s days are not business days either. ``ConfigError`` for bad
        input (nothing stored), naming the extra when a country needs it."""
        return self._calendars.set(
            name, holidays=holidays, weekend=weekend, country=country, subdivision=subdivision
        )

    def get_calendar(self, name: str) -> CalendarInfo | None:
        """The stored calendar ``name``, or None."""
        return self._calendars.get(name)

    def list_calendars(self) -> list[CalendarInfo]:
        """Every stored calendar, by name."""
        return self._calendars.list()

    def delete_calendar(self, name: str) -> bool:
        """Delete the calendar ``name``; False when there is none. ``CalendarInUse``
        (naming them) while schedules use it: they would lose the holidays they skip."""
        return self._calendars.delete(name)

    def calendar_holidays(self, name: str, year: int) -> tuple[Holiday, ...]:
        """Calendar ``name``'s holidays of ``year`` in date order: the listed dates (their
        name is ``""``) and its country's public holidays, resolved and stored the first
        time a year is asked for. ``ConfigError`` for an unknown calendar."""
        return self._calendars.holidays(name, year)

    # -- API keys ------------------------------------------------------------------------

    def create_api_key(self, name: str) -> str:
        """Create an API key for the HTTP API and dashboard; return it (shown only now)."""
        return self._api_keys.create(name)

    def list_api_keys(self) -> list[ApiKeyInfo]:
        """Every API key, revoked ones included (never their secrets)."""
        return self._api_keys.list_all()

    def revoke_api_key(self, name_or_id: str) -> bool:
        """Revoke the live key with this name or id; False when there is none."""
        return self._api_keys.revoke(name_or_id)

    def verify_api_key(self, key: str) -> str | None:
        """The id of the live API key ``key`` is, or None (checked in constant time)."""
        return self._api_keys.verify(key)

    # -- executing -----------------------------------------------------------------------

    def tick(self) -> list[str]:
        """One scheduler pass at ``clock.now()``: fire every due occurrence (deadlines and
        event buffers too); return the ids of the runs it started."""
        return self._firing.tick()

    def run_until_idle(self) -> int:
        """Execute, in this thread, every run runnable at ``clock.now()`` until none is.

        Returns how many run attempts were executed.
        """
        self.sync_subscriptions()  # what its runs emit is routed as a worker would
        return run_until_idle(self._runtime)

    def run_worker(
        self, *, threads: int = 8, drain_timeout: Duration = "30s", poll_interval: Duration = "1s"
    ) -> None:
        """Fire schedules and execute runs until SIGINT or SIGTERM, then drain and return.

        A second signal during the drain exits at once, releasing the leases of the runs
        it abandons (another worker takes them now) and recording the worker stopped.
        """
        run_until_signalled(self._make_worker(threads, drain_timeout, poll_interval))

    @contextlib.contextmanager
    def worker(
        self, *, threads: int = 8, drain_timeout: Duration = "30s", poll_interval: Duration = "1s"
    ) -> Iterator[Worker]:
        """The worker loop on a background thread for the duration of a ``with`` block."""
        with self._make_worker(threads, drain_timeout, poll_interval).in_background() as worker:
            yield worker

    def _make_worker(
        self, threads: int, drain_timeout: Duration, poll_interval: Duration
    ) -> Worker:
        self.migrate()  # an unreachable database is raised here, not on the worker's thread
        worker = Worker(
            self._runtime,
            self._firing,
            threads=threads,
            drain_timeout=drain_timeout,
            poll_interval=poll_interval,
            housekeeping=self._pruner,
            held_back=self._schedules.held_back,  # into its record, for the faces
        )
        self.sync_schedules()
        self.sync_subscriptions()
        return worker

    # -- events (DESIGN §9) --------------------------------------------------------------

    def emit(self, name: str, payload: Any = None, *, id: str | None = None) -> list[str]:
        """Emit an event: stored, and in the same transaction one run of every subscribed
        workflow started and every waiting run it matches woken. Returns the ids of the
        runs it started; idempotent by ``id`` (the same id again starts nothing new and
        returns the same ids)."""
        self.sync_subscriptions()
        return self._events.emit(name, payload, event_id=id)

    def emit_event(self, name: str, payload: Any = None, *, id: str | None = None) -> EventInfo:
        """``emit``, returning the event as stored (``EventInfo``) instead of the run ids:
        its id (the one made when none is given), the runs it started and the waiting runs
        it woke. For an id emitted before, nothing is emitted again: the stored event."""
        self.sync_subscriptions()
        return self._events.emit_event(name, payload, event_id=id)

    def subscribe(
        self,
        workflow: str | Callable[..., Any],
        name: str,
        *,
        match: Mapping[str, Any] | None = None,
        key: str | None = None,
    ) -> str:
        """Start a run of ``workflow`` for every event ``name`` whose payload matches
        ``match`` (dotted paths to values); stored, idempotent by ``key``. Returns the key."""
        return self._events.subscribe(self._definition(workflow), name, match=match, key=key)

    def unsubscribe(self, key: str) -> bool:
        """Remove a subscription; False when there was none."""
        return self._events.unsubscribe(key)

    def list_subscriptions(self) -> list[SubscriptionInfo]:
        """Every stored subscription, declared and made by ``subscribe``, by key."""
        self.sync_subscriptions()
        return self._events.subscriptions()

    def subscription_history(self, key: str, limit: int = 100) -> list[SubscriptionDecision]:
        """A debounced or batched subscription's decisions, newest first: each event
        debounced or batched, each run started and why, each buffer dropped ([] for a
        key with none; kept after ``unsubscribe``, until the retention)."""
        return self._events.history(key, limit)

    def list_events(self, *, name: str | None = None, limit: int = 100) -> list[EventInfo]:
        """The newest events (of ``name``, when given), newest first."""
        return self._events.query(name=name, limit=limit)

    def get_event(self, id: str) -> EventInfo | None:
        """One event by id, with the runs it started and woke, or None."""
        return self._events.get(id)

    def sync_subscriptions(self) -> list[str]:
        """Store the declared subscriptions (``@engine.workflow(on=...)``) not stored yet
        by this engine; their keys. Workers call it when they start, ``emit`` first."""
        return self._events.sync_declared(list(self._registry))

    # -- retention -----------------------------------------------------------------------

    def prune(self, *, older_than: Duration | None = None) -> int:
        """Remove now what retention no longer keeps (one full pass, in bounded batches);
        return how many rows went. Workers do this in the background.

        ``older_than`` replaces every retention for this pass: ended runs and history
        entries older than it go, whatever their workflow's retention.
        """
        return self._pruner.prune(older_than=older_than).total

    # -- cadence preview -----------------------------------------------------------------

    def preview(
        self,
        *,
        cron: str | None = None,
        every: Duration | None = None,
        timezone: str = "UTC",
        after: datetime | None = None,
        count: int = 5,
        dst_gap: str = "shift",
        dst_repeat: str = "first",
        calendar: str | None = None,
        on_holiday: str = "skip",
    ) -> list[datetime]:
        """The next ``count`` occurrences of a cadence after ``after`` (default: now); a
        cron expression's under the DST policy ``dst_gap`` / ``dst_repeat``, its
        ``nBD`` / ``LBD`` counted on the stored ``calendar``. The occurrences the
        calendar skips or moves (by ``on_holiday``) are listed too: each is an
        occurrence; ``tickwork cron --calendar`` and the API's preview mark them."""
        start = after or self.clock.now()
        days = None
        if calendar is not None:
            found = self.get_calendar(calendar) if isinstance(calendar, str) else None
            days = days_for_preview(calendar, found, self.calendar_holidays, start)
            holiday_marks(days, on_holiday, timezone, [])  # a bad policy is refused
        elif on_holiday != "skip":
            raise ConfigError(f"on_holiday={on_holiday!r} needs a calendar=")
        return preview(
            cron=cron,
            every=every,
            timezone=timezone,
            after=start,
            count=count,
            dst_gap=dst_gap,
            dst_repeat=dst_repeat,
            calendar=days,
        )

    # -- lifecycle -----------------------------------------------------------------------

    @functools.cached_property
    def console(self) -> Console:
        """What only the faces (CLI, server) ask: not part of the public surface
        (``docs/architecture.md``, "the faces' door")."""
        return Console(
            self.url,
            runtime=self._runtime,
            registry=self._registry,
            runs=self._runs,
            schedules=self._schedules,
            events=self._events,
            pruner=self._pruner,
            api_keys=self._api_keys,
            declared=lambda: self._declarations.specs(self._registry),
        )

    def migrate(self) -> int:
        """Apply pending schema migrations now; return the schema version."""
        return self._runtime.migrate()

    def close(self) -> None:
        """Release the database connections."""
        self._runtime.close()

    def __enter__(self) -> Engine:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"Engine({self.url!r})"

    def for_test(self, *, clock: _clock.Clock) -> Engine:
        """A new engine like this one on a private store in memory (``sqlite://``), on
        ``clock`` (a ``FakeClock``): this engine's workflows (their declared schedules with
        them), run hooks, ``on_error``, declared schedules, calendars and config file,
        pools, lease, retention and fire-ahead, as they are now. Nothing of this engine's
        database is opened; close the copy (``with``) to drop its store.
        ``tickwork.testing.engine_for_test`` wraps it."""
        copy = Engine("sqlite://", clock=clock, **self._settings)
        copy._declarations = self._declarations
        for definition in self._registry:
            copy._registry.add(definition)
        mine, theirs = self._runtime.hooks, copy._runtime.hooks
        theirs.started.extend(mine.started)
        theirs.completed.extend(mine.completed)
        theirs.failed.extend(mine.failed)
        theirs.deadline_missed.extend(mine.deadline_missed)
        return copy

    # -- internals -----------------------------------------------------------------------

    def _definition(self, workflow: str | Callable[..., Any]) -> WorkflowDef:
        name = getattr(workflow, "__tickwork_workflow__", workflow)
        if not isinstance(name, str):
            raise UnknownWorkflowError(repr(workflow))
        return self._registry.get(name)
