"""``list_schedules``' filters are the store's, on every backend: a workflow and a state
chosen by its WHERE, so the API's ``?workflow=&state=`` never reads every schedule to
keep a few (issue 30)."""

from __future__ import annotations

from tests.contract.test_schedules_contract import MINUTE, T0, record, register

from tickwork._store import Store
from tickwork._values.models import ScheduleAction, ScheduleState


def three_schedules(store: Store) -> None:
    """``a`` and ``b`` of workflow ``wf`` (``b`` paused), ``c`` of ``other``."""
    register(store, record("a"))
    register(store, record("b"))
    register(store, record("c", workflow="other"))
    store.schedules.set_schedule_state("b", action=ScheduleAction.PAUSE, now_ms=T0 + MINUTE)


def keys(store: Store, **filters: str | None) -> list[str]:
    return [info.key for info in store.schedules.list_schedules(**filters)]


def test_a_workflow_filter_lists_only_that_workflows_schedules(store: Store) -> None:
    three_schedules(store)
    assert keys(store, workflow="wf") == ["a", "b"]
    assert keys(store, workflow="other") == ["c"]
    assert keys(store, workflow="nobody") == []


def test_a_state_filter_lists_only_schedules_in_that_state(store: Store) -> None:
    three_schedules(store)
    assert keys(store, state=ScheduleState.ACTIVE) == ["a", "c"]
    assert keys(store, state=ScheduleState.PAUSED) == ["b"]
    assert keys(store, state=ScheduleState.INACTIVE) == []


def test_both_filters_must_match(store: Store) -> None:
    three_schedules(store)
    assert keys(store, workflow="wf", state=ScheduleState.ACTIVE) == ["a"]
    assert keys(store, workflow="other", state=ScheduleState.PAUSED) == []
    assert keys(store) == ["a", "b", "c"]
