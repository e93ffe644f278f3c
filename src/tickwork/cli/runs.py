"""``tickwork runs list|show|start|cancel``."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any

import click

from .._edge.wire import (
    error_line,
    instant,
    run_detail_to_wire,
    run_page_to_wire,
)
from .._engine import Engine
from .._rules.liveness import unserved_run
from .._values.checkpoints import (
    asleep_in,
    child_wait,
    child_wait_words,
    step_took,
    wait_words,
    waiting_for,
)
from .._values.checks import MAX_LIMIT
from .._values.clock import from_ms
from .._values.durations import describe_duration, parse_duration
from .._values.hints import not_found
from .._values.models import RunInfo, RunStatus, StepInfo
from .._values.tracebacks import fold_traceback
from .._values.wire_values import to_json
from ..errors import ConfigError, RunCancelled, RunFailed, RunTimeout
from ._options import app_engine, database_option, json_option, open_engine
from ._render import echo_json, fail, field_rows, json_text, print_table, printable

__all__ = ["command"]


#: exit codes of ``runs start --wait``: the run failed or was cancelled; --timeout passed
EXIT_RUN_FAILED = 1
EXIT_TIMEOUT = 124  # as timeout(1)


def _when(value: datetime | None) -> str | None:
    return None if value is None else value.astimezone(UTC).strftime("%Y-%m-%d %H:%M:%S")


@click.group("runs")
def command() -> None:
    """List, inspect, start and cancel runs."""


@command.command("list")
@click.option("--workflow", default=None)
@click.option("--status", type=click.Choice([s.value for s in RunStatus]), default=None)
@click.option("--schedule", "schedule_key", default=None, help="Runs of this schedule key.")
@click.option("-n", "--limit", default=50, show_default=True)
@click.option("--before", default=None, help="Only runs listed after this run id (next page).")
@click.option("--parent", default=None, help="Only the child runs this run started.")
@database_option
@json_option
def list_(
    workflow: str | None,
    status: str | None,
    schedule_key: str | None,
    limit: int,
    before: str | None,
    parent: str | None,
    database: str | None,
    as_json: bool,
) -> None:
    """Runs, newest first; a failed run with the first line of its error.

    With --json: the API's page (``runs``, and ``next_before``: the --before of the next
    page, null on the last)."""
    with open_engine(database) as engine:
        # One more than the page, to know whether another page follows (as the API does).
        runs = engine.list_runs(
            workflow=workflow, status=status, schedule_key=schedule_key,
            limit=min(limit + 1, MAX_LIMIT) if limit >= 1 else limit, before=before,
            parent=parent,
        )  # fmt: skip
    if as_json:
        echo_json(run_page_to_wire(runs, offset=0, limit=limit))
        return
    runs = runs[:limit]
    if not runs:
        filters = {"workflow": workflow, "status": status, "schedule": schedule_key,
                   "parent": parent, "before": before}  # fmt: skip
        said = ", ".join(f"{name} {value!r}" for name, value in filters.items() if value)
        click.echo(f"No runs{f' ({said})' if said else ''} in {engine.console.where}.")
        return
    # A scheduled run's id starts with its schedule's key: no column of its own.
    print_table(
        ["id", "status", "workflow", "attempt", "created (UTC)", "error"],
        [
            (r.id, r.status.value, r.workflow, r.attempt, _when(r.created_at), error_line(r.error))
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
        children = engine.console.child_counts(run_id) if run is not None else {}
        remaining = {
            (s.kind, s.name): engine.console.children_remaining(run_id, s)
            for s in steps
            if child_wait(s) is not None
        }
    if run is None:
        fail(not_found("run", run_id, engine.console.where), code=3)
    if as_json:
        echo_json(run_detail_to_wire(run, steps))
        return
    fields = to_json(run)
    traceback = fields.pop("traceback")  # many lines: printed as they are, below
    rows = field_rows(fields)
    if children:  # its child runs by status, and where to list them
        counted = ", ".join(f"{n} {status.value}" for status, n in sorted(children.items()))
        rows.append(("children", f"{counted} (tickwork runs list --parent {run.id})"))
    print_table(["field", "value"], rows, title=f"run {run.id}")
    if traceback:  # tickwork's frames folded; each line keeps its indentation
        click.echo("traceback:\n" + _indented(fold_traceback(traceback).rstrip().splitlines()))
    if steps:
        # A sleeping run sleeps in its last checkpoint (a sleep is stored "completed").
        asleep, now = asleep_in(run, steps), engine.clock.now()
        print_table(
            ["step", "kind", "status", "attempts", "duration", "result / error"],
            [_step_row(s, run, asleep=s is asleep, now=now, remaining=remaining) for s in steps],
        )
    for step in steps:  # what it took: each failed try, the end of its traceback
        for one in step.tries:
            click.echo(f"{printable(step.name)}, try {one.attempt} failed: {printable(one.error)}")
            if one.traceback:
                click.echo(_indented(_last_frame(one.traceback.rstrip().splitlines())))


def _indented(lines: list[str]) -> str:
    """``lines`` under a heading: four spaces more each, their own indentation kept."""
    return "\n".join("    " + printable(line.rstrip()) for line in lines)


def _last_frame(lines: list[str]) -> list[str]:
    """The end of a traceback: its last frame (where the exception was raised) and the
    exception."""
    frames = [i for i, line in enumerate(lines) if line.lstrip().startswith('File "')]
    return lines[frames[-1] :] if frames else lines[-3:]


def _step_row(
    step: StepInfo,
    run: RunInfo,
    *,
    asleep: bool,
    now: datetime,
    remaining: dict[tuple[str, str], int | None],
) -> tuple[str, str, str, int, str, str]:
    return (
        step.name,
        step.kind,
        "sleeping" if asleep else step.status,
        step.attempts,
        step_took(step, run, asleep=asleep, now=now),
        _step_outcome(step, asleep, now, remaining),
    )


@command.command("start")
@click.argument("workflow")
@click.option(
    "--app",
    default=None,
    help="module:engine or path/to/app.py:engine that registers WORKFLOW (required).",
)
@click.option("--input", "input_text", default=None, help="The run's input, as JSON.")
@click.option("--run-id", default=None, help="The run's id (idempotent: an existing run is kept).")
@click.option(
    "--wait", is_flag=True, help="Wait for the run to end; exit 1 if it failed or was cancelled."
)
@click.option(
    "--timeout", default=None, help="With --wait: give up waiting after this long (e.g. 10m)."
)
@database_option
@json_option
def start(
    workflow: str,
    app: str | None,
    input_text: str | None,
    run_id: str | None,
    wait: bool,
    timeout: str | None,
    database: str | None,
    as_json: bool,
) -> None:
    """Start a run of WORKFLOW and print its id; with --wait, then its result as JSON.

    The workflow must be registered: --app names the app that registers it, as for
    `tickwork worker` (its input is validated by the workflow's annotation, its options
    apply). Workers execute the run; --wait waits for one to finish it and exits 1 when
    the run failed or was cancelled, 124 when --timeout passed first (the run goes on).
    """
    if app is None:
        fail(
            f"runs start needs the app that registers {workflow!r}: "
            "--app module:engine or --app path/to/app.py:engine",
            code=2,
        )
        return
    value = _parse_input(input_text)
    seconds = None if timeout is None else _seconds(timeout)
    with app_engine(app, database) as engine:
        handle = engine.start(workflow, value, run_id=run_id)
        if not wait:
            if as_json:  # the API's answer to POST /runs: the run
                run = engine.get_run(handle.id)
                echo_json(to_json(run) if run is not None else {"id": handle.id})
            else:
                click.echo(handle.id)
            return
        if not as_json:
            click.echo(handle.id)
            click.echo(
                f"waiting for a worker to finish run {printable(handle.id)} (tickwork worker "
                f"{printable(app)}; Ctrl-C stops waiting, not the run)",
                err=True,
            )
        if (nobody := _nobody_serves(engine, handle.id)) is not None:
            # Said up front: a wait nobody can end looks like a hang until --timeout.
            click.echo(f"warning: {printable(nobody)}; the run waits until one starts", err=True)
        try:
            result = handle.result(timeout=seconds)
        except (RunFailed, RunCancelled) as exc:
            _ended(engine.get_run(handle.id), as_json, str(exc), EXIT_RUN_FAILED)
            return
        except RunTimeout as exc:
            message = f"gave up waiting after {timeout}: {exc} (it goes on)"
            if (nobody := _nobody_serves(engine, handle.id)) is not None:
                message = f"{message}; {nobody}"
            _ended(engine.get_run(handle.id), as_json, message, EXIT_TIMEOUT)
            return
        if as_json:
            run = engine.get_run(handle.id)
            echo_json(to_json(run) if run is not None else {"id": handle.id, "result": result})
        else:
            click.echo(json_text(result))


def _nobody_serves(engine: Engine, run_id: str) -> str | None:
    """Why no live worker would run the unended run ``run_id`` (``_liveness``), or None."""
    run = engine.get_run(run_id)
    if run is None or run.status in (RunStatus.COMPLETED, RunStatus.FAILED, RunStatus.CANCELLED):
        return None
    return unserved_run(run.pool, run.workflow, engine.list_workers())


def _step_outcome(
    step: StepInfo, asleep: bool, now: datetime, remaining: dict[tuple[str, str], int | None]
) -> str:
    """A step's result as JSON, its error as text; a sleep as when it wakes (the one the
    run is ``asleep`` in) or how long it slept, a recorded now() as the instant it read
    (never their epoch milliseconds)."""
    if step.error:
        return step.error
    if step.kind in ("sleep", "now") and type(step.result) is int:
        at = from_ms(step.result)
        if step.kind == "now":
            return str(instant(at))
        if asleep:
            return f"wakes at {instant(at)}"
        return f"slept {describe_duration(at - step.started_at, rounded=True)}"
    if step.kind == "event":
        return _wait_outcome(step, now)
    children = child_wait(step)
    if children is not None:  # "waits for 17 of 20 runs of resize"
        return f"waits for {child_wait_words(children, remaining.get((step.kind, step.name)))}"
    if step.kind == "start" and isinstance(step.result, str):
        return f"started {step.result}"
    return json_text(step.result)


def _wait_outcome(step: StepInfo, now: datetime) -> str:
    """A wait for an event (docs/events.md): what it waits for and until when, the event
    it received, or that it timed out."""
    result, wait = step.result, waiting_for(step)
    if wait is not None:
        return f"waits for {wait_words(wait, now, lambda at: str(instant(at)))}"
    if isinstance(result, dict) and "id" in result:
        return f"event {result['id']}: {json_text(result.get('payload'))}"
    return "timed out"


def _ended(run: RunInfo | None, as_json: bool, message: str, code: int) -> None:
    """A waited-for run that did not complete: its JSON form on stdout with --json, the
    message on stderr, and ``code``."""
    if as_json and run is not None:
        echo_json(to_json(run))
    fail(message, code=code)


def _parse_input(text: str | None) -> Any:
    if text is None:
        return None
    try:
        return json.loads(text)
    except ValueError as exc:
        raise click.BadParameter(f"not JSON: {exc}", param_hint="--input") from exc


def _seconds(timeout: str) -> float:
    try:
        return parse_duration(timeout).total_seconds()
    except ConfigError as exc:
        raise click.BadParameter(str(exc), param_hint="--timeout") from exc


@command.command("cancel")
@click.argument("run_id")
@database_option
def cancel(run_id: str, database: str | None) -> None:
    """Cancel a run (at once if pending or sleeping, at its next step if running)."""
    with open_engine(database) as engine:
        if not engine.cancel(run_id):
            fail(not_found("unfinished run", run_id, engine.console.where), code=3)
    click.echo(f"{printable(run_id)}: cancelled")
