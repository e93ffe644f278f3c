"""The JSON of every API shape and the OpenAPI document, as they were before issue 48
declared each shape once: a change to either shows here (``golden/``), not in a client.

Regenerate (only for a change meant to show on the wire):
``TICKWORK_WRITE_GOLDEN=1 pytest tests/unit/test_wire_golden.py``.
"""

from __future__ import annotations

import json
import os
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from tickwork._edge import calendar_wire as calendar_wire
from tickwork._edge import event_wire as event_wire
from tickwork._edge import wire as wire
from tickwork._rules.liveness import HeldBack
from tickwork._values.business_days import BusinessDays
from tickwork._values.event_flow import FlowDecision, SubscriptionDecision
from tickwork._values.holidays import Holiday
from tickwork._values.models import (
    Backfilled,
    CalendarInfo,
    Decision,
    DstGap,
    DstRepeat,
    EventInfo,
    HistoryEntry,
    OnHoliday,
    Overlap,
    RunInfo,
    RunStatus,
    ScheduleAction,
    ScheduleInfo,
    ScheduleState,
    StepInfo,
    StepTry,
    SubscriptionInfo,
    Triggered,
    WorkerInfo,
)
from tickwork._values.wire_values import from_json, to_json
from tickwork.server.openapi import openapi_document

GOLDEN = Path(__file__).parent / "golden"
T0 = datetime(2026, 3, 1, 12, 0, 0, 123000, tzinfo=UTC)
T1 = T0 + timedelta(minutes=5, milliseconds=7)

RUN = RunInfo(
    id="nightly@2026-03-01T12:00:00Z", workflow="report", version="3", status=RunStatus.FAILED,
    input={"a": [1, 2.5, None, "x"]}, result=None, error="boom\nsecond line", attempt=2,
    priority=-1, pool="default", schedule_key="nightly", scheduled_for=T0, created_at=T0,
    started_at=T1, finished_at=None, schedule_revision=4, traceback="File x, line 1",
)  # fmt: skip
PENDING = RunInfo(
    id="r2", workflow="w", version="1", status=RunStatus.PENDING, input=None, result=None,
    error=None, attempt=0, priority=0, pool="p", schedule_key=None, scheduled_for=None,
    created_at=T0, started_at=None, finished_at=None,
)  # fmt: skip
TRY = StepTry(attempt=1, error="nope", traceback=None, started_at=T0, finished_at=T1)
STEPS = [
    StepInfo(run_id=RUN.id, name="fetch", kind="step", status="completed", result={"n": 1},
             error=None, attempts=2, started_at=T0, finished_at=T1, tries=(TRY,)),
    StepInfo(run_id=RUN.id, name="nap", kind="sleep", status="completed", result=None,
             error=None, attempts=1, started_at=T1, finished_at=T1),
]  # fmt: skip
SCHEDULE = ScheduleInfo(
    key="nightly", workflow="report", input={"x": 1}, cron="0 3 * * *", every=None,
    timezone="Europe/Paris", overlap=Overlap.SKIP, catchup="all",
    jitter=timedelta(seconds=90, milliseconds=500), pool="default", priority=2,
    state=ScheduleState.PAUSED, revision=4, next_fire_at=T1, last_fire_at=T0,
    last_run_id=RUN.id, last_run_status=RunStatus.FAILED, created_at=T0, updated_at=T1,
    note="db migration", state_changed_at=T1, pause_after_failures=3, max_runs=10,
    runs_left=7, deadline=timedelta(hours=1, minutes=30), overdue_by=timedelta(seconds=2),
    dst_gap=DstGap.SKIP, dst_repeat=DstRepeat.BOTH, calendar="fr", on_holiday=OnHoliday.NEXT,
)  # fmt: skip
EVERY = ScheduleInfo(
    key="tick", workflow="w", input=None, cron=None, every=timedelta(minutes=1),
    timezone="UTC", overlap=Overlap.ALLOW, catchup=0, jitter=None, pool="p", priority=0,
    state=ScheduleState.ACTIVE, revision=1, next_fire_at=None, last_fire_at=None,
    last_run_id=None, last_run_status=None, created_at=T0, updated_at=T0,
)  # fmt: skip
HISTORY = [
    HistoryEntry(key="nightly", occurrence=T0, decision=Decision.SKIPPED_OVERLAP, reason="overlap",
                 run_id=None, revision=4, decided_at=T1, count=3, last_occurrence=T1),
    HistoryEntry(key="nightly", occurrence=T0, decision=Decision.STARTED, reason="due",
                 run_id=RUN.id, revision=4, decided_at=T1),
]  # fmt: skip
WORKER = WorkerInfo(
    id="w-1", host="box", pid=42, pools=("default", "b"), workflows=("report",),
    version="0.1.0", started_at=T0, last_seen=T1, alive=True, stopped_at=None,
    waiting_for_calendars=(("a", "de"), ("monthly", "fr")),
)  # fmt: skip
GONE = WorkerInfo(
    id="w-2", host="box", pid=43, pools=(), workflows=(), version="0.1.0",
    started_at=T0, last_seen=T0, alive=False, stopped_at=T1,
)  # fmt: skip
EVENT = EventInfo(name="paid", id="e1", payload={"user": 7}, emitted_at=T0,
                  started=("r1", "r2"), woke=("r3",))  # fmt: skip
