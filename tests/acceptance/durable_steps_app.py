"""The app of ``test_checkpoints_survive_sigkill.py``'s worker processes:
``tickwork worker durable_steps_app.py:engine`` on ``TICKWORK_DATABASE_URL``.

The workflow ``marked-steps`` runs ``STEPS`` trivial steps (so that the worker's threads
checkpoint at once and their writes share commits). Every step function entered appends
``exec run_id step pid`` to ``ACCEPT_DIR/steps.log``; every ``ctx.step`` that returns
appends ``stored run_id step pid`` before anything else. With ``DURABLE_KILL_AT=N``, the
thread whose ``ctx.step`` is the N-th to return in this process SIGKILLs the process
right after writing its line, while its other threads are checkpointing.

Each line is one ``write`` on an ``O_APPEND`` descriptor: lines of concurrent threads and
processes never interleave.
"""

from __future__ import annotations

import itertools
import os
import signal
import threading
from pathlib import Path

from tickwork import Context, Engine

WORKFLOW = "marked-steps"
STEPS = ("one", "two", "three")
LOG = "steps.log"

_returned = itertools.count(1)
_returned_lock = threading.Lock()


def define(engine: Engine) -> None:
    @engine.workflow(WORKFLOW)
    def marked_steps(ctx: Context, n: int) -> int:
        total = 0
        for index, step in enumerate(STEPS):
            total += ctx.step(step, _execute, ctx.run_id, step, n + index)
            _after_step(ctx.run_id, step)
        return total


def _line(kind: str, run_id: str, step: str) -> None:
    line = f"{kind} {run_id} {step} {os.getpid()}\n".encode()
    fd = os.open(Path(os.environ["ACCEPT_DIR"], LOG), os.O_WRONLY | os.O_APPEND | os.O_CREAT)
    try:
        os.write(fd, line)
    finally:
        os.close(fd)


def _execute(run_id: str, step: str, value: int) -> int:
    _line("exec", run_id, step)
    return value


def _after_step(run_id: str, step: str) -> None:
    """The code after a step: it may rely on the step's checkpoint being stored."""
    _line("stored", run_id, step)
    kill_at = int(os.environ.get("DURABLE_KILL_AT", "0"))
    with _returned_lock:
        nth = next(_returned)
    if nth == kill_at:
        os.kill(os.getpid(), signal.SIGKILL)


engine = Engine(lease=os.environ.get("ACCEPT_LEASE", "1s"))
define(engine)
