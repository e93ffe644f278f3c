"""Who serves what (``_liveness``): a worker's liveness, a schedule's lateness, why nobody
serves a pool or workflow; and the wire forms of ``WorkerInfo`` and ``overdue_by``."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime, timedelta

import pytest

from tickwork import ScheduleInfo, ScheduleState, WorkerInfo
from tickwork._edge.wire import (
    worker_from_wire,
    worker_to_wire,
)
from tickwork._rules.liveness import (
    OVERDUE_GRACE_MS,
    HeldBack,
    held_back_schedules,
    held_back_text,
    overdue_ms,
    unserved_reason,
    unserved_run,
    unserved_schedules,
    unserved_workflows,
    worker_alive,
)
from tickwork._values.models import Overlap
from tickwork._values.wire_values import from_json, to_json

T0 = datetime(2026, 3, 1, 12, tzinfo=UTC)


def worker(alive: bool = True, pools: tuple[str, ...] = ("default",), **kw: object) -> WorkerInfo:
    info = WorkerInfo(
        id="h:1:abc", host="h", pid=1, pools=pools, workflows=("report",), version="0.1.0",
        started_at=T0, last_seen=T0, alive=alive,
    )  # fmt: skip
    return replace(info, **kw)  # type: ignore[arg-type]


def schedule(**kw: object) -> ScheduleInfo:
    info = ScheduleInfo(
        key="k", workflow="report", input=None, cron=None, every=timedelta(minutes=1),
        timezone="UTC", overlap=Overlap.ALLOW, catchup=1, jitter=None, pool="default",
        priority=0, state=ScheduleState.ACTIVE, revision=1, next_fire_at=T0,
        last_fire_at=None, last_run_id=None, last_run_status=None, created_at=T0,
        updated_at=T0,
    )  # fmt: skip
    return replace(info, **kw)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("since_ms", "stopped", "alive"),
    [(0, False, True), (15_000, False, True), (15_001, False, False), (0, True, False)],
)
def test_a_worker_is_alive_until_three_renewals_are_missed_or_it_stopped(
    since_ms: int, stopped: bool, alive: bool
) -> None:
    assert worker_alive(last_seen_ms=0, renew_ms=5_000, stopped=stopped, now_ms=since_ms) is alive


@pytest.mark.parametrize(
    ("state", "next_ms", "now_ms", "late"),
    [
        (ScheduleState.ACTIVE, 1_000, 11_001, 10_001),  # past the 10 s grace: all of it
        (ScheduleState.ACTIVE, 1_000, 11_000, None),  # within the grace: a worker may look yet
        (ScheduleState.ACTIVE, 1_000, 1_271, None),
        (ScheduleState.ACTIVE, 1_000, 1_000, None),  # due this instant: not late yet
        (ScheduleState.ACTIVE, 2_000, 1_000, None),
        (ScheduleState.ACTIVE, None, 1_000, None),  # no occurrence left
        (ScheduleState.PAUSED, 1_000, 90_000, None),  # missed on purpose
        (ScheduleState.INACTIVE, 1_000, 90_000, None),
    ],
)
def test_only_an_active_schedule_whose_next_occurrence_passed_the_grace_is_overdue(
    state: ScheduleState, next_ms: int | None, now_ms: int, late: int | None
) -> None:
    assert OVERDUE_GRACE_MS == 10_000
    assert overdue_ms(state, next_ms, now_ms) == late


@pytest.mark.parametrize(
    ("active_since_ms", "now_ms", "late"),
    [
        (600_000, 600_271, None),  # resumed 271 ms ago: the worker has not looked yet
        (600_000, 610_000, None),
        (600_000, 610_001, 609_001),  # the grace passed since the resume: late from the start
        (0, 11_001, 10_001),  # active long before: the grace counts from the occurrence
    ],
)
def test_a_resumed_schedule_is_overdue_only_once_the_grace_passed_since_the_resume(
    active_since_ms: int, now_ms: int, late: int | None
) -> None:
    assert overdue_ms(ScheduleState.ACTIVE, 1_000, now_ms, active_since_ms) == late


def test_the_reason_nobody_serves_names_what_is_missing() -> None:
    gpu = worker(pools=("gpu",))
    other = worker(workflows=("cleanup",))
    assert unserved_reason("default", "report", [worker()]) is None
    assert unserved_reason("default", "report", []) == "no worker is alive"
    assert unserved_reason("default", "report", [worker(alive=False)]) == "no worker is alive"
    assert unserved_reason("default", "report", [gpu]) == "no live worker serves pool 'default'"
    assert unserved_reason("default", "report", [other]) == (
        "no live worker registers workflow 'report'"
    )
    assert unserved_reason("x", "y", [worker()]) == (
        "no live worker serves pool 'x' or registers workflow 'y'"
    )
    assert unserved_reason("default", "report", [gpu, other]) == (
        "no live worker both serves pool 'default' and registers workflow 'report'"
    )


def test_a_waiter_is_told_the_pool_and_workflow_nobody_serves_and_why() -> None:
    assert unserved_run("default", "report", [worker()]) is None
    assert unserved_run("default", "report", []) == (
        "no live worker serves pool 'default' / workflow 'report': no worker is alive"
    )
    assert unserved_run("default", "report", [worker(pools=("gpu",))]) == (
        "no live worker serves pool 'default' / workflow 'report': "
        "no live worker serves pool 'default'"
    )


def test_only_active_schedules_and_waiting_workflows_nobody_serves_are_named() -> None:
    paused = schedule(key="p", state=ScheduleState.PAUSED, pool="gpu")
    gpu = schedule(key="g", pool="gpu")
    assert [s.key for s, _ in unserved_schedules([schedule(), paused, gpu], [worker()])] == ["g"]
    assert unserved_workflows(["renamed", "report", "renamed"], [worker()]) == ["renamed"]
    assert unserved_workflows(["report"], [worker(alive=False)]) == ["report"]


def test_workers_and_overdue_by_survive_the_wire_exactly() -> None:
    gone = worker(alive=False, stopped_at=T0 + timedelta(seconds=5), pools=("a", "b"))
    assert worker_from_wire(worker_to_wire(gone)) == gone
    holding = worker(waiting_for_calendars=(("a", "uk"), ("b", "acme")))
    assert worker_to_wire(holding)["waiting_for_calendars"] == {"a": "uk", "b": "acme"}
    assert worker_from_wire(worker_to_wire(holding)) == holding
    late = schedule(overdue_by=timedelta(minutes=4, seconds=5, milliseconds=7))
    assert to_json(late)["overdue_by"] == "4m5s7ms"
    assert from_json(ScheduleInfo, to_json(late)) == late
    assert to_json(schedule())["overdue_by"] is None


def test_held_back_schedules_are_those_of_live_workers_and_the_apps_not_yet_stored() -> None:
    """What the faces say is not registered: the live workers' records and the app's own
    declarations merged by key; a gone worker's and a key stored since left out."""
    one = worker(id="h:1:a", host="web-1", pid=11, waiting_for_calendars=(("r", "uk"),))
    two = worker(id="h:2:b", host="web-2", pid=22, waiting_for_calendars=(("r", "uk"),))
    gone = worker(alive=False, waiting_for_calendars=(("old", "uk"),))
    stored = worker(waiting_for_calendars=(("s", "uk"),))
    held = held_back_schedules([one, two, gone, stored], declared={"d": "acme"}, stored={"s"})
    assert held == [HeldBack("d", "acme"), HeldBack("r", "uk", (one, two))]
    assert held_back_text(held[1]).startswith(
        "not registered: no calendar 'uk' is stored (declared by worker web-1:11 and 1 "
        "other(s)); set it (tickwork calendars set uk ...) or declare it "
        "(Engine(calendars=[Calendar('uk', ...)]))"
    )
    assert "(declared by this app)" in held_back_text(held[0])