SUBSCRIPTIONS = [
    SubscriptionInfo(key="s1", workflow="w", name="paid", match={"user": 7},
                     input={"u": "user"}, declared=True, created_at=T0,
                     debounce=timedelta(seconds=5), debounce_max=timedelta(hours=1),
                     group_key="user"),
    SubscriptionInfo(key="s2", workflow="w", name="paid", match=None, input=None,
                     declared=False, created_at=T0, batch=100,
                     batch_window=timedelta(seconds=10)),
]  # fmt: skip
DECISIONS = [
    SubscriptionDecision(key="s1", decision=FlowDecision.DEBOUNCED, reason="quiet",
                         group=7, event_id="e1", run_id="r1", count=2, due_at=T1,
                         decided_at=T0),
    SubscriptionDecision(key="s1", decision=FlowDecision.BATCHED, reason="r", group=None,
                         event_id=None, run_id=None, count=1, due_at=None, decided_at=T1),
]  # fmt: skip
CALENDAR = CalendarInfo(name="fr", weekend=("SAT", "SUN"), holidays=(date(2026, 5, 1),),
                        country="FR", subdivision=None, updated_at=T0)  # fmt: skip
HOLIDAYS = [Holiday(date(2026, 1, 1), "New Year"), Holiday(date(2026, 5, 1), "")]


def _shapes() -> dict[str, Any]:
    days = BusinessDays(name="fr", holidays=frozenset({date(2026, 3, 2)}))
    return {
        "schedule": to_json(SCHEDULE),
        "schedule_every": to_json(EVERY),
        "schedule_list": wire.schedule_list_to_wire(
            [SCHEDULE], [HeldBack("m", "fr", (WORKER,)), HeldBack("n", "de")]
        ),
        "state_changed": wire.state_change_to_wire(SCHEDULE, ScheduleAction.PAUSE, False),
        "history": wire.history_list_to_wire(HISTORY),
        "backfilled": wire.backfilled_to_wire("nightly", Backfilled(["a", "b"], 1, 1)),
        "triggered": wire.triggered_to_wire("nightly", Triggered("r", True, RunStatus.PENDING)),
        "run": to_json(RUN),
        "run_page": wire.run_page_to_wire([RUN, PENDING, RUN], offset=0, limit=2),
        "run_detail": wire.run_detail_to_wire(RUN, STEPS),
        "steps": [wire.step_to_wire(s) for s in STEPS],
        "workers": wire.worker_list_to_wire([WORKER, GONE]),
        "preview_cron": wire.preview_to_wire(
            cron="30 2 * * *",
            every=None,
            timezone="Europe/Paris",
            occurrences=[
                datetime(2026, 3, 29, 1, 0, tzinfo=UTC),
                datetime(2026, 3, 30, 0, 30, tzinfo=UTC),
            ],
            after=datetime(2026, 3, 28, tzinfo=UTC),
        ),
        "preview_calendar": wire.preview_to_wire(
            cron="0 9 * * *",
            every=None,
            timezone="UTC",
            occurrences=[datetime(2026, 3, 2, 9, tzinfo=UTC)],
            after=datetime(2026, 3, 1, tzinfo=UTC),
            calendar=days,
            on_holiday="next",
        ),
        "preview_every": wire.preview_to_wire(
            cron=None, every="90s", timezone="UTC", occurrences=[T0, T1], after=T0
        ),
        "error": wire.error_body("CRON_ERROR", "bad", {"field": "minute"}),
        "event": to_json(EVENT),
        "events": event_wire.event_list_to_wire([EVENT]),
        "emitted": event_wire.emitted_to_wire(EVENT),
        "subscriptions": event_wire.subscription_list_to_wire(SUBSCRIPTIONS),
        "decisions": event_wire.decision_list_to_wire(DECISIONS),
        "calendar": to_json(CALENDAR),
        "calendars": calendar_wire.calendar_list_to_wire([CALENDAR]),
        "calendar_year": calendar_wire.calendar_year_to_wire(CALENDAR, 2026, HOLIDAYS),
    }


