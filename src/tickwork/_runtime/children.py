"""Child runs as a parent's checkpoints see them (DESIGN §10): their ids, their checks,
the runs a map inserts, and what a wait returns once its children have ended.

A child's id is derived from its parent's id and its key, ``parent/key`` (a map's n-th
child ``parent/key/n``), so every worker that replays the parent derives the same one and
the store's unique run id starts it once. A key holds no '/' (the last '/' of an id
separates the parent), so two calls' ids never meet.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from typing import Any

from .._rules.registry import Registry
from .._values.checks import MAX_NAME, has_control
from .._values.durations import Duration
from .._values.handle import RunHandle
from .._values.models import Outcome, RunInfo, RunStatus
from .._values.records import NewRun
from ..errors import ChildRunFailed, ConfigError, TickworkError

__all__ = [
    "HELD_MS",
    "MAX_CHILDREN",
    "check_key",
    "check_max_parallel",
    "child_id",
    "joined_value",
    "map_children",
    "new_child",
    "waited_ids",
]

#: the most children one ``ctx.map`` starts
MAX_CHILDREN = 100_000
#: a map's child held back by ``max_parallel`` waits with its queue row due at the end
#: of time, until a sibling's end releases it (``_store/joins.py``)
HELD_MS = 253_402_300_799_999


def check_key(key: object) -> str | None:
    """A child's (or a map's) key: None, or 1 to 100 characters without control
    characters and without '/'."""
    if key is None:
        return None
    if not isinstance(key, str) or not key or len(key) > 100 or "/" in key or has_control(key):
        raise ConfigError(
            f"key must be 1 to 100 characters without control characters or '/', not {key!r}"
        )
    return key


def check_max_parallel(max_parallel: object) -> int | None:
    if max_parallel is None:
        return None
    if isinstance(max_parallel, bool) or not isinstance(max_parallel, int) or max_parallel < 1:
        raise ConfigError(f"max_parallel must be an integer of at least 1, not {max_parallel!r}")
    return max_parallel


def child_id(parent_id: str, key: str) -> str:
    """``parent/key``; for a parent so deep that the id would pass ``MAX_NAME``, the
    parent's part is its digest (still the same on every worker)."""
    found = f"{parent_id}/{key}"
    if len(found) <= MAX_NAME:
        return found
    digest = hashlib.sha256(parent_id.encode("utf-8", "surrogatepass")).hexdigest()[:32]
    return f"{digest}/{key}"[:MAX_NAME]


def new_child(
    registry: Registry,
    parent: RunInfo,
    workflow: str,
    input: Any,
    *,
    run_id: str,
    now_ms: int,
    priority: int | None = None,
    pool: str | None = None,
    delay: Duration | None = None,
    joined: str | None = None,
    held: bool = False,
) -> NewRun:
    """The child run to insert, checked as ``engine.start`` checks a run: the workflow
    known (served by any pool), its input validated, priority and pool valid."""
    return registry.get(workflow).new_run(
        input, run_id=run_id, now_ms=now_ms, priority=priority, pool=pool, delay=delay,
        parent_id=parent.id, joined=joined, available_ms=HELD_MS if held else None,
    )  # fmt: skip


def map_children(
    registry: Registry,
    parent: RunInfo,
    workflow: str,
    inputs: Sequence[Any],
    *,
    prefix: str,
    joined: str,
    max_parallel: int | None,
    now_ms: int,
) -> tuple[NewRun, ...]:
    """A map's children, one per input, every input checked before any is stored; the
    first ``max_parallel`` runnable, the rest held until released."""
    if isinstance(inputs, (str, bytes, dict)) or not isinstance(inputs, Sequence):
        raise ConfigError(f"ctx.map needs a list of inputs, not {type(inputs).__name__}")
    if not 1 <= len(inputs) <= MAX_CHILDREN:
        raise ConfigError(f"ctx.map takes 1 to {MAX_CHILDREN:,} inputs, not {len(inputs):,}")
    window = len(inputs) if max_parallel is None else max_parallel
    return tuple(
        new_child(
            registry,
            parent,
            workflow,
            value,
            run_id=f"{prefix}{n}",
            now_ms=now_ms,
            joined=joined,
            held=n >= window,
        )
        for n, value in enumerate(inputs)
    )


def waited_ids(handles: object, parent_id: str, started: set[str]) -> tuple[list[str], bool]:
    """The run ids ``ctx.wait`` waits for, and whether it was given one handle (not a
    list); each must be a child this run started."""
    single = isinstance(handles, RunHandle)
    listed = [handles] if single else handles
    if not isinstance(listed, (list, tuple)) or not listed:
        raise ConfigError(f"ctx.wait needs a RunHandle or a list of them, not {handles!r}")
    ids = []
    for handle in listed:
        if not isinstance(handle, RunHandle):
            raise ConfigError(f"ctx.wait needs RunHandles from ctx.start, not {handle!r}")
        if handle.id not in started:
            raise ConfigError(
                f"Run {handle.id!r} is not a child of run {parent_id!r}: a run waits only "
                "for the runs it started with ctx.start"
            )
        ids.append(handle.id)
    return ids, single


def joined_value(
    found: Sequence[Outcome | None], ids: Sequence[str], *, settle: bool, single: bool
) -> Any:
    """What a wait returns once its children have ended: their results in order (or
    ``Outcome``s with ``settle``), one for a single handle; ``ChildRunFailed`` for the
    first that failed or was cancelled. A replay that finds a child unfinished again
    (retried since) or gone says so."""
    outcomes = []
    for run_id, outcome in zip(ids, found, strict=True):
        if outcome is None:
            raise TickworkError(f"Child run {run_id} no longer has the outcome it was waited for")
        outcomes.append(outcome)
    if settle:
        return outcomes[0] if single else list(outcomes)
    for outcome in outcomes:
        if outcome.status is not RunStatus.COMPLETED:
            raise ChildRunFailed(outcome.run_id, str(outcome.status), outcome.error)
    results = [outcome.result for outcome in outcomes]
    return results[0] if single else results
