"""The app of ``test_children_fleet``: a parent mapping over ``CHILDREN_N`` children, each
one step that doubles its input. Each worker writes ``exec <run id> <pid>`` to
``ACCEPT_DIR/children.log`` when a child's step begins, so the test can tell a child's
step run again after a kill (allowed before its checkpoint) from a child run twice."""

from __future__ import annotations

import os
from pathlib import Path

from tickwork import Context, Engine

engine = Engine(os.environ["TICKWORK_DATABASE_URL"], lease="3s")
LOG = Path(os.environ.get("ACCEPT_DIR", ".")) / "children.log"


def double(run_id: str, n: int) -> int:
    with open(LOG, "a", encoding="utf-8") as log:
        log.write(f"exec {run_id} {os.getpid()}\n")
    return n * 2


@engine.workflow("leaf")
def leaf(ctx: Context, n: int) -> int:
    return ctx.step("double", double, ctx.run_id, n)


@engine.workflow("parent")
def parent(ctx: Context, count: int) -> list[int]:
    return ctx.map("leaf", list(range(count)))
