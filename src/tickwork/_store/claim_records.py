"""The records of a claim as they cross the store boundary: a worker's request, the runs
it is handed, and how an execution's write ends (``RunStore``'s claims and ends, and
every write that claims in the same transaction: ``then_claim``).

Below every part's contract, so that runs and events take and give the same records.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from .._values.models import HistoryEntry, RunInfo, StepInfo

__all__ = ["ClaimRequest", "ClaimedRun", "Ended", "LeaseLost"]


class LeaseLost(BaseException):
    """The execution's lease is no longer the run's; the executor must stop writing.

    A ``BaseException`` so that a workflow's ``except Exception`` cannot swallow it.
    """


@dataclass(frozen=True, slots=True)
class ClaimedRun:
    """A run handed to one executor, with the checkpoints recorded so far.

    ``attempt_started_ms`` is when the current attempt first began executing (kept across
    sleeps and take-overs, reset by a retry); ``resumed`` is True when the run had already
    started before this claim; ``cancel_requested`` asks the executor to stop at once;
    ``retry_json`` is a retry policy that overrides the workflow's (from a schedule);
    ``lost_workers`` is how many times in a row the run lost its worker (was taken over
    after its lease expired while running) since its last new completed checkpoint, this
    claim included when it is such a take-over (``max_recoveries``); ``alone``: the run
    lost its worker, and its worker must run no other run while it executes (so that a
    loss is blamed on the run whose step caused it: see ``claim_runs``).
    """

    info: RunInfo
    lease_token: str
    steps: Sequence[StepInfo]
    attempt_started_ms: int
    resumed: bool
    cancel_requested: bool
    retry_json: str | None = None
    lost_workers: int = 0
    alone: bool = False


@dataclass(frozen=True, slots=True)
class ClaimRequest:
    """A worker asking for runs, as ``claim_runs`` takes it (see there)."""

    now_ms: int
    lease_ms: int
    worker: str
    pools: Sequence[str]
    limits: Mapping[str, int | None]
    limit: int = 1
    idle: bool = False


@dataclass(frozen=True, slots=True)
class Ended:
    """A run as its executor left it, and the runs claimed in the same transaction;
    ``auto_paused``: the history entry of its schedule's pause, when the run was the
    ``pause_after_failures``-th failure in a row (``finish_run``)."""

    run: RunInfo
    claimed: Sequence[ClaimedRun] = ()
    auto_paused: HistoryEntry | None = None
