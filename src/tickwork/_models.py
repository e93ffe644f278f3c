"""The values tickwork hands out: runs, steps and their statuses.

Enum values are the strings stored in the database and sent on the wire.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum
from typing import Any

__all__ = ["ACTIVE_STATUSES", "FINAL_STATUSES", "RunInfo", "RunStatus", "StepInfo"]


class RunStatus(StrEnum):
    PENDING = "pending"
    RUNNING = "running"
    SLEEPING = "sleeping"
    COMPLETED = "completed"
    FAILED = "failed"
    CANCELLED = "cancelled"


FINAL_STATUSES = frozenset({RunStatus.COMPLETED, RunStatus.FAILED, RunStatus.CANCELLED})
ACTIVE_STATUSES = frozenset({RunStatus.PENDING, RunStatus.RUNNING, RunStatus.SLEEPING})


@dataclass(frozen=True, slots=True)
class RunInfo:
    """One run of a workflow, as stored. Instants are aware UTC datetimes."""

    id: str
    workflow: str
    version: str
    status: RunStatus
    input: Any
    result: Any
    error: str | None
    attempt: int
    priority: int
    pool: str
    schedule_key: str | None
    scheduled_for: datetime | None
    created_at: datetime
    started_at: datetime | None
    finished_at: datetime | None


@dataclass(frozen=True, slots=True)
class StepInfo:
    """One checkpoint of a run: a step, a durable sleep or a recorded ``now()``."""

    run_id: str
    name: str
    kind: str  # "step", "sleep" or "now"
    status: str  # "completed" or "failed"
    result: Any
    error: str | None
    attempts: int
    started_at: datetime
    finished_at: datetime
