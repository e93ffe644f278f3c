"""``Client`` mirrors ``Engine``: the same methods, parameters, defaults and results; its
``start`` returns the same ``RunHandle``; every error class survives the wire."""

from __future__ import annotations

import inspect
from datetime import UTC, datetime, timedelta

import pytest

from tickwork import Client, Engine, errors
from tickwork._edge.async_api import TWINNED
from tickwork._edge.wire import (
    ERROR_CLASSES,
    error_details,
    error_from_wire,
    step_to_wire,
)
from tickwork._values.models import (
    Decision,
    HistoryEntry,
    Overlap,
    RunInfo,
    RunStatus,
    ScheduleInfo,
    ScheduleState,
    StepInfo,
)
from tickwork._values.wire_values import from_json, to_json

# Every call with an async twin, and two without one.
MIRRORED = [*TWINNED, "workflows", "preview"]


@pytest.mark.parametrize("name", MIRRORED)
def test_client_method_has_the_engines_signature(name: str) -> None:
    engine = inspect.signature(getattr(Engine, name))
    client = inspect.signature(getattr(Client, name))
    assert list(client.parameters) == list(engine.parameters)
    for param in engine.parameters.values():
        mirror = client.parameters[param.name]
        assert (mirror.kind, mirror.default) == (param.kind, param.default), param.name
        assert mirror.annotation == param.annotation, param.name
    assert client.return_annotation == engine.return_annotation


@pytest.mark.parametrize("cls", [Engine, Client])
@pytest.mark.parametrize("name", TWINNED)
def test_async_twin_has_the_blocking_calls_signature(cls: type, name: str) -> None:
    blocking = inspect.signature(getattr(cls, name))
    twin = inspect.signature(getattr(cls, f"{name}_async"))
    assert inspect.iscoroutinefunction(getattr(cls, f"{name}_async"))
    assert list(twin.parameters) == list(blocking.parameters)
    for param in list(blocking.parameters.values())[1:]:  # after self
        mirror = twin.parameters[param.name]
        assert (mirror.kind, mirror.default) == (param.kind, param.default), param.name
        assert mirror.annotation == param.annotation, param.name
    assert twin.return_annotation == blocking.return_annotation


def test_engine_and_client_have_the_same_async_twins() -> None:
    def twins(cls: type) -> list[str]:
        return sorted(name for name in dir(cls) if name.endswith("_async"))

    assert twins(Engine) == twins(Client) == sorted(f"{name}_async" for name in TWINNED)


def test_client_has_a_docstring_or_the_engines_for_every_mirrored_method() -> None:
    for name in MIRRORED:
        assert getattr(Client, name).__doc__ or not getattr(Engine, name).__doc__, name


@pytest.mark.parametrize("cls", sorted(set(ERROR_CLASSES.values()) - {errors.ApiError}, key=str))
def test_every_error_class_comes_back_as_itself(cls: type[errors.TickworkError]) -> None:
    samples = {
        errors.CronError: errors.CronError("61 * * * *", "minute", "61 is out of range"),
        errors.UnknownWorkflowError: errors.UnknownWorkflowError("w"),
        errors.RunFailed: errors.RunFailed("r", "ValueError: x"),
        errors.RunCancelled: errors.RunCancelled("r"),
        errors.RunTimeout: errors.RunTimeout("r", "running"),
        errors.StepFailed: errors.StepFailed("s", "KeyError: k"),
        errors.StoreUnreachable: errors.StoreUnreachable("SQLite file 'x.db'", "not a database"),
        errors.CalendarInUse: errors.CalendarInUse("uk", ("a", "b")),
        errors.ChildRunFailed: errors.ChildRunFailed("p/c", "failed", "ValueError: x"),
        errors.WaitTimedOut: errors.WaitTimedOut(["p/a", "p/b"], "10 minutes"),
    }
    original = samples.get(cls) or cls("something is wrong")
    rebuilt = error_from_wire(cls.code, str(original), error_details(original))
    assert type(rebuilt) is cls and str(rebuilt) == str(original)
    assert vars(rebuilt) == vars(original)


def test_codes_of_the_api_itself_are_not_error_classes() -> None:
    for code in ("UNAUTHORIZED", "NOT_FOUND", "MALFORMED_BODY", "API_ERROR", "???"):
        assert error_from_wire(code, "m", None) is None


T0 = datetime(2026, 3, 1, 12, 0, 0, 123000, tzinfo=UTC)


def test_values_survive_the_wire_exactly() -> None:
    schedule = ScheduleInfo(
        key="k", workflow="w", input={"a": [1, 2.5, None]}, cron=None,
        every=timedelta(hours=1, minutes=30, milliseconds=5), timezone="Europe/London",
        overlap=Overlap.SKIP, catchup="all", jitter=timedelta(seconds=30), pool="p",
        priority=-3, state=ScheduleState.PAUSED, revision=2, next_fire_at=T0,
        last_fire_at=None, last_run_id=None, last_run_status=RunStatus.FAILED,
        created_at=T0, updated_at=T0 + timedelta(days=400),
    )  # fmt: skip
    run = RunInfo(
        id="r", workflow="w", version="1", status=RunStatus.SLEEPING, input=None, result=[1],
        error=None, attempt=2, priority=0, pool="default", schedule_key="k",
        scheduled_for=T0, created_at=T0, started_at=None, finished_at=None,
        schedule_revision=3,
    )  # fmt: skip
    entry = HistoryEntry(
        key="k", occurrence=T0, decision=Decision.DROPPED_CATCHUP, reason="catchup=1",
        run_id=None, revision=1, decided_at=T0, count=12, last_occurrence=T0 + timedelta(hours=11),
    )  # fmt: skip
    step = StepInfo(
        run_id="r", name="fetch#2", kind="step", status="failed", result=None,
        error="KeyError: 'x'", attempts=3, started_at=T0, finished_at=T0,
    )  # fmt: skip
    assert from_json(ScheduleInfo, to_json(schedule)) == schedule
    assert from_json(RunInfo, to_json(run)) == run
    assert from_json(HistoryEntry, to_json(entry)) == entry
    assert from_json(StepInfo, step_to_wire(step)) == step
    assert to_json(schedule)["every"] == "1h30m5ms"
    assert to_json(run)["created_at"] == "2026-03-01T12:00:00.123Z"
