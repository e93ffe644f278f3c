"""What a waiting run waits for, as the dashboard says it: "waiting for order.paid (until
…)" (DESIGN §9), read from the wait's checkpoint (kind ``event``, status ``waiting``)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from .._clock import from_ms
from .._models import RunInfo, RunStatus, StepInfo

__all__ = ["WaitingFor", "waiting_for"]


@dataclass(frozen=True, slots=True)
class WaitingFor:
    """The event names a run waits for (``a|b`` for a list) and until when (None: no
    timeout)."""

    names: str
    until: datetime | None


def waiting_for(run: RunInfo, steps: list[StepInfo]) -> WaitingFor | None:
    """What ``run`` waits for, or None when it does not wait for an event."""
    if run.status is not RunStatus.WAITING:
        return None
    for step in reversed(steps):
        if step.kind == "event" and step.status == "waiting" and isinstance(step.result, dict):
            until = step.result.get("until")
            when = None if until is None else from_ms(int(until))
            return WaitingFor(step.name.split("#")[0].replace("|", ", "), when)
    return None
