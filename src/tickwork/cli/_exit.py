"""The command's exit codes, and a tickwork error as one line on stderr with its code.

Every command ends with one of these (README and docs/behaviour.md hold the same table):

====  =====================================================================================
0     done
1     a waited-for run failed or was cancelled (``runs start --wait``)
2     invalid input: an option, a URL, an app, a workflow, a value the database refused;
      a ``serve --host/--port`` that cannot be bound (``serve._listen``)
3     no such schedule, run or API key
4     the database cannot be reached or opened (wrong host, port, database name or
      password, a server that is down; a SQLite file in a missing folder, unwritable, or
      not a database), or it went away during the command
124   ``runs start --wait --timeout`` gave up waiting (as ``timeout(1)``)
====  =====================================================================================
"""

from __future__ import annotations

from typing import NoReturn

from ..errors import StoreError, TickworkError
from ._render import fail

__all__ = ["EXIT_INVALID", "EXIT_UNREACHABLE", "exit_code", "fail_with"]

EXIT_INVALID = 2
EXIT_UNREACHABLE = 4


def exit_code(exc: TickworkError) -> int:
    """The exit code that says what kind of trouble ``exc`` is."""
    # StoreUnreachable is transient: it and an outage met later both mean "cannot reach".
    if isinstance(exc, StoreError) and exc.transient:
        return EXIT_UNREACHABLE
    return EXIT_INVALID


def fail_with(exc: TickworkError) -> NoReturn:
    """``exc`` on stderr (``error: ...``, no traceback; a database's trouble on one line)
    and its exit code."""
    message = " ".join(str(exc).split()) if isinstance(exc, StoreError) else str(exc)
    fail(message, code=exit_code(exc))
