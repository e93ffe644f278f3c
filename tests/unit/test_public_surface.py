"""The public surface is exactly what ``__all__`` lists, sorted (httpx's habit)."""

from __future__ import annotations

import tickwork
from tickwork import errors

EXPECTED = {
    "ApiError",
    "Client",
    "ConfigError",
    "Context",
    "Cron",
    "CronError",
    "Decision",
    "Engine",
    "Event",
    "Every",
    "HistoryEntry",
    "InputValidationError",
    "On",
    "Overlap",
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
    "ScheduleState",
    "StepFailed",
    "StepInfo",
    "StoreError",
    "StoreUnreachable",
    "TickworkError",
    "Triggered",
    "UnknownWorkflowError",
    "WorkerInfo",
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
