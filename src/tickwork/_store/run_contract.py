"""The runs part of the store contract: runs, leases and checkpoints (``store.runs``).

Every method's rules are in its docstring; ``sql_runs.py`` (and ``recent_runs.py``)
implement them on both backends. The rules every part keeps are in ``contract.py``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Protocol

from .._values.models import RunInfo, RunStatus, StepInfo
from .._values.records import NewRun, StepRecord
from .claim_records import ClaimedRun, ClaimRequest, Ended

__all__ = ["RunStore"]


class RunStore(Protocol):
    """Runs, their leases and their checkpoints."""

    def insert_run(
        self, run: NewRun, *, then_claim: ClaimRequest | None = None
    ) -> tuple[RunInfo, bool, Sequence[ClaimedRun]]:
        """Insert ``run`` as ``pending`` unless a run with its id exists.

        Returns the stored run, whether it was inserted now, and the runs claimed in the
        same transaction with ``then_claim`` (as by ``claim_runs``: the most urgent
        runnable runs, not necessarily this one). An existing run is returned unchanged
        (whatever its definition): ``start`` is idempotent by run id.
        """
        ...

    def get_run(self, run_id: str) -> RunInfo | None:
        """The run with this id, or None."""
        ...

    def list_runs(
        self,
        *,
        workflow: str | None = None,
        status: RunStatus | None = None,
        schedule_key: str | None = None,
        limit: int = 100,
        before: str | None = None,
        parent_id: str | None = None,
    ) -> list[RunInfo]:
        """Runs matching every filter given, newest first (by creation, then id).

        With ``before``, only runs after the run of that id in this order (the next page
        after a page that ended with it); none if there is no such run. ``parent_id``:
        the children of that run.
        """
        ...

    def recent_runs(self, keys: Sequence[str], *, limit: int) -> dict[str, list[RunInfo]]:
        """The newest ``limit`` runs of each schedule key, newest first (as ``list_runs``
        with ``schedule_key``), read in one statement (or a few, for many keys) from the
        schedules' index: what each key costs does not grow with its history. Every key
        given is in the result, a key without runs with none."""
        ...

    def list_steps(self, run_id: str) -> list[StepInfo]:
        """The run's checkpoints in the order they were first recorded."""
        ...

    def claim_runs(self, request: ClaimRequest) -> list[ClaimedRun]:
        """Take up to ``request.limit`` runnable runs for ``request.worker``, each under a
        new lease (``now_ms``, ``lease_ms``, ``pools``, ``limits`` and ``idle`` below are
        the request's fields too).

        Runnable: workflow among ``limits``' keys, pool among ``pools``, and either
        ``pending``/``sleeping`` with ``available_at <= now_ms`` or ``running`` with an
        expired lease (its previous owner is presumed dead). Higher priority first, then
        earlier ``available_at``. A workflow whose limit is N never has more than N runs
        under a live lease, across every process sharing the store. Claimed runs become
        ``running``; a run never started before gets ``started_at = now_ms``.

        Taking over a ``running`` run whose lease expired counts a lost worker, in the
        claim's own write: one more when the run has as many completed checkpoints as at
        its previous take-over (no progress since), else the first. A released lease
        (``release_leases``) or a run handed back (``reschedule_run``) is no loss. Each
        claimed run's ``lost_workers`` is that count, or 0 when the run completed a
        checkpoint since its last take-over. The loss counts only when the run was the
        lost worker's only run in flight (no other run is under a lease of that worker,
        nor was taken over from it since): else it cannot be told whose step killed the
        worker, and the count is neither raised nor cleared.

        A run taken over is a *suspect* (``ClaimedRun.alone``) until that execution ends
        (``finish_run``, ``reschedule_run``): it is claimed only when ``idle`` (the worker
        has no run in flight), and then alone, before any other run; a claim that is not
        ``idle`` passes suspects over.
        """
        ...

    def claim_or_next_due(self, request: ClaimRequest) -> tuple[list[ClaimedRun], int | None]:
        """``claim_runs``, and when it takes fewer than ``limit`` runs, ``next_due_ms``
        (of ``limits``' workflows, with the suspects if ``idle``) read in the same
        transaction, after the claim: a worker's poll that finds nothing is one
        transaction. The due time is None when ``limit`` runs were taken."""
        ...

    def renew_leases(
        self, *, tokens: Mapping[str, str], now_ms: int, lease_ms: int
    ) -> dict[str, bool]:
        """Extend the leases of ``{run_id: token}``.

        Returns ``{run_id: cancel_requested}`` for the runs still held; the others are lost.
        """
        ...

    def record_step(
        self, *, run_id: str, token: str, step: StepRecord, now_ms: int, lease_ms: int
    ) -> bool:
        """Store (or replace) one checkpoint if ``token`` still holds the run, atomically.

        The lease is kept alive by ``renew_leases``; a backend may renew it here too.

        Returns True when cancellation of the run was requested. Raises ``LeaseLost``, with
        nothing written, when ``token`` no longer holds the run.
        """
        ...

    def finish_run(
        self,
        *,
        run_id: str,
        token: str,
        status: RunStatus,
        result_json: str | None,
        error: str | None,
        now_ms: int,
        then_claim: ClaimRequest | None = None,
        running: RunInfo | None = None,
        traceback: str | None = None,
    ) -> Ended:
        """End the run as ``completed``, ``failed`` or ``cancelled`` and drop its lease;
        a failed run keeps ``traceback`` (bounded by the caller).

        With ``then_claim``, runs are claimed in the same transaction as by ``claim_runs``
        (an executor takes its next run without a transaction of its own). ``running`` is
        the run as its claim returned it: given, the ended run is built from it instead of
        read back (nothing but status, result, error, traceback and ``finished_at`` changes while a
        lease is held). Raises ``LeaseLost``, with nothing written, when ``token`` no
        longer holds the run.

        A run of a schedule counts toward its ``pause_after_failures``, in the same
        transaction: ``completed`` resets the count of failed runs in a row, ``failed``
        adds one (``cancelled`` does neither). When the count reaches the option on an
        active schedule, the schedule is paused with a note naming this run and
        ``error``, recorded in its history as "auto_paused" (the run as ``run_id``);
        ``Ended.auto_paused`` is that entry. Retries of a run are not ends: only the run's
        last failure counts.
        """
        ...

    def reschedule_run(
        self,
        *,
        run_id: str,
        token: str,
        status: RunStatus,
        available_ms: int,
        attempt: int,
        error: str | None,
        new_attempt: bool,
        then_claim: ClaimRequest | None = None,
    ) -> Ended:
        """Put the run back as ``pending`` or ``sleeping`` until ``available_ms``.

        Used for durable sleeps, retry back-off and handing a run back at shutdown. With
        ``new_attempt`` the failed tries of steps are forgotten and the attempt clock resets
        (completed steps are always kept). ``then_claim`` as in ``finish_run``. Raises
        ``LeaseLost`` when the token is stale.
        """
        ...

    def cancel_run(self, run_id: str, *, now_ms: int) -> bool:
        """Cancel a run: at once when ``pending`` or ``sleeping``; when ``running``, flag it
        so its executor stops at its next step boundary.

        Returns False when the run is unknown or already finished.
        """
        ...

    def release_leases(self, *, tokens: Sequence[str], now_ms: int) -> int:
        """Expire the given leases now so another worker may take the runs at once."""
        ...

    def next_due_ms(
        self, *, pools: Sequence[str], workflows: Sequence[str], suspects: bool = True
    ) -> int | None:
        """The earliest ``available_at`` of any run ``claim_runs`` could take, or None;
        without the suspects unless ``suspects`` (a claim that is not ``idle`` passes
        them over: a busy worker waits for what it could take)."""
        ...
