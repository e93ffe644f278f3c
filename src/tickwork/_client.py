"""``Client``: the schedule and run API of ``Engine``, over HTTP to ``tickwork serve``.

Same method names, parameters, results and errors as ``Engine``: ``ScheduleInfo``,
``RunInfo`` and ``HistoryEntry`` come back as the same dataclasses, and an error the
engine raised on the server is raised here as the same class (``CronError``,
``UnknownWorkflowError``, ``ScheduleConflict``...), rebuilt from its wire ``code``. What
only HTTP can go wrong (a bad API key, no answer) raises ``ApiError``.

Schedule options are checked here as ``Engine`` checks them (one ``ScheduleSpec``), then
sent as duration strings ("1h30m") and ISO 8601; the workflow and its input are checked
by the server.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Mapping
from datetime import UTC, date, datetime
from typing import TYPE_CHECKING, Any, Unpack
from urllib.parse import quote

import pydantic

from ._edge.async_api import with_twins
from ._edge.calendar_wire import (
    calendar_list_from_wire,
    holidays_from_wire,
)
from ._edge.event_wire import (
    decision_list_from_wire,
    emitted_from_wire,
    event_list_from_wire,
)
from ._edge.wire import (
    error_from_wire,
    instant_from_wire,
    spec_to_wire,
    worker_from_wire,
)
from ._rules.calendars import declared_calendar, is_calendar_name, unknown_calendar
from ._rules.spec import ScheduleOptions, check_option_names, make_spec, takes_schedule_options
from ._values import clock as _clock
from ._values.checks import check_name, check_note
from ._values.durations import Duration, format_duration, parse_duration
from ._values.event_flow import SubscriptionDecision
from ._values.events import check_event_id, check_event_name, payload_json
from ._values.handle import RunHandle
from ._values.holidays import Holiday, check_year
from ._values.ids import canonical_json
from ._values.models import (
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
from ._values.wire_values import from_json
from .errors import (
    ApiError,
    ConfigError,
    StoreError,
    UnknownWorkflowError,
)

if TYPE_CHECKING:
    import httpx

__all__ = ["Client"]

_API = "/api/v1"
# 404 codes that mean "no such schedule / run": the engine's None or False.
_MISSING = frozenset(
    {"SCHEDULE_NOT_FOUND", "RUN_NOT_FOUND", "EVENT_NOT_FOUND", "CALENDAR_NOT_FOUND"}
)
#: any instant: a calendar is checked here, and stamped by the server's clock
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


def _segment(value: str) -> str:
    """``value`` as one path segment: every reserved character escaped, dots included
    (``.`` and ``..`` would otherwise be read as relative paths)."""
    return quote(value, safe="").replace(".", "%2E")


def _instant(value: object, name: str) -> str | None:
    if value is None:
        return None
    if not isinstance(value, datetime):
        raise ConfigError(f"{name} must be an aware datetime, not {value!r}")
    if value.tzinfo is None:
        return value.isoformat()  # refused by the server's engine, as by a local one
    return value.astimezone(UTC).isoformat()


def _duration(value: Duration | None) -> str | None:
    """A duration as the API reads it ("1h30m"), checked here: a bare number is refused
    before anything is sent."""
    return None if value is None else format_duration(parse_duration(value))


def _workflow_name(workflow: str | Callable[..., Any]) -> str:
    name = getattr(workflow, "__tickwork_workflow__", workflow)
    if not isinstance(name, str):
        raise UnknownWorkflowError(repr(workflow))
    return name


def _input(value: Any, workflow: str) -> Any:
    if isinstance(value, pydantic.BaseModel):
        return value.model_dump(mode="json")
    # the engine's check: a JSON value (no NaN, no sets, not too deep, no lone surrogate)
    canonical_json(value, what=f"Input of workflow {workflow!r}")
    return value


def _poll_pause(seconds: float, look: int) -> None:
    """Between looks at a remote run: 50 ms at first, doubling up to a second."""
    _clock.sleep(min(seconds, 0.05 * 2 ** min(look, 5), 1.0))


@with_twins  # the *_async twins (TWINNED in _async_api)
class Client:
    """``Engine``'s schedule and run methods against a tickwork server.

    ``url`` is the server's root (``http://127.0.0.1:8787``); ``api_key`` defaults to
    ``$TICKWORK_API_KEY``; ``timeout`` bounds each request, in seconds.
    """

    def __init__(self, url: str, *, api_key: str | None = None, timeout: float = 30.0) -> None:
        try:
            import httpx  # the server extra: ``import tickwork`` works without it
        except ImportError as exc:
            raise ImportError("Client needs httpx: pip install 'tickwork[server]'") from exc
        key = api_key if api_key is not None else os.environ.get("TICKWORK_API_KEY")
        if not key:
            raise ConfigError("Client needs an API key: api_key=... or $TICKWORK_API_KEY")
        base = url.rstrip("/")
        if not base.endswith(_API):
            base += _API
        self.url = url
        self._transport_error: type[Exception] = httpx.HTTPError
        self._http: httpx.Client = httpx.Client(
            base_url=base,
            headers={"Authorization": f"Bearer {key}", "Accept": "application/json"},
            timeout=timeout,
        )

    # -- plumbing --------------------------------------------------------------------------

    def _request(
        self,
        method: str,
        path: str,
        *,
        params: dict[str, Any] | None = None,
        body: dict[str, Any] | None = None,
        missing_ok: bool = False,
    ) -> Any:
        """The JSON answer; None for a missing schedule or run when ``missing_ok``."""
        query = {k: v for k, v in (params or {}).items() if v is not None}
        try:
            response = self._http.request(method, path, params=query, json=body)
        except self._transport_error as exc:
            raise ApiError(f"{method} {path}: no answer from the server: {exc}") from exc
        if response.is_success:
            return response.json()
        try:
            error = response.json()["error"]
            code, message = str(error["code"]), str(error["message"])
            details = error.get("details")
        except (ValueError, KeyError, TypeError):
            raise ApiError(
                f"{method} {path}: HTTP {response.status_code}: {response.text[:200]}",
                status=response.status_code,
            ) from None
        if missing_ok and response.status_code == 404 and code in _MISSING:
            return None
        rebuilt = error_from_wire(code, message, details if isinstance(details, dict) else None)
        if rebuilt is not None:
            raise rebuilt
        raise ApiError(message, status=response.status_code, error_code=code)

    def close(self) -> None:
        self._http.close()

    def __enter__(self) -> Client:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"Client({self.url!r})"

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
        """Start a run now (or after ``delay``); idempotent by ``run_id``."""
        name = _workflow_name(workflow)
        body = {
            "workflow": name,
            "input": _input(input, name),
            "run_id": run_id,
            "priority": priority,
            "pool": pool,
            "delay": _duration(delay),
        }
        run = self._request("POST", "/runs", body=body)
        return RunHandle(run["id"], get_run=self.get_run, cancel=self.cancel, pause=_poll_pause)

    def get_run(self, run_id: str) -> RunInfo | None:
        """The run with this id, or None."""
        if not isinstance(run_id, str) or not run_id:
            return None
        found = self._request("GET", f"/runs/{_segment(run_id)}", missing_ok=True)
        return None if found is None else from_json(RunInfo, found)

    def list_steps(self, run_id: str) -> list[StepInfo]:
        """The checkpoints a run has recorded, in order ([] for an unknown run)."""
        if not isinstance(run_id, str) or not run_id:
            return []
        found = self._request("GET", f"/runs/{_segment(run_id)}", missing_ok=True)
        return [] if found is None else [from_json(StepInfo, s) for s in found["steps"]]

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
        """Runs matching every filter given, newest first; ``before`` and ``parent`` as
        ``Engine``'s."""
        for name, value in (("before", before), ("parent", parent)):
            if value is not None and (not isinstance(value, str) or not value):
                raise ConfigError(f"{name} must be a run id, not {value!r}")
        params = {
            "workflow": workflow,
            "status": None if status is None else str(getattr(status, "value", status)),
            "schedule_key": schedule_key,
            "limit": limit if isinstance(limit, int) and not isinstance(limit, bool) else "",
            "before": before,
            "parent": parent,
        }
        page = self._request("GET", "/runs", params=params)
        return [from_json(RunInfo, r) for r in page["runs"]]

    def cancel(self, run_id: str) -> bool:
        """Cancel a run; False when it is unknown or already finished."""
        if not isinstance(run_id, str) or not run_id:
            return False
        done = self._request("POST", f"/runs/{_segment(run_id)}/cancel", missing_ok=True)
        return bool(done is not None and done["cancelled"])

    # -- schedules -----------------------------------------------------------------------

    @takes_schedule_options
    def schedule(
        self,
        workflow: str | Callable[..., Any],
        input: Any = None,
        **options: Unpack[ScheduleOptions],
    ) -> str:
        """Register a schedule for ``workflow`` on the server; return its key.

        The options are checked here as ``Engine`` checks them (one ``ScheduleSpec``); the
        workflow and the input against its annotation are checked by the server.
        """
        check_option_names(options, "schedule")
        name = _workflow_name(workflow)
        spec = make_spec(workflow=name, input=_input(input, name), **options)
        written = self._request("POST", "/schedules", body=spec_to_wire(spec))
        return str(written["key"])

    def unschedule(self, key: str) -> bool:
        """Remove a schedule for the whole fleet (its runs stay); False if unknown."""
        if not isinstance(key, str) or not key:
            return False
        return self._request("DELETE", f"/schedules/{_segment(key)}", missing_ok=True) is not None

    def _state_change(self, key: str, action: ScheduleAction, note: str | None) -> bool:
        """A state change with its note (checked here as ``Engine`` checks it)."""
        note = check_note(note)
        if not isinstance(key, str) or not key:
            return False
        path = f"/schedules/{_segment(key)}/{action}"
        body = None if note is None else {"note": note}
        return self._request("POST", path, body=body, missing_ok=True) is not None

    def pause(self, key: str, note: str | None = None) -> bool:
        """Stop firing; occurrences meanwhile are missed, handled by catch-up on resume.

        ``note`` says why (kept as ``ScheduleInfo.note`` and in the history); False for an
        unknown key. The same ``note=`` is taken by ``resume``, ``deactivate``, ``activate``.
        """
        return self._state_change(key, ScheduleAction.PAUSE, note)

    def resume(self, key: str, note: str | None = None) -> bool:
        """Fire again after a pause; missed occurrences are decided by ``catchup``."""
        return self._state_change(key, ScheduleAction.RESUME, note)

    def deactivate(self, key: str, note: str | None = None) -> bool:
        """Stop firing; occurrences while inactive never run."""
        return self._state_change(key, ScheduleAction.DEACTIVATE, note)

    def activate(self, key: str, note: str | None = None) -> bool:
        """Fire again, from the first occurrence after now."""
        return self._state_change(key, ScheduleAction.ACTIVATE, note)

    def trigger(self, key: str, new_run: bool = False) -> str | None:
        """Start the current occurrence now (idempotent); its run id, or None if unknown.
        With ``new_run``, start a new run now whatever the current occurrence has."""
        triggered = self.run_now(key, new_run)
        return None if triggered is None else triggered.run_id

    def run_now(self, key: str, new_run: bool = False) -> Triggered | None:
        """``trigger``, saying which happened (the run started, or the one the current
        occurrence already had and its status)."""
        if not isinstance(key, str) or not key:
            return None
        path = f"/schedules/{_segment(key)}/trigger"
        done = self._request("POST", path, body={"new_run": new_run}, missing_ok=True)
        return None if done is None else from_json(Triggered, done)

    def backfill(
        self,
        key: str,
        start: datetime,
        end: datetime,
        *,
        overlap: str | None = None,
    ) -> list[str]:
        """Start a run for every occurrence in ``[start, end)``, oldest first; their run
        ids (idempotent by occurrence). ``ConfigError`` for an unknown key, a bad span or
        more than 100,000 occurrences."""
        body = {
            "start": _instant(start, "A backfill's start"),
            "end": _instant(end, "A backfill's end"),
            "overlap": overlap,
        }
        path = f"/schedules/{_segment(key)}/backfill" if isinstance(key, str) and key else None
        done = None if path is None else self._request("POST", path, body=body, missing_ok=True)
        if done is None:
            raise ConfigError(f"No schedule {key!r} to backfill")
        return [str(run_id) for run_id in done["run_ids"]]

    def get_schedule(self, key: str) -> ScheduleInfo | None:
        if not isinstance(key, str) or not key:
            return None
        found = self._request("GET", f"/schedules/{_segment(key)}", missing_ok=True)
        return None if found is None else from_json(ScheduleInfo, found)

    def list_schedules(
        self, *, workflow: str | None = None, state: ScheduleState | str | None = None
    ) -> list[ScheduleInfo]:
        """As ``Engine``'s: every schedule, or those of ``workflow`` and in ``state``."""
        params = {"workflow": workflow, "state": None if state is None else str(state)}
        found = self._request("GET", "/schedules", params=params)
        return [from_json(ScheduleInfo, s) for s in found["schedules"]]

    def schedule_history(self, key: str, limit: int = 100) -> list[HistoryEntry]:
        """Every decision about the schedule's occurrences, newest first ([] if unknown)."""
        if not isinstance(key, str) or not key:
            return []
        params = {"limit": limit if isinstance(limit, int) and not isinstance(limit, bool) else ""}
        found = self._request(
            "GET", f"/schedules/{_segment(key)}/history", params=params, missing_ok=True
        )
        return [] if found is None else [from_json(HistoryEntry, e) for e in found["history"]]

    # -- events (DESIGN §9) ----------------------------------------------------------------

    def emit(self, name: str, payload: Any = None, *, id: str | None = None) -> list[str]:
        """Emit an event; the ids of the runs it started (idempotent by ``id``)."""
        # Checked here as Engine checks them: a payload json cannot encode (100,000 deep,
        # a lone surrogate) would raise RecursionError or be refused as a malformed body.
        check_event_name(name)
        if id is not None:
            check_event_id(id)
        payload_json(payload)
        body = {"name": name, "payload": payload, "id": id}
        return emitted_from_wire(self._request("POST", "/events", body=body))

    def emit_event(self, name: str, payload: Any = None, *, id: str | None = None) -> EventInfo:
        """``emit``, returning the event as stored (``EventInfo``: the runs it started and
        woke), as ``Engine.emit_event``: the emit, then the event read back by its id."""
        body = {"name": name, "payload": payload, "id": id}
        answer = self._request("POST", "/events", body=body)
        found = self.get_event(answer["id"])
        if found is None:  # only a retention shorter than the two requests prunes it
            raise StoreError(f"event {answer['id']!r} was pruned as soon as it was emitted")
        return found

    def subscribe(
        self,
        workflow: str | Callable[..., Any],
        name: str,
        *,
        match: Mapping[str, Any] | None = None,
        key: str | None = None,
    ) -> str:
        """Subscribe ``workflow`` to events ``name`` matching ``match``; the key."""
        body = {
            "workflow": _workflow_name(workflow),
            "name": name,
            "match": None if match is None else dict(match),
            "key": key,
        }
        return str(self._request("POST", "/subscriptions", body=body)["key"])

    def unsubscribe(self, key: str) -> bool:
        """Remove a subscription; False when there was none."""
        if not isinstance(key, str) or not key:
            return False
        return bool(self._request("DELETE", f"/subscriptions/{_segment(key)}")["removed"])

    def list_subscriptions(self) -> list[SubscriptionInfo]:
        """Every stored subscription, by key."""
        found = self._request("GET", "/subscriptions")
        return [from_json(SubscriptionInfo, s) for s in found["subscriptions"]]

    def subscription_history(self, key: str, limit: int = 100) -> list[SubscriptionDecision]:
        """A debounced or batched subscription's decisions, newest first ([] if none)."""
        check_name(key, "A subscription key")  # as Engine's: no empty path segment sent
        params = {"limit": limit if isinstance(limit, int) and not isinstance(limit, bool) else ""}
        found = self._request("GET", f"/subscriptions/{_segment(key)}/history", params=params)
        return decision_list_from_wire(found)

    def list_events(self, *, name: str | None = None, limit: int = 100) -> list[EventInfo]:
        """The newest events (of ``name``, when given), newest first."""
        params = {"name": name, "limit": limit}
        return event_list_from_wire(self._request("GET", "/events", params=params))

    def get_event(self, id: str) -> EventInfo | None:
        """One event by id, or None."""
        if not isinstance(id, str) or not id:
            return None
        found = self._request("GET", f"/events/{_segment(id)}", missing_ok=True)
        return None if found is None else from_json(EventInfo, found)

    # -- workers ---------------------------------------------------------------------------

    def list_workers(self) -> list[WorkerInfo]:
        """Every worker seen within the last day, gone ones included (``alive`` False once
        it missed three renewals or stopped), oldest start first."""
        found = self._request("GET", "/workers")
        return [worker_from_wire(w) for w in found["workers"]]

    # -- business calendars (DESIGN §3) ----------------------------------------------------

    def calendar(
        self,
        name: str,
        *,
        holidays: Iterable[date | str] = (),
        country: str | None = None,
        subdivision: str | None = None,
        weekend: Iterable[str] = ("SAT", "SUN"),
    ) -> CalendarInfo:
        """As ``Engine``'s: store the business calendar ``name``. Its dates and weekend
        are checked here (``ConfigError`` before anything is sent); its country by the
        server, whose ``holidays`` extra resolves it."""
        # The country is left to the server: this process may not have the extra.
        checked = declared_calendar(
            name, holidays=holidays, weekend=weekend, country=None, subdivision=None,
            now=_EPOCH,
        )  # fmt: skip
        body = {
            "holidays": [day.isoformat() for day in checked.holidays],
            "weekend": list(checked.weekend),
            "country": country,
            "subdivision": subdivision,
        }
        return from_json(
            CalendarInfo, self._request("PUT", f"/calendars/{_segment(name)}", body=body)
        )

    def get_calendar(self, name: str) -> CalendarInfo | None:
        """The stored calendar ``name``, or None."""
        if not is_calendar_name(name):
            return None
        found = self._request("GET", f"/calendars/{_segment(name)}", missing_ok=True)
        return None if found is None else from_json(CalendarInfo, found)

    def list_calendars(self) -> list[CalendarInfo]:
        """Every stored calendar, by name."""
        return calendar_list_from_wire(self._request("GET", "/calendars"))

    def delete_calendar(self, name: str) -> bool:
        """As ``Engine``'s: False when there is none, ``CalendarInUse`` while schedules
        use it."""
        if not is_calendar_name(name):
            return False
        path = f"/calendars/{_segment(name)}"
        return self._request("DELETE", path, missing_ok=True) is not None

    def calendar_holidays(self, name: str, year: int) -> tuple[Holiday, ...]:
        """As ``Engine``'s: calendar ``name``'s holidays of ``year`` in date order;
        ``ConfigError`` for a bad year or an unknown calendar."""
        check_year(year)
        found = None
        if is_calendar_name(name):
            path = f"/calendars/{_segment(name)}"
            found = self._request("GET", path, params={"year": year}, missing_ok=True)
        if found is None:
            raise unknown_calendar(name)
        return holidays_from_wire(found)

    # -- workflows and cadences ------------------------------------------------------------

    def workflows(self) -> list[str]:
        """Names of the workflows the server's engine registered."""
        found = self._request("GET", "/workflows")
        return [w["name"] for w in found["workflows"]]

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
        """As ``Engine``'s: the next ``count`` occurrences of a cadence after ``after``
        (default: now), ``nBD`` / ``LBD`` counted on the server's stored ``calendar``."""
        params = {
            "cron": cron,
            "every": _duration(every),
            "timezone": timezone,
            "after": _instant(after, "after"),
            "count": count if isinstance(count, int) and not isinstance(count, bool) else "",
            "dst_gap": dst_gap,
            "dst_repeat": dst_repeat,
            # Sent only when asked for, so a server from before them still answers.
            "calendar": calendar,
            "on_holiday": None if on_holiday == "skip" else on_holiday,
        }
        found = self._request("GET", "/cron/preview", params=params)
        return [when for o in found["occurrences"] if (when := instant_from_wire(o["utc"]))]
