"""The public surface is exactly what ``__all__`` lists, sorted (httpx's habit)."""

from __future__ import annotations

import inspect
import typing

import tickwork
from tickwork import errors

EXPECTED = {
    "ApiError",
    "ApiKeyInfo",
    "Backfilled",
    "Calendar",
    "CalendarInUse",
    "CalendarInfo",
    "ChildRunFailed",
    "Client",
    "Clock",
    "ConfigError",
    "Context",
    "Cron",
    "CronError",
    "DeadlineMissed",
    "Decision",
    "Engine",
    "Event",
    "EventInfo",
    "Every",
    "FlowDecision",
    "HistoryEntry",
    "Holiday",
    "InputValidationError",
    "On",
    "Outcome",
    "Overlap",
    "Pruned",
    "ResultError",
    "Retry",
    "RunCancelled",
    "RunFailed",
    "RunHandle",
    "RunInfo",
    "RunStatus",
    "RunTimeout",
    "ScheduleAction",
    "ScheduleConflict",
    "ScheduleInfo",
    "ScheduleOptions",
    "ScheduleSpec",
    "ScheduleState",
    "Stats",
    "StepFailed",
    "StepInfo",
    "StorageStats",
    "StoreError",
    "StoreUnreachable",
    "SubscriptionDecision",
    "SubscriptionInfo",
    "TickworkError",
    "Triggered",
    "UnknownWorkflowError",
    "WaitTimedOut",
    "Worker",
    "WorkerInfo",
    "WorkflowDef",
    "parse_duration",
}


def test_all_is_sorted_and_complete() -> None:
    assert tickwork.__all__ == sorted(tickwork.__all__)
    assert set(tickwork.__all__) == EXPECTED


def test_every_exported_name_exists_and_belongs_to_tickwork() -> None:
    for name in tickwork.__all__:
        member = getattr(tickwork, name)
        assert getattr(member, "__module__", "tickwork").startswith("tickwork"), name


def test_error_tree_and_codes_are_stable() -> None:
    assert issubclass(errors.ConfigError, errors.TickworkError)
    assert issubclass(errors.ConfigError, ValueError)
    assert issubclass(errors.CronError, errors.ConfigError)
    assert issubclass(errors.UnknownWorkflowError, errors.ConfigError)
    assert issubclass(errors.InputValidationError, errors.ConfigError)
    assert issubclass(errors.ResultError, errors.ConfigError)
    assert not issubclass(errors.ResultError, errors.InputValidationError)
    for name in ("ScheduleConflict", "RunFailed", "RunCancelled", "StoreError"):
        cls = getattr(errors, name)
        assert issubclass(cls, errors.TickworkError) and not issubclass(cls, ValueError)
    assert errors.ScheduleConflict.code == "SCHEDULE_CONFLICT"
    assert issubclass(errors.StoreUnreachable, errors.StoreError)
    codes = [getattr(errors, name).code for name in errors.__all__]
    assert len(codes) == len(set(codes)), "every error class has its own code"


def _tickwork_classes(hint: object) -> set[type]:
    """The tickwork classes a type hint names, however nested (``list[RunInfo] | None``)."""
    found = {hint} if isinstance(hint, type) and hint.__module__.startswith("tickwork") else set()
    for arg in typing.get_args(hint):
        found |= _tickwork_classes(arg)
    origin = typing.get_origin(hint)
    return found | (_tickwork_classes(origin) if origin is not None else set())


def test_every_type_in_engines_public_signatures_is_exported() -> None:
    """A user can name (and annotate with) whatever Engine takes or returns."""
    unexported = {}
    for name, member in inspect.getmembers(tickwork.Engine, callable):
        if name.startswith("_") and name != "__init__":
            continue
        for hint in typing.get_type_hints(member).values():
            for cls in _tickwork_classes(hint):
                if getattr(tickwork, cls.__name__, None) is not cls:
                    unexported[f"{name}: {cls.__module__}.{cls.__name__}"] = cls
    assert not unexported, sorted(unexported)
