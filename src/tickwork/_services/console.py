"""``Console``: what only the faces (CLI, HTTP API, dashboard, ``/metrics``) ask of an
engine, apart from the public ``Engine`` surface DESIGN names.

A face gets it as ``engine.console``. Each method answers a question a page, a command
or a scrape needs in one read (a "did you mean" key, a count per table, the fleet's
aggregates); none is for a user's program, so none is mirrored by ``Client``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import datetime

from .._rules.registry import Registry, WorkflowDef
from .._rules.spec import ScheduleSpec
from .._runtime.core import Runtime
from .._values.durations import Duration
from .._values.models import (
    Backfilled,
    HistoryEntry,
    Pruned,
    RunInfo,
    RunStatus,
    ScheduleAction,
    Stats,
    StepInfo,
    StorageStats,
)
from .._values.urls import require_existing, shown_url
from .apikeys import ApiKeys
from .event_ops import Events
from .pruning import Pruner
from .runs import Runs
from .scheduling import Schedules

__all__ = ["Console"]


class Console:
    """The faces' door to one engine's parts (``Engine.console``)."""

    def __init__(
        self,
        url: str,
        *,
        runtime: Runtime,
        registry: Registry,
        runs: Runs,
        schedules: Schedules,
        events: Events,
        pruner: Pruner,
        api_keys: ApiKeys,
        declared: Callable[[], list[ScheduleSpec]],
    ) -> None:
        self.url = url
        self._runtime = runtime
        self._registry = registry
        self._runs = runs
        self._schedules = schedules
        self._events = events
        self._pruner = pruner
        self._api_keys = api_keys
        self._declared = declared  # read when asked: ``Engine.for_test`` swaps them

    @property
    def where(self) -> str:
        """The database as messages name it: its URL without the password."""
        return shown_url(self.url)

    def require_database(self) -> None:
        """``StoreUnreachable`` when the URL names a SQLite file that does not exist: for
        the commands that only look, or act on what must exist (they create nothing)."""
        require_existing(self.url)

    # -- schedules -----------------------------------------------------------------------

    def change_state(
        self, key: str, action: ScheduleAction, note: str | None = None
    ) -> bool | None:
        """``pause`` / ``resume`` / ``deactivate`` / ``activate`` as ``action`` says,
        saying what it did: True changed, False already so (nothing written, its note
        kept), None no such schedule."""
        return self._schedules.set_state(key, action, note)

    def backfill_counted(
        self, key: str, start: datetime, end: datetime, *, overlap: str | None = None
    ) -> Backfilled:
        """``Engine.backfill``, with how many it started and how many had runs already."""
        return self._schedules.backfill(key, start, end, overlap)

    def recent_deadline_misses(self, within: Duration = "1d") -> list[HistoryEntry]:
        """The ``deadline_missed`` entries of every schedule recorded within ``within`` of
        now, newest first, at most 100 (the dashboard's banner)."""
        return self._schedules.recent_deadline_misses(within)

    def declared_waiting_for_calendars(self) -> dict[str, str]:
        """This engine's declared schedules whose calendar is not stored (so a worker has
        not registered them): key to calendar name, by key (the dashboard's banner)."""
        return self._schedules.waiting_for_calendars(self._declared())

    def schedule_keys(self, limit: int = 1000) -> list[str]:
        """The first ``limit`` schedule keys in key order, reading nothing else (the
        dashboard's suggestions)."""
        return self._schedules.keys(limit)

    def schedule_keys_like(self, key: str) -> tuple[str, ...]:
        """The stored key closest to ``key``, for a "did you mean" (none past 1,000)."""
        return self._schedules.keys_like(key)

    # -- runs and workflows --------------------------------------------------------------

    def recent_runs_by_schedule(
        self, keys: Sequence[str], limit: int = 30
    ) -> dict[str, list[RunInfo]]:
        """The newest ``limit`` runs of each schedule, newest first, by key (a key
        without runs maps to none): the dashboard's run strips, in one read instead of a
        ``list_runs(schedule_key=...)`` per schedule; each schedule's cost does not grow
        with its history. Over HTTP, ``list_runs`` does it."""
        return self._runs.recent_by_schedule(keys, limit)

    def workflow_definitions(self) -> list[WorkflowDef]:
        """The registered workflows' definitions, by name: what the API describes."""
        return [self._registry.get(name) for name in self._registry.names()]

    # -- keys, retention, metrics --------------------------------------------------------

    def api_key_id_is_live(self, key_id: str) -> bool:
        """Whether the key with this id exists and is not revoked.

        A dashboard session keeps only the key's id, never its secret, so it cannot ask
        ``verify_api_key``; this asks the same question by id (a revoked key has no hash).
        """
        return self._api_keys.is_live(key_id)

    def prune_by_table(self, *, older_than: Duration | None = None) -> Pruned:
        """``Engine.prune``, with what it removed of each table."""
        return self._pruner.prune(older_than=older_than)

    def storage_stats(self) -> StorageStats:
        """Rows and bytes per table, the oldest ended run, and what waits to be pruned."""
        return self._pruner.storage()

    def event_counts(self) -> dict[str, int]:
        """Events emitted per name, ever (``tickwork_events_total``; pruning lowers none)."""
        return self._events.counts()

    def child_counts(self, run_id: str) -> dict[RunStatus, int]:
        """How many child runs ``run_id`` started are in each status."""
        return self._runtime.store.children.counts(run_id)

    def children_remaining(self, run_id: str, step: StepInfo) -> int | None:
        """How many of its children the wait ``step`` of ``run_id`` still waits for."""
        return self._runtime.store.children.remaining(run_id, step.kind, step.name)

    def stats(self) -> Stats:
        """The fleet's counts and histograms, for ``/metrics``: counted as events happen
        (never recounted from history), histograms by bucket (bounds in ``_buckets``);
        and the schedules by state, the active ones by pool, the overdue ones.

        A store that keeps no aggregates reports nothing rather than failing the scrape.
        """
        return self._runtime.stats()
