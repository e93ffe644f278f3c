"""The app of ``test_event_waits_survive_sigkill``: a run that waits for its payment."""

from __future__ import annotations

import os

from tickwork import Context, Engine

engine = Engine(os.environ["TICKWORK_DATABASE_URL"])


@engine.workflow("fulfil")
def fulfil(ctx: Context, input: int) -> dict[str, object]:
    before = ctx.step("before", os.getpid)
    paid = ctx.wait_for_event("order.paid", match={"order_id": input})
    return {"before": before, "after": os.getpid(), "paid": paid.id if paid else None}
