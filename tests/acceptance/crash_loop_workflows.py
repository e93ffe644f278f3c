"""Workflows whose steps end their worker process with ``os._exit(1)``, for
``test_crash_loops.py``; ``define(engine)`` registers them (the worker app
``crash_loop_app.py`` and the test process both call it).

Every step execution appends ``run_id step pid`` to ``ACCEPT_DIR/executions.log`` (one
``write`` on an ``O_APPEND`` descriptor) before doing anything else.
"""

from __future__ import annotations

import os
from pathlib import Path

from tickwork import Context, Engine

EXECUTIONS = "executions.log"
#: the steps of ``crash-once-each``, each of which ends its worker the first time only
ONCE_EACH = ("a", "b", "c", "d")


def define(engine: Engine) -> None:
    @engine.workflow("crash-loop")  # max_recoveries: the default (5)
    def crash_loop(ctx: Context) -> str:
        ctx.step("prepare", _log, ctx.run_id, "prepare")
        ctx.step("crash", _exit, ctx.run_id, "crash")
        return "unreachable"

    @engine.workflow("crash-once-each", max_recoveries=2)
    def crash_once_each(ctx: Context) -> list[str]:
        return [ctx.step(name, _exit_first_time, ctx.run_id, name) for name in ONCE_EACH]


def _log(run_id: str, step: str) -> str:
    line = f"{run_id} {step} {os.getpid()}\n".encode()
    fd = os.open(Path(os.environ["ACCEPT_DIR"], EXECUTIONS), os.O_WRONLY | os.O_APPEND | os.O_CREAT)
    try:
        os.write(fd, line)
    finally:
        os.close(fd)
    return step


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
