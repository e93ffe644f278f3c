"""tickwork: durable workflows that run on a schedule.

The public surface is exactly ``__all__``; everything else is internal.
"""

from ._calendars import Calendar as Calendar
from ._client import Client as Client
from ._clock import Clock as Clock
from ._context import Context as Context
from ._declared import Cron as Cron
from ._declared import Every as Every
from ._durations import parse_duration as parse_duration
from ._engine import Engine as Engine
from ._event_flow import FlowDecision as FlowDecision
from ._event_flow import SubscriptionDecision as SubscriptionDecision
from ._events import On as On
from ._handle import RunHandle as RunHandle
from ._holidays import Holiday as Holiday
from ._models import ApiKeyInfo as ApiKeyInfo
from ._models import Backfilled as Backfilled
from ._models import CalendarInfo as CalendarInfo
from ._models import DeadlineMissed as DeadlineMissed
from ._models import Decision as Decision
from ._models import Event as Event
from ._models import EventInfo as EventInfo
from ._models import HistoryEntry as HistoryEntry
from ._models import Overlap as Overlap
from ._models import Pruned as Pruned
from ._models import RunInfo as RunInfo
from ._models import RunStatus as RunStatus
from ._models import ScheduleAction as ScheduleAction
from ._models import ScheduleInfo as ScheduleInfo
from ._models import ScheduleState as ScheduleState
from ._models import Stats as Stats
from ._models import StepInfo as StepInfo
from ._models import StorageStats as StorageStats
from ._models import SubscriptionInfo as SubscriptionInfo
from ._models import Triggered as Triggered
from ._models import WorkerInfo as WorkerInfo
from ._registry import WorkflowDef as WorkflowDef
from ._retry import Retry as Retry
from ._spec import ScheduleOptions as ScheduleOptions
from ._spec import ScheduleSpec as ScheduleSpec
from ._worker import Worker as Worker
from .errors import ApiError as ApiError
from .errors import CalendarInUse as CalendarInUse
from .errors import ConfigError as ConfigError
from .errors import CronError as CronError
from .errors import InputValidationError as InputValidationError
from .errors import ResultError as ResultError
from .errors import RunCancelled as RunCancelled
from .errors import RunFailed as RunFailed
from .errors import RunTimeout as RunTimeout
from .errors import ScheduleConflict as ScheduleConflict
from .errors import StepFailed as StepFailed
from .errors import StoreError as StoreError
from .errors import StoreUnreachable as StoreUnreachable
from .errors import TickworkError as TickworkError
from .errors import UnknownWorkflowError as UnknownWorkflowError

__all__ = [
    "ApiError",
    "ApiKeyInfo",
    "Backfilled",
    "Calendar",
    "CalendarInUse",
    "CalendarInfo",
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
    "Worker",
    "WorkerInfo",
    "WorkflowDef",
    "parse_duration",
]
