"""A run's traceback as shown to people: tickwork's own frames folded to one line.

A run's traceback is stored whole (``_context.describe_traceback``); where it is shown
(``tickwork runs show``, the dashboard's run page, a worker's readable log line), the
frames of tickwork's machinery around the user's code (the executor calling the
workflow, ``ctx.step`` calling the step, the ``asyncio.run`` of an async workflow) say
nothing to its reader and push the user's frames out of sight. ``fold_traceback``
replaces each run of them with ``… 5 frames in tickwork …``, keeping every other line
as it is, indentation included.
"""

from __future__ import annotations

import asyncio
import os
import re

__all__ = ["fold_traceback"]

#: tickwork's own source files: its package folder
TICKWORK_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep
#: the standard library's asyncio, which tickwork runs an async workflow with
_ASYNCIO_DIR = os.path.dirname(os.path.abspath(asyncio.__file__)) + os.sep
_FRAME = re.compile(r'^(?P<indent>[ |]*)File "(?P<file>[^"]*)", line \d+')


def fold_traceback(text: str, package_dir: str = TICKWORK_DIR) -> str:
    """``text`` (a Python traceback) with each run of consecutive frames from
    ``package_dir`` (tickwork's own, by default; asyncio's beside them count with them)
    replaced by one line, ``… N frames in tickwork …``, at the frames' indentation.
    A run of asyncio frames alone is the user's own and kept. Other lines (the
    exception, a chained one's header, a truncated start) are kept exactly."""
    lines = text.split("\n")
    out: list[str] = []
    folded: list[tuple[str, bool]] = []  # (indent, is tickwork's) of the frames held back
    held: list[str] = []  # their lines, given back when the run turns out to be asyncio's
    i = 0
    while i < len(lines):
        frame = _FRAME.match(lines[i])
        end = i + 1
        if frame is not None:
            indent = frame["indent"]
            while end < len(lines) and _inside(lines[end], indent):
                end += 1
            path = frame["file"]
            if path.startswith(package_dir) or path.startswith(_ASYNCIO_DIR):
                folded.append((indent, path.startswith(package_dir)))
                held.extend(lines[i:end])
                i = end
                continue
        _flush(out, folded, held)
        out.extend(lines[i:end])
        i = end
    _flush(out, folded, held)
    return "\n".join(out)


def _inside(line: str, indent: str) -> bool:
    """Whether ``line`` belongs to the frame above it (its source line, its carets):
    indented deeper than the frame's ``File`` line and not a frame itself."""
    return line.startswith(indent + "  ") and _FRAME.match(line) is None


def _flush(out: list[str], folded: list[tuple[str, bool]], held: list[str]) -> None:
    """End a run of held-back frames: one line if any is tickwork's, else as they were."""
    if any(mine for _indent, mine in folded):
        count = len(folded)
        out.append(f"{folded[0][0]}… {count} frame{'s' if count > 1 else ''} in tickwork …")
    else:
        out.extend(held)
    folded.clear()
    held.clear()
