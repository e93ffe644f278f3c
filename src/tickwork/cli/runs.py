"""``tickwork runs list|show|cancel``."""

from __future__ import annotations

from typing import Any

import click

from .._models import RunInfo, RunStatus, StepInfo
from .._wire import run_to_wire, step_to_wire
from ._options import database_option, json_option, open_engine
from ._render import echo_json, fail, print_table, printable

__all__ = ["command", "to_json"]


def to_json(value: RunInfo | StepInfo) -> dict[str, Any]:
    """A run or step as the HTTP API sends it: one JSON shape for scripts everywhere."""
    return run_to_wire(value) if isinstance(value, RunInfo) else step_to_wire(value)


@click.group("runs")
def command() -> None:
    """List, inspect and cancel runs."""


@command.command("list")
@click.option("--workflow", default=None)
@click.option("--status", type=click.Choice([s.value for s in RunStatus]), default=None)
@click.option("--schedule", "schedule_key", default=None, help="Runs of this schedule key.")
@click.option("-n", "--limit", default=50, show_default=True)
@click.option("--before", default=None, help="Only runs listed after this run id (next page).")
@database_option
@json_option
def list_(
    workflow: str | None,
    status: str | None,
    schedule_key: str | None,
    limit: int,
    before: str | None,
    database: str | None,
    as_json: bool,
) -> None:
    """Runs, newest first."""
    with open_engine(database) as engine:
        runs = engine.list_runs(
            workflow=workflow, status=status, schedule_key=schedule_key, limit=limit, before=before
        )
    if as_json:
        echo_json([to_json(r) for r in runs])
        return
    print_table(
        ["id", "workflow", "status", "attempt", "created (UTC)", "schedule"],
        [
            (
                r.id,
                r.workflow,
                r.status.value,
                r.attempt,
                r.created_at.strftime("%Y-%m-%d %H:%M:%S"),
                r.schedule_key,
            )
            for r in runs
        ],
    )


@command.command("show")
@click.argument("run_id")
@database_option
@json_option
def show(run_id: str, database: str | None, as_json: bool) -> None:
    """One run with its steps."""
    with open_engine(database) as engine:
        run = engine.get_run(run_id)
        steps = engine.list_steps(run_id) if run is not None else []
    if run is None:
        fail(f"no run {run_id!r}", code=3)
        return
    if as_json:
        echo_json({**to_json(run), "steps": [to_json(s) for s in steps]})
        return
    print_table(["field", "value"], list(to_json(run).items()), title=run_id)
    print_table(
        ["step", "kind", "status", "attempts", "duration", "result / error"],
        [
            (
                s.name,
                s.kind,
                s.status,
                s.attempts,
                s.finished_at - s.started_at,
                s.error if s.error else s.result,
            )
            for s in steps
        ],
    )


@command.command("cancel")
@click.argument("run_id")
@database_option
def cancel(run_id: str, database: str | None) -> None:
    """Cancel a run (at once if pending or sleeping, at its next step if running)."""
    with open_engine(database) as engine:
        if not engine.cancel(run_id):
            fail(f"no unfinished run {run_id!r}", code=3)
    click.echo(f"{printable(run_id)}: cancelled")
