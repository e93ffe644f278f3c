"""tickwork: durable workflows that run on a schedule.

The public surface is exactly ``__all__``; everything else is internal.
"""

from ._client import Client as Client
from ._edge.declared import Cron as Cron
from ._edge.declared import Every as Every
from ._engine import Engine as Engine
from ._rules.calendars import Calendar as Calendar
from ._rules.registry import WorkflowDef as WorkflowDef
from ._rules.spec import ScheduleOptions as ScheduleOptions
from ._rules.spec import ScheduleSpec as ScheduleSpec
from ._runtime.context import Context as Context
from ._services.worker import Worker as Worker
from ._values.clock import Clock as Clock
from ._values.durations import parse_duration as parse_duration
from ._values.event_flow import FlowDecision as FlowDecision
from ._values.event_flow import SubscriptionDecision as SubscriptionDecision
from ._values.events import On as On
from ._values.handle import RunHandle as RunHandle
from ._values.holidays import Holiday as Holiday
from ._values.models import ApiKeyInfo as ApiKeyInfo
from ._values.models import Backfilled as Backfilled
from ._values.models import CalendarInfo as CalendarInfo
from ._values.models import DeadlineMissed as DeadlineMissed
from ._values.models import Decision as Decision
from ._values.models import Event as Event
from ._values.models import EventInfo as EventInfo
from ._values.models import HistoryEntry as HistoryEntry
from ._values.models import Outcome as Outcome
from ._values.models import Overlap as Overlap
from ._values.models import Pruned as Pruned
from ._values.models import RunInfo as RunInfo
from ._values.models import RunStatus as RunStatus
from ._values.models import ScheduleAction as ScheduleAction
from ._values.models import ScheduleInfo as ScheduleInfo
from ._values.models import ScheduleState as ScheduleState
from ._values.models import Stats as Stats
from ._values.models import StepInfo as StepInfo
from ._values.models import StorageStats as StorageStats
from ._values.models import SubscriptionInfo as SubscriptionInfo
from ._values.models import Triggered as Triggered
from ._values.models import WorkerInfo as WorkerInfo
from ._values.retry import Retry as Retry
from .errors import ApiError as ApiError
from .errors import CalendarInUse as CalendarInUse
from .errors import ChildRunFailed as ChildRunFailed
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
from .errors import WaitTimedOut as WaitTimedOut

__all__ = [
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
]
