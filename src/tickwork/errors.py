"""Every exception tickwork raises, in one tree.

::

    TickworkError                      base of everything below; has a stable ``.code``
    ├── ConfigError (+ ValueError)     something a user passed is invalid
    │   ├── CronError                  a cron expression is invalid (``.field``, ``.reason``)
    │   ├── UnknownWorkflowError       no such workflow (``.workflow``, ``.suggestions``)
    │   ├── InputValidationError       an input is not JSON or fails its annotation
    │   └── ResultError                a step's or workflow's result is not a JSON value
    ├── ScheduleConflict               a key is registered with another definition
    ├── CalendarInUse                  a calendar schedules use cannot be deleted
    │                                  (``.calendar``, ``.schedules``)
    ├── RunFailed                      ``RunHandle.result()``: the run failed (``.run_id``)
    │   └── ChildRunFailed             ``ctx.wait`` / ``ctx.map``: a child run failed or was
    │                                  cancelled (``.run_id``, ``.status``, ``.error``)
    ├── RunCancelled                   ``RunHandle.result()``: the run was cancelled
    ├── RunTimeout (+ TimeoutError)    ``RunHandle.result(timeout=...)`` gave up waiting
    ├── WaitTimedOut                   ``ctx.wait`` / ``ctx.map``: children still running
    │                                  past the wait's ``timeout`` (``.run_ids``)
    ├── StepFailed                     replay of a step whose tries ran out (``.step``)
    ├── StoreError                     the database failed (``.transient``: an outage, not
    │   │                              a refused value); the driver error is ``__cause__``
    │   └── StoreUnreachable           the database cannot be reached or opened at all
    │                                  (``.where``, ``.reason``)
    └── ApiError                       ``Client``: the server refused the request for a reason
                                       of its own (bad API key, unknown route...) or could not
                                       be reached (``.status``, ``.error_code``)

``.code`` is the same string on the wire (HTTP API, ``Client``) and in the CLI's ``--json``
output, so a remote caller can raise the very same class.
"""

from __future__ import annotations

from collections.abc import Sequence

__all__ = [
    "ApiError",
    "CalendarInUse",
    "ChildRunFailed",
    "ConfigError",
    "CronError",
    "InputValidationError",
    "ResultError",
    "RunCancelled",
    "RunFailed",
    "RunTimeout",
    "ScheduleConflict",
    "StepFailed",
    "StoreError",
    "StoreUnreachable",
    "TickworkError",
    "UnknownWorkflowError",
    "WaitTimedOut",
]


class TickworkError(Exception):
    """Base of every tickwork error."""

    code = "TICKWORK_ERROR"


class ConfigError(TickworkError, ValueError):
    """Something a user passed (an option, a duration, a URL, a zone...) is invalid.

    Raised before anything is stored.
    """

    code = "CONFIG_ERROR"


class CronError(ConfigError):
    """A cron expression cannot be parsed or can never occur.

    ``field`` names the part that is wrong ("minute", "day-of-month", "expression"...),
    ``reason`` says why, ``expr`` is the expression as given.
    """

    code = "CRON_ERROR"

    def __init__(self, expr: str, field: str, reason: str) -> None:
        self.expr = expr
        self.field = field
        self.reason = reason
        super().__init__(f"Bad cron expression {expr!r}: {field}: {reason}")


class UnknownWorkflowError(ConfigError):
    """No workflow of that name is registered with this engine.

    ``suggestions`` are the registered names closest to ``workflow`` (a typo's fix), which
    the message offers as "did you mean ...?".
    """

    code = "UNKNOWN_WORKFLOW"

    def __init__(self, workflow: str, suggestions: tuple[str, ...] = ()) -> None:
        self.workflow = workflow
        self.suggestions = tuple(suggestions)
        hint = "register it with @engine.workflow"
        if self.suggestions:
            hint = f"did you mean {' or '.join(repr(s) for s in self.suggestions)}? Or {hint}"
        super().__init__(f"Unknown workflow {workflow!r}: {hint}")


class InputValidationError(ConfigError):
    """An input is not a JSON value, or does not match the workflow's ``input`` annotation."""

    code = "INPUT_INVALID"


class ResultError(ConfigError):
    """A step or a workflow returned something that is not a JSON value (a datetime, a set,
    an object...): the step (or the attempt) fails with this error, nothing is stored as its
    result. Return JSON (``when.isoformat()``, ``list(items)``, ``model.model_dump()``)."""

    code = "RESULT_INVALID"


class ScheduleConflict(TickworkError):
    """A schedule key is already registered with a different definition."""

    code = "SCHEDULE_CONFLICT"


