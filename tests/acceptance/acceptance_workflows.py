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

import inspect
import os
import signal
import sys
import threading
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


def watch_sigterm() -> None:
    """Note SIGTERM's arrival, for ``_hold(...=sigterm)``, without taking it from the worker.

    Python's C-level signal handler writes each signal's number to the wakeup fd as soon
    as the signal arrives, whatever Python-level handler the worker installs for it. Must
    be called from the main thread (the app module is imported there).
    """
    global _sigterm_seen
    read, write = os.pipe()
    os.set_blocking(write, False)
    signal.set_wakeup_fd(write)
    seen = _sigterm_seen = threading.Event()

    def watch() -> None:
        while signal.SIGTERM not in os.read(read, 64):
            pass
        seen.set()

    threading.Thread(target=watch, name="sigterm-watch", daemon=True).start()


def sigterm_inside_event_clear() -> None:
    """Deliver SIGTERM to this process at one chosen instant: while its main thread is
    inside ``threading.Event.clear``, holding the event's internal (non-reentrant) lock.

    A real SIGTERM may arrive at any instant; this picks the worst one for a signal
    handler that calls ``Event.set`` on the same event, deterministically. It arms itself
    once the worker has installed its SIGTERM handler and fires on the main thread's next
    ``Event.clear``. ``signal.raise_signal`` runs the Python handler before it returns,
    so the handler runs while the lock is held.

    A watchdog thread then looks at the main thread's stack: if it shows ``Event.set``
    waiting inside ``Event.clear`` of the same event, the thread waits for a lock it holds
    itself, forever. It prints that stack and ends the process with status 3 rather than
    leaving the test to wait for a hang. Must be called from the main thread.
    """
    clear_code = threading.Event.clear.__code__
    lines, first = inspect.getsourcelines(threading.Event.clear)
    inside = first + next(i for i, line in enumerate(lines) if "self._flag = False" in line)
    main = threading.get_ident()
    fired = False

    def trace_calls(frame: Any, event: str, arg: Any) -> Any:
        return trace_lines if frame.f_code is clear_code else None

    def trace_lines(frame: Any, event: str, arg: Any) -> Any:
        nonlocal fired
        if fired or event != "line" or frame.f_lineno != inside:
            return trace_lines
        if not callable(signal.getsignal(signal.SIGTERM)):
            return trace_lines  # the worker has not installed its handler yet
        fired = True
        threading.Thread(target=_watch_for_self_deadlock, args=(main,), daemon=True).start()
        signal.raise_signal(signal.SIGTERM)
        return trace_lines

    sys.settrace(trace_calls)


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
