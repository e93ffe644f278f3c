"""What a waiting run waits for, as the dashboard says it: "waits for order.paid where
order_id = 404, until …" (DESIGN §9), read from the wait's checkpoint (kind ``event``,
status ``waiting``; the words are ``_values/checkpoints.py``'s, shared with the CLI)."""

from __future__ import annotations

from .._values.checkpoints import WaitingFor
from .._values.checkpoints import waiting_for as step_waits_for
from .._values.models import RunInfo, RunStatus, StepInfo

__all__ = ["WaitingFor", "waiting_for"]


def waiting_for(run: RunInfo, steps: list[StepInfo]) -> WaitingFor | None:
    """What ``run`` waits for, or None when it does not wait for an event."""
    if run.status is not RunStatus.WAITING:
        return None
    for step in reversed(steps):
        wait = step_waits_for(step)
        if wait is not None:
            return wait
    return None
