"""The workflow the acceptance tests run in real worker processes, and its instrumentation.

``define(engine)`` registers it; the worker app (``acceptance_app.py``) and the test
process (which only starts and inspects runs) both call it.

What a worker process does is steered by environment variables, read when they matter:

- ``ACCEPT_DIR``: where every step execution is logged (``executions.log``, one line per
  execution: ``run_id attempt step pid``, written with one ``write`` on an ``O_APPEND``
  descriptor so lines from concurrent processes never interleave) and where the files
  that release a hold are looked for.
- ``ACCEPT_HOLD``: ``POINT`` or ``POINT=UNTIL`` makes this process stop at ``POINT``
  (``in:one``, ``in:two``, ``in:three``: inside a step, after its line is logged;
  ``after:one``, ...: in the workflow, right after that step's checkpoint is stored).
  ``UNTIL`` is ``forever`` (the default: until the process is killed), ``sigterm``
  (until the process receives SIGTERM) or ``file:NAME`` (until the file
  ``ACCEPT_DIR/NAME`` exists).
- ``ACCEPT_SIGTERM_INSIDE_EVENT_CLEAR=1``: see ``sigterm_inside_event_clear``.
"""

from __future__ import annotations

import gc
import inspect
import logging
import os
import signal
import sys
import threading
import time
import traceback
from pathlib import Path
from typing import Any

from tickwork import Context, Engine

WORKFLOW = "three-steps"
STEPS = ("one", "two", "three")
EXECUTIONS = "executions.log"

_sigterm_seen: threading.Event | None = None


def expected_result(n: int) -> dict[str, int]:
    """What a run of ``three-steps`` with input ``{"n": n}`` returns."""
    return {"n": n, "value": (n + 1) * 2 + 3}


def define(engine: Engine) -> None:
    """Register ``three-steps``: step one, a durable sleep, steps two and three."""

    @engine.workflow(WORKFLOW)
    def three_steps(ctx: Context, input: dict[str, Any]) -> dict[str, int]:
        one = ctx.step("one", _work, ctx, "one", input["n"] + 1)
        _hold("after:one")
        ctx.sleep("nap", input.get("nap", "10ms"))
        two = ctx.step("two", _work, ctx, "two", one * 2)
        _hold("after:two")
        three = ctx.step("three", _work, ctx, "three", two + 3)
        _hold("after:three")
        return {"n": input["n"], "value": three}

    @engine.workflow("frozen-objects")
    def frozen_objects(ctx: Context) -> int:
        """How many objects the worker's process left out of full garbage collections,
        once it has (it does so moments after starting; given up on after 10 s)."""
        for _ in range(500):
            if gc.get_freeze_count():
                break
            time.sleep(0.02)
        return gc.get_freeze_count()


def watch_sigterm() -> None:
    """Note that the worker took SIGTERM, for ``_hold(...=sigterm)``.

    The worker logs "SIGTERM received, draining" on the ``tickwork`` logger as soon as it
    takes the signal; a logging handler turns that line into an event.
    """
    global _sigterm_seen
    seen = _sigterm_seen = threading.Event()

    class Seen(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            if "SIGTERM received" in record.getMessage():
                seen.set()

    logging.getLogger("tickwork").addHandler(Seen())


def sigterm_inside_event_clear() -> None:
    """Deliver SIGTERM to this process at one chosen instant: while the worker loop is
    inside ``threading.Event.clear``, holding the event's internal (non-reentrant) lock.

    A real SIGTERM may arrive at any instant; this picks the worst one for a signal
    handler that would call ``Event.set`` on the same event in the same thread. It fires
    once, on the first ``Event.clear`` of the worker's loop thread ("tickwork-loop").

    A watchdog thread then looks at that thread's stack: if it shows ``Event.set``
    waiting inside ``Event.clear`` of the same event, the thread waits for a lock it holds
    itself, forever. It prints that stack and ends the process with status 3 rather than
    leaving the test to wait for a hang.
    """
    clear_code = threading.Event.clear.__code__
    lines, first = inspect.getsourcelines(threading.Event.clear)
    inside = first + next(i for i, line in enumerate(lines) if "self._flag = False" in line)
    fired = False

    def trace_calls(frame: Any, event: str, arg: Any) -> Any:
        if threading.current_thread().name != "tickwork-loop":
            return None
        return trace_lines if frame.f_code is clear_code else None

    def trace_lines(frame: Any, event: str, arg: Any) -> Any:
        nonlocal fired
        if fired or event != "line" or frame.f_lineno != inside:
            return trace_lines
        fired = True
        loop = threading.get_ident()
        threading.Thread(target=_watch_for_self_deadlock, args=(loop,), daemon=True).start()
        os.kill(os.getpid(), signal.SIGTERM)
        # Stay inside clear() (holding its lock) until the signal has been taken.
        threading.Event().wait(0.5)
        return trace_lines

    threading.settrace(trace_calls)


def _watch_for_self_deadlock(thread_id: int) -> None:
    lock_type = type(threading.Lock())
    while True:
        frame = sys._current_frames().get(thread_id)
        stack = []
        while frame is not None:
            stack.append(frame)
            frame = frame.f_back
        setting = [
            f.f_locals.get("self") for f in stack if f.f_code is threading.Event.set.__code__
        ]
        clearing = [
            f.f_locals.get("self") for f in stack if f.f_code is threading.Event.clear.__code__
        ]
        for event in setting:
            if any(event is other for other in clearing) and type(event._cond._lock) is lock_type:
                sys.stderr.write(
                    "DEADLOCK: the SIGTERM handler calls Event.set() while this thread holds "
                    "the same Event's lock in Event.clear():\n"
                    + "".join(traceback.format_stack(sys._current_frames()[thread_id]))
                )
                sys.stderr.flush()
                os._exit(3)
        threading.Event().wait(0.01)


def _work(ctx: Context, step: str, value: int) -> int:
    _log_execution(ctx, step)
    _hold(f"in:{step}")
    return value


def _log_execution(ctx: Context, step: str) -> None:
    line = f"{ctx.run_id} {ctx.attempt} {step} {os.getpid()}\n".encode()
    fd = os.open(Path(os.environ["ACCEPT_DIR"], EXECUTIONS), os.O_WRONLY | os.O_APPEND | os.O_CREAT)
    try:
        os.write(fd, line)
    finally:
        os.close(fd)


def _hold(point: str) -> None:
    where, _, until = os.environ.get("ACCEPT_HOLD", "").partition("=")
    if where != point:
        return
    if until in ("", "forever"):
        threading.Event().wait()  # until the process is killed
    elif until.startswith("file:"):
        release = Path(os.environ["ACCEPT_DIR"], until.removeprefix("file:"))
        while not release.exists():
            threading.Event().wait(0.01)
    elif until == "sigterm":
        _wait_for_sigterm()
    else:
        raise ValueError(f"ACCEPT_HOLD: unknown condition {until!r}")


def _wait_for_sigterm() -> None:
    if _sigterm_seen is None:
        raise RuntimeError("ACCEPT_HOLD=...=sigterm needs watch_sigterm() at import")
    _sigterm_seen.wait()
