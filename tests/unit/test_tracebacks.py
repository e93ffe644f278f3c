"""``fold_traceback``: tickwork's frames folded to one line per run, every other line of a
traceback kept exactly, indentation included."""

from __future__ import annotations

import asyncio
import os

from tickwork._values.tracebacks import TICKWORK_DIR, fold_traceback

ASYNCIO = os.path.dirname(asyncio.__file__)
EXECUTOR = os.path.join(TICKWORK_DIR, "_runtime/executor.py")
CONTEXT = os.path.join(TICKWORK_DIR, "_runtime/context.py")


def frame(path: str, func: str, source: str) -> str:
    return f'  File "{path}", line 7, in {func}\n    {source}\n    ^^^^^^'


def traceback(*frames: str, error: str = "KeyError: 'x'") -> str:
    return "\n".join(["Traceback (most recent call last):", *frames, error])


def test_each_run_of_tickwork_frames_becomes_one_line_the_users_kept_as_they_are() -> None:
    """Two executor frames, the user's workflow, ctx.step's frame, the user's step: the
    two runs of tickwork's frames fold, the user's frames keep their lines and spaces."""
    text = traceback(
        frame(EXECUTOR, "run", "value = _call(definition, ctx)"),
        frame(EXECUTOR, "_call", "return definition.fn(*args)"),
        frame("/app/jobs.py", "nightly", 'return ctx.step("s", boom)'),
        frame(CONTEXT, "step", "value = fn(*args, **kwargs)"),
        frame("/app/jobs.py", "boom", "return d[x]"),
    )
    assert fold_traceback(text) == traceback(
        "  … 2 frames in tickwork …",
        frame("/app/jobs.py", "nightly", 'return ctx.step("s", boom)'),
        "  … 1 frame in tickwork …",
        frame("/app/jobs.py", "boom", "return d[x]"),
    )


def test_asyncio_frames_fold_with_tickworks_but_alone_are_the_users() -> None:
    """asyncio's frames under tickwork's (its asyncio.run of an async workflow) fold with
    them; asyncio frames between two of the user's frames are kept."""
    runner = os.path.join(ASYNCIO, "runners.py")
    text = traceback(
        frame(EXECUTOR, "_call", "value = asyncio.run(...)"),
        frame(runner, "run", "return runner.run(main)"),
        frame("/app/jobs.py", "main", "asyncio.run(inner())"),
        frame(runner, "run", "return runner.run(main)"),
        frame("/app/jobs.py", "inner", "raise KeyError('x')"),
    )
    assert fold_traceback(text) == traceback(
        "  … 2 frames in tickwork …",
        frame("/app/jobs.py", "main", "asyncio.run(inner())"),
        frame(runner, "run", "return runner.run(main)"),
        frame("/app/jobs.py", "inner", "raise KeyError('x')"),
    )


def test_chained_exceptions_and_a_cut_start_are_kept() -> None:
    """The header of a chained exception and a truncated start ("…") are not frames:
    kept, and a run of tickwork frames does not fold across them."""
    first = traceback(frame(CONTEXT, "step", "fn()"), error="OSError: down")
    second = traceback(frame(EXECUTOR, "run", "x"), error="KeyError: 'x'")
    middle = "\nDuring handling of the above exception, another exception occurred:\n\n"
    text = "…" + first + "\n" + middle + second
    assert fold_traceback(text) == (
        "…"
        + traceback("  … 1 frame in tickwork …", error="OSError: down")
        + "\n"
        + middle
        + traceback("  … 1 frame in tickwork …", error="KeyError: 'x'")
    )


def test_text_without_tickwork_frames_is_unchanged() -> None:
    """A traceback of the user's frames only, or any other text, comes back as it was."""
    text = traceback(frame("/app/jobs.py", "boom", "return d[x]")) + "\n"
    assert fold_traceback(text) == text
    assert fold_traceback("  indented\n\tTabbed\n") == "  indented\n\tTabbed\n"
    assert fold_traceback(text.replace("/app", TICKWORK_DIR), package_dir="/elsewhere/") == (
        text.replace("/app", TICKWORK_DIR)
    )
