"""A tickwork app: a three-step report started for three days, and a job every 5 s.

    tickwork worker examples/hello.py:engine

Every run prints a line when it completes. Stop the worker with Ctrl-C: it lets runs in
flight finish first. Start it again and it picks up where it left off: the reports are
not started twice, and the schedule catches up with the latest occurrence it missed.
"""

from __future__ import annotations

import random
import sys

from tickwork import Context, Engine, Every, RunInfo

engine = Engine()  # sqlite:///tickwork.db in the current folder, or $TICKWORK_DATABASE_URL


def fetch_orders(day: str) -> list[dict[str, object]]:
    return [{"id": n, "total": round(random.uniform(5, 500), 2)} for n in range(1, 6)]


def summarise(orders: list[dict[str, float]]) -> dict[str, float]:
    return {"orders": len(orders), "revenue": round(sum(o["total"] for o in orders), 2)}


@engine.workflow("daily-report")
def daily_report(ctx: Context, input: dict[str, str]) -> dict[str, float]:
    orders = ctx.step("fetch", fetch_orders, input["day"])  # stored: never fetched twice
    ctx.sleep("settle", "2s")  # durable: the worker is free meanwhile, a restart keeps it
    return ctx.step("summarise", summarise, orders)


@engine.workflow("heartbeat", schedule=Every("5s", key="heartbeat"))
def heartbeat(ctx: Context) -> str:
    assert ctx.scheduled_for is not None
    return f"beat for {ctx.scheduled_for:%H:%M:%S}"


@engine.on_run_completed
def print_run(run: RunInfo) -> None:
    # One write per line: runs complete on several threads at once, and print() writes
    # the text and its newline separately, so two lines could interleave.
    sys.stdout.write(f"run {run.id} of {run.workflow} completed: {run.result}\n")
    sys.stdout.flush()


# Idempotent by run id: restarting the worker does not start these again.
for day in ("2026-11-28", "2026-11-29", "2026-11-30"):
    engine.start("daily-report", {"day": day}, run_id=f"report-{day}")