class CalendarInUse(TickworkError):
    """A business calendar that schedules use cannot be deleted: they would lose the
    holidays they skip or move. ``schedules`` names them (by key, sorted); point them at
    another calendar, or unschedule them, first."""

    code = "CALENDAR_IN_USE"

    def __init__(self, calendar: str, schedules: tuple[str, ...]) -> None:
        self.calendar = calendar
        self.schedules = schedules
        shown = ", ".join(repr(key) for key in schedules[:10])
        more = f" and {len(schedules) - 10} more" if len(schedules) > 10 else ""
        super().__init__(
            f"Calendar {calendar!r} is used by schedule(s) {shown}{more}: "
            "change or delete them first"
        )


class RunFailed(TickworkError):
    """The run ended as ``failed``; ``error`` is the stored error text."""

    code = "RUN_FAILED"

    def __init__(self, run_id: str, error: str | None) -> None:
        self.run_id = run_id
        self.error = error
        super().__init__(f"Run {run_id} failed: {error}")


class ChildRunFailed(RunFailed):
    """A child run that a parent waited for (``ctx.wait``, ``ctx.map``) failed or was
    cancelled: ``run_id`` is the child's, ``status`` ``"failed"`` or ``"cancelled"``,
    ``error`` its stored error (None for a cancelled child)."""

    code = "CHILD_RUN_FAILED"

    def __init__(self, run_id: str, status: str, error: str | None) -> None:
        TickworkError.__init__(
            self,
            f"Child run {run_id} failed: {error}"
            if status == "failed"
            else f"Child run {run_id} was {status}",
        )
        self.run_id, self.status, self.error = run_id, status, error


class WaitTimedOut(TickworkError):
    """A parent's wait for its children (``ctx.wait``, ``ctx.map``) passed its
    ``timeout``; ``run_ids`` are the children still unfinished then. They go on."""

    code = "WAIT_TIMED_OUT"

    def __init__(self, run_ids: Sequence[str], timeout: str) -> None:
        self.run_ids = tuple(run_ids)
        shown = ", ".join(run_ids[:3]) + (
            f" and {len(run_ids) - 3} more" if len(run_ids) > 3 else ""
        )
        super().__init__(f"{len(run_ids)} child run(s) still unfinished after {timeout}: {shown}")


class RunCancelled(TickworkError):
    """The run ended as ``cancelled``."""

    code = "RUN_CANCELLED"

    def __init__(self, run_id: str) -> None:
        self.run_id = run_id
        super().__init__(f"Run {run_id} was cancelled")


class RunTimeout(TickworkError, TimeoutError):
    """Waiting for a run's result took longer than the timeout given; the run goes on."""

    code = "RUN_TIMEOUT"

    def __init__(self, run_id: str, status: str) -> None:
        self.run_id = run_id
        self.status = status
        super().__init__(f"Run {run_id} is still {status}")


class StepFailed(TickworkError):
    """A step failed for good earlier in this run and the workflow went on past it.

    The first time, a failing step raises the step's own exception into the workflow. When
    the run is later replayed (after a sleep or a crash), that exception cannot be rebuilt
    from storage, so this is raised instead; ``error`` is the stored "Type: message".
    """

    code = "STEP_FAILED"

    def __init__(self, step: str, error: str | None) -> None:
        self.step = step
        self.error = error
        super().__init__(f"Step {step!r} failed: {error}")


class StoreError(TickworkError):
    """The database could not do what was asked; the driver's error is ``__cause__``.

    ``transient`` is True for an outage (unreachable, a dropped connection, a lock that
    could not be had: trying again later may work) and False when the database refused
    what it was given (trying again would fail the same way).
    """

    code = "STORE_ERROR"

    def __init__(self, message: str, *, transient: bool = True) -> None:
        super().__init__(message)
        self.transient = transient


class StoreUnreachable(StoreError):
    """The database cannot be reached or opened: a wrong host, port, database name or
    password, a server that is down; a SQLite file in a missing folder, one that cannot be
    written, or one that is not a database.

    ``where`` names the database (host, port, database and user; or the SQLite file), never
    a password; ``reason`` is the server's or the driver's own message. Raised at the first
    use of a store, within about two seconds; an outage *after* that is a plain
    ``StoreError`` that workers ride out. ``transient``: it may work later.
    """

    code = "STORE_UNREACHABLE"

    def __init__(self, where: str, reason: str) -> None:
        self.where = where
        self.reason = reason
        super().__init__(f"Cannot open {where}: {reason}", transient=True)


class ApiError(TickworkError):
    """``tickwork.Client``: the HTTP API refused a request for a reason of its own.

    Errors the engine raised on the server come back as their own classes (``CronError``,
    ``ScheduleConflict``...); this one is for the rest: a missing or revoked API key
    (``status`` 401, ``error_code`` "UNAUTHORIZED"), an unknown route, a body the server
    cannot read, or no answer at all (``status`` None; the transport error is
    ``__cause__``).
    """

    code = "API_ERROR"

    def __init__(
        self, message: str, *, status: int | None = None, error_code: str | None = None
    ) -> None:
        self.status = status
        self.error_code = error_code
        super().__init__(message)
