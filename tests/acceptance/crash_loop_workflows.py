"""Workflows whose steps end their worker process with ``os._exit(1)``, for
``test_crash_loops.py``; ``define(engine)`` registers them (the worker app
``crash_loop_app.py`` and the test process both call it).

Every step execution appends ``run_id step pid`` to ``ACCEPT_DIR/executions.log`` (one
``write`` on an ``O_APPEND`` descriptor) before doing anything else.
"""

from __future__ import annotations

import os
import time
from pathlib import Path

from tickwork import Context, Engine, Retry

EXECUTIONS = "executions.log"
#: the steps of ``crash-once-each``, each of which ends its worker the first time only
ONCE_EACH = ("a", "b", "c", "d")
#: how long the step of ``innocent`` takes: several turns of a crash loop (a worker starts,
#: claims, dies, and its 1-second lease expires), so that it is in flight at every death
#: of a worker it shares with ``poison``
INNOCENT_STEP_S = 5.0


def define(engine: Engine) -> None:
    @engine.workflow("crash-loop")  # max_recoveries: the default (5)
    def crash_loop(ctx: Context) -> str:
        ctx.step("prepare", _log, ctx.run_id, "prepare")
        ctx.step("crash", _exit, ctx.run_id, "crash")
        return "unreachable"

    @engine.workflow("crash-once-each", max_recoveries=2)
    def crash_once_each(ctx: Context) -> list[str]:
        return [ctx.step(name, _exit_first_time, ctx.run_id, name) for name in ONCE_EACH]

    @engine.workflow("poison")  # max_recoveries: the default (5)
    def poison(ctx: Context) -> str:
        ctx.step("poison", _exit, ctx.run_id, "poison")
        return "unreachable"

    @engine.workflow("innocent", retry=Retry(max_attempts=10))
    def innocent(ctx: Context) -> str:
        return str(ctx.step("long", _long, ctx.run_id, "long"))


def _log(run_id: str, step: str) -> str:
    line = f"{run_id} {step} {os.getpid()}\n".encode()
    fd = os.open(Path(os.environ["ACCEPT_DIR"], EXECUTIONS), os.O_WRONLY | os.O_APPEND | os.O_CREAT)
    try:
        os.write(fd, line)
    finally:
        os.close(fd)
    return step


def _long(run_id: str, step: str) -> str:
    _log(run_id, step)
    time.sleep(INNOCENT_STEP_S)  # the work of a long step, not a wait for something
    return "done"


def _exit(run_id: str, step: str) -> None:
    _log(run_id, step)
    os._exit(1)  # as a segfault or an OOM kill would: no clean-up, the lease left held


def _exit_first_time(run_id: str, step: str) -> str:
    _log(run_id, step)
    marker = Path(os.environ["ACCEPT_DIR"], f"{run_id}-{step}.died")
    if not marker.exists():
        marker.touch()
        os._exit(1)
    return step
