"""Retention as pure rules: what pruning may remove, and how much at a time.

How long an ended run (``completed``, ``failed``, ``cancelled``) and its steps are kept
after it ended: ``Engine(retention=...)`` for every workflow, ``@engine.workflow(
retention=...)`` for one (DESIGN §7). A schedule's history entries go after the engine's
retention, but the latest ``KEEP_HISTORY`` of every schedule stay, and so does each
schedule's latest run; unfinished runs are never removed (the store's rules, stated on
``store.pruning.prune_batch``).

Like ``_policy`` and ``_planning``: no I/O and no clock. The pruner (``_pruning``) reads
the time once per pass, asks ``cutoffs`` which instant applies to which workflow, and hands
the result to the store one batch at a time; the store asks ``take_within`` which of the
candidate rows fit in a batch's budget.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace

from .._values.durations import Duration, to_ms
from ..errors import ConfigError

__all__ = [
    "BATCH_ROWS",
    "COPY_LOG_EVERY_S",
    "DEFAULT_RETENTION",
    "FIRST_PASS_MS",
    "KEEP_HISTORY",
    "LEAST_BATCH_ROWS",
    "MOST_ROWS_PER_S",
    "MOST_VISITS",
    "PASS_INTERVAL_MS",
    "TURN_TARGET_S",
    "Cutoffs",
    "PruneBatch",
    "PrunePosition",
    "Take",
    "candidate_limit",
    "check_retention",
    "cutoffs",
    "give_way_s",
    "next_budget",
    "take_within",
]

#: ``Engine(retention=...)``'s default
DEFAULT_RETENTION: Duration = "30d"
#: the most rows one pruning transaction removes: runs, their steps and history entries
#: together (a batch stays a few milliseconds long, so firing and claiming never wait long)
BATCH_ROWS = 1_000
#: where writes take turns (SQLite), how long a batch should hold every other writer up;
#: the budget adapts to it (``next_budget``), never above ``BATCH_ROWS``
TURN_TARGET_S = 0.005
#: there too, how often a pass copies the log it wrote into the file (``copy_log``): often
#: enough that the log starts over long before its backstop, seldom enough that the syncs
#: of a checkpoint are not paid for every batch (after each one, the rate fell by a third)
COPY_LOG_EVERY_S = 0.1
#: the smallest budget it adapts down to (a slow disk still makes progress)
LEAST_BATCH_ROWS = 50
#: where writes do not take turns (PostgreSQL), the most rows a second one process's
#: pruning removes: what a batch costs the others there is the WAL it writes (a page
#: image of every page it first touches after a checkpoint), which each firing's commit
#: then waits to flush behind, and which brings checkpoints on sooner. Unpaced, a 10M
#: backlog went at 40,000-44,000 rows/s and the firing transactions of 50 every-second
#: schedules took 28-78 ms at p99 (10-14 without pruning); paced, 24,000 rows/s and
#: 12-29 ms. Steady state is far below it (50 every-second schedules: ~250 rows/s).
MOST_ROWS_PER_S = 25_000
#: the newest history entries of every schedule, kept whatever their age
KEEP_HISTORY = 100
#: the most workflows or schedules one batch looks at (looking costs a query each)
MOST_VISITS = 64
#: a worker's first pass, after it started (start-up is for catching up on firing first)
FIRST_PASS_MS = 10_000
#: between a worker's passes (see ``_pruning`` for why five minutes)
PASS_INTERVAL_MS = 300_000
#: the pause after a batch is half as long as the batch took, within these bounds (seconds)
_LEAST_PAUSE_S, _MOST_PAUSE_S = 0.001, 0.1


def check_retention(value: object, *, what: str = "retention") -> int | None:
    """``value`` as milliseconds: None keeps everything; otherwise a positive duration.

    ``ConfigError`` names ``what`` when the value is not a duration.
    """
    if value is None:
        return None
    try:
        return to_ms(value)  # type: ignore[arg-type]
    except ConfigError as exc:
        raise ConfigError(f"{what} must be a duration such as '30d', or None: {exc}") from None


@dataclass(frozen=True, slots=True)
class Cutoffs:
    """Instants (UTC epoch ms) before which ended rows may be removed; None keeps them.

    ``runs_ms`` applies to the runs of every workflow not in ``workflows`` (those without
    a retention of their own, and those this process does not know); ``workflows`` holds
    the cutoffs of workflows with their own retention; ``history_ms`` applies to schedule
    history entries (by ``decided_at``).
    """

    runs_ms: int | None
    history_ms: int | None
    workflows: Mapping[str, int | None] = field(default_factory=dict)

    def for_workflow(self, workflow: str) -> int | None:
        """The cutoff for ended runs of ``workflow`` (by ``finished_at``)."""
        return self.workflows.get(workflow, self.runs_ms)

    @property
    def prunes_anything(self) -> bool:
        return (
            self.runs_ms is not None
            or self.history_ms is not None
            or any(cutoff is not None for cutoff in self.workflows.values())
        )


def cutoffs(
    *,
    now_ms: int,
    retention_ms: int | None,
    workflow_retention_ms: Mapping[str, int | None],
    older_than_ms: int | None = None,
) -> Cutoffs:
    """Which cutoff applies to what, at ``now_ms``.

    ``retention_ms`` is the engine's (None keeps everything), ``workflow_retention_ms``
    each registered workflow's own (None: the engine's). ``older_than_ms`` (from
    ``engine.prune(older_than=...)`` and ``tickwork db prune --older-than``) replaces
    every retention for this pass: rows older than it go, whatever their workflow.
    """
    if older_than_ms is not None:
        cutoff = now_ms - older_than_ms
        return Cutoffs(runs_ms=cutoff, history_ms=cutoff)
    default = None if retention_ms is None else now_ms - retention_ms
    own = {name: now_ms - ms for name, ms in workflow_retention_ms.items() if ms is not None}
    return Cutoffs(runs_ms=default, history_ms=default, workflows=own)


@dataclass(frozen=True, slots=True)
class PrunePosition:
    """Where a pass has got to; the next batch starts there.

    A pass goes through the workflows that have ended runs, in name order, then through
    the schedules' history, by key. ``name`` is the workflow or key reached (None: the
    phase's first); ``past`` says that one is done. ``floor_ms`` is the instant
    (``finished_at``, ``decided_at``) the walk of ``name`` has reached: what is older was
    removed or is kept, so the next batch seeks there instead of stepping again over the
    index entries of rows already deleted (PostgreSQL keeps them until a vacuum: without
    the floor a pass would be quadratic). ``rows_per_run`` is how many rows (a run and its
    steps) the last runs removed weighed, to ask for about as many candidate runs as a
    batch can take.
    """

    phase: str = "runs"  # "runs", then "history", then "done"
    name: str | None = None
    past: bool = False
    floor_ms: int | None = None
    rows_per_run: float = 1.0

    @property
    def done(self) -> bool:
        return self.phase == "done"

    def at(self, name: str, floor_ms: int | None) -> PrunePosition:
        """Working on ``name`` (not done with it yet), from ``floor_ms`` on."""
        return replace(self, name=name, past=False, floor_ms=floor_ms)

    def after(self, name: str) -> PrunePosition:
        """Done with ``name``: the next one is after it."""
        return replace(self, name=name, past=True, floor_ms=None)

    def next_phase(self) -> PrunePosition:
        """The runs are done: the history next; the history done: the pass is over."""
        phase = "history" if self.phase == "runs" else "done"
        return PrunePosition(phase=phase, rows_per_run=self.rows_per_run)


@dataclass(frozen=True, slots=True)
class PruneBatch:
    """What one batch did: rows removed (runs, steps and history entries), and where
    the next batch of the pass starts (``position.done``: the pass is over); ``runs``,
    ``steps`` and ``history`` split ``removed`` by table."""

    removed: int
    position: PrunePosition
    runs: int = 0
    steps: int = 0
    history: int = 0


def candidate_limit(budget: int, rows_per_run: float) -> int:
    """How many candidate runs to read for ``budget`` rows, each weighing about
    ``rows_per_run`` (itself and its steps): at least one, at most ``budget``."""
    if budget <= 0:
        return 0
    return max(1, min(budget, math.ceil(budget / max(1.0, rows_per_run))))


@dataclass(frozen=True, slots=True)
class Take:
    """What one batch removes of a workflow's candidate runs.

    ``run_ids`` go whole, with their steps (``rows`` counts both). When the first
    candidate alone weighs more than a whole batch, ``steps_of`` names it and ``steps``
    of its steps go now (the run itself in a later batch). ``complete`` is False when a
    candidate was left for a later batch for lack of room.
    """

    run_ids: tuple[str, ...] = ()
    rows: int = 0
    steps_of: str | None = None
    steps: int = 0
    complete: bool = True


def take_within(candidates: Sequence[tuple[str, int]], budget: int, *, fresh: bool) -> Take:
    """The oldest candidates ``(run id, steps)`` that fit in ``budget`` rows together.

    A run weighs 1 + its steps, and goes whole or not at all, except a run too heavy for
    any batch: when nothing else was taken in this batch yet (``fresh``), ``budget`` of its
    steps go, and the run itself once what is left fits.
    """
    taken: list[str] = []
    rows = 0
    for run_id, steps in candidates:
        weight = 1 + steps
        if rows + weight <= budget:
            taken.append(run_id)
            rows += weight
            continue
        if not taken and fresh and budget > 0:
            return Take(rows=budget, steps_of=run_id, steps=budget, complete=False)
        return Take(tuple(taken), rows, complete=False)
    return Take(tuple(taken), rows)


def next_budget(budget: int, removed: int, elapsed_s: float, target_s: float | None) -> int:
    """The next batch's budget after one of ``budget`` rows removed ``removed`` in
    ``elapsed_s``.

    Without a target (writers do not take turns: PostgreSQL's row locks), ``BATCH_ROWS``.
    With one, as many rows as the last batch's pace fits in ``target_s``, growing at most
    twofold a batch, within ``LEAST_BATCH_ROWS`` and ``BATCH_ROWS``; a batch that removed
    less than half its budget (the end of a workflow, of the pass) says nothing new.
    """
    if target_s is None:
        return BATCH_ROWS
    if removed * 2 < budget or elapsed_s <= 0:
        return budget
    fitting = int(removed * target_s / elapsed_s)
    return max(LEAST_BATCH_ROWS, min(BATCH_ROWS, 2 * budget, fitting))


def give_way_s(elapsed_s: float, removed: int = 0, most_rows_per_s: int | None = None) -> float:
    """How long to pause after a batch that removed ``removed`` rows in ``elapsed_s``:
    half as long again (pruning holds the database at most about two thirds of the
    time), and with ``most_rows_per_s`` long enough that the batch and the pause
    together remove no more than that; within 1 ms and 100 ms.

    On SQLite a waiting writer of another process gets the lock within a poll
    (``sqlite.LOCK_POLL_S``, 0.5 ms) of its release, so half a batch is gap enough: a
    firing waits one batch (~5 ms) at most. Measured on a 10M backlog beside 50
    every-second schedules: 15,500 -> 31,400 rows/s (with the lock polled), the
    firings' p99 17-18 ms either way; pausing half a batch with SQLite's own busy
    handler made it ~100 ms. On PostgreSQL see ``MOST_ROWS_PER_S``."""
    pause = elapsed_s / 2
    if most_rows_per_s:
        pause = max(pause, removed / most_rows_per_s - elapsed_s)
    return min(_MOST_PAUSE_S, max(_LEAST_PAUSE_S, pause))