def _compare(name: str, value: Any, *, ordered: bool) -> None:
    path = GOLDEN / f"{name}.json"
    text = json.dumps(value, indent=1, ensure_ascii=False) + "\n"
    if os.environ.get("TICKWORK_WRITE_GOLDEN"):
        path.write_text(text, encoding="utf-8")
    if ordered:
        assert text == path.read_text(encoding="utf-8")
    else:  # every key and value, lists in order; an object's keys in any order
        assert _unordered(value) == _unordered(json.loads(path.read_text(encoding="utf-8")))


def _unordered(value: Any) -> Any:
    """A JSON value to compare by meaning: a schema's ``required`` names as a set."""
    if isinstance(value, dict):
        return {
            k: set(v) if k == "required" and isinstance(v, list) else _unordered(v)
            for k, v in value.items()
        }
    if isinstance(value, list):
        return [_unordered(item) for item in value]
    return value


def test_every_shape_sends_the_json_it_sent() -> None:
    # Keys follow each dataclass's fields since issue 48 (a run's schedule_revision
    # after finished_at...): JSON objects are unordered, no client reads them in order.
    _compare("shapes", _shapes(), ordered=False)


def test_the_openapi_document_is_what_it_was() -> None:
    # A schema drawn from a dataclass lists its properties in the dataclass's order.
    _compare("openapi", openapi_document(), ordered=False)


@pytest.mark.parametrize(
    "value",
    [SCHEDULE, EVERY, RUN, PENDING, HISTORY[0], EVENT, SUBSCRIPTIONS[0], CALENDAR],
    ids=lambda value: type(value).__name__,
)
def test_the_client_reads_each_shape_back(value: Any) -> None:
    assert from_json(type(value), json.loads(json.dumps(to_json(value)))) == value


@pytest.mark.parametrize(
    ("to_wire", "from_wire", "value"),
    [
        (wire.step_to_wire, lambda data: from_json(StepInfo, data), STEPS[0]),
        (wire.worker_to_wire, wire.worker_from_wire, GONE),
    ],
)
def test_the_client_reads_the_shapes_whose_json_differs_back(
    to_wire: Any, from_wire: Any, value: Any
) -> None:
    assert from_wire(json.loads(json.dumps(to_wire(value)))) == value


def test_the_client_reads_lists_back() -> None:
    assert wire.worker_from_wire(wire.worker_to_wire(WORKER)) == WORKER
    assert event_wire.decision_list_from_wire(event_wire.decision_list_to_wire(DECISIONS)) == (
        DECISIONS
    )
    year = calendar_wire.calendar_year_to_wire(CALENDAR, 2026, HOLIDAYS)
    assert calendar_wire.holidays_from_wire(year) == tuple(HOLIDAYS)
