"""Runs at the API level: start, read, list and cancel, every argument checked first.

``Engine``'s run methods hand their work here, as its schedule methods do to
``Schedules``; a started run is inserted through the runtime, which may hand it straight
to an idle executor of this process.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from .._rules.registry import WorkflowDef
from .._runtime.core import Runtime
from .._values.checks import check_limit, check_name
from .._values.durations import Duration
from .._values.ids import new_run_id
from .._values.models import RunInfo, RunStatus, StepInfo
from ..errors import ConfigError

__all__ = ["Runs"]


class Runs:
    """The run operations ``Engine`` exposes."""

    def __init__(self, runtime: Runtime) -> None:
        self._runtime = runtime

    def start(
        self,
        definition: WorkflowDef,
        input: Any,
        *,
        run_id: str | None,
        priority: int | None,
        pool: str | None,
        delay: Duration | None,
    ) -> str:
        """Insert a run (idempotent by ``run_id``); its id. Every argument is checked
        before anything is stored.

        A ``run_id`` that names a run of another workflow is refused (``ConfigError``)
        rather than answered with that run: the caller would wait for the wrong result.
        """
        now = self._runtime.now_ms()
        run = definition.new_run(
            input, run_id=run_id or new_run_id(now), now_ms=now, priority=priority, pool=pool,
            delay=delay,
        )  # fmt: skip
        if run_id is not None:  # after the input's checks, as before
            check_name(run_id, "run_id")
        stored = self._runtime.insert_run(run)
        if stored.workflow != run.workflow:
            raise ConfigError(
                f"run_id {stored.id!r} is already a run of workflow {stored.workflow!r}, "
                f"not of {run.workflow!r}: choose another run_id"
            )
        return stored.id

    def get(self, run_id: str) -> RunInfo | None:
        return self._runtime.store.runs.get_run(run_id)

    def query(
        self,
        *,
        workflow: str | None,
        status: RunStatus | str | None,
        schedule_key: str | None,
        limit: int,
        before: str | None,
        parent: str | None = None,
    ) -> list[RunInfo]:
        check_limit(limit)
        if before is not None and (not isinstance(before, str) or not before):
            raise ConfigError(f"before must be a run id, not {before!r}")
        if parent is not None and (not isinstance(parent, str) or not parent):
            raise ConfigError(f"parent must be a run id, not {parent!r}")
        return self._runtime.store.runs.list_runs(
            workflow=workflow,
            status=None if status is None else _status(status),
            schedule_key=schedule_key,
            limit=limit,
            before=before,
            parent_id=parent,
        )

    def recent_by_schedule(self, keys: Sequence[str], limit: int) -> dict[str, list[RunInfo]]:
        """The newest ``limit`` runs of each schedule, by key, in one read."""
        check_limit(limit)
        if isinstance(keys, str) or not all(isinstance(key, str) for key in keys):
            raise ConfigError(f"keys must be a list of schedule keys, not {keys!r}")
        return self._runtime.store.runs.recent_runs(keys, limit=limit)

    def steps(self, run_id: str) -> list[StepInfo]:
        return self._runtime.store.runs.list_steps(run_id)

    def cancel(self, run_id: str) -> bool:
        """Cancel a run; whoever waits for it in this process is woken."""
        cancelled = self._runtime.store.runs.cancel_run(run_id, now_ms=self._runtime.now_ms())
        if cancelled:
            self._runtime.run_ended()
        return cancelled


def _status(status: RunStatus | str) -> RunStatus:
    try:
        return RunStatus(status)
    except ValueError:
        raise ConfigError(
            f"Unknown status {status!r}: expected one of {[s.value for s in RunStatus]}"
        ) from None
