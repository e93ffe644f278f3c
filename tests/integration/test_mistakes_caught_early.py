"""A newcomer's mistakes are caught where they are made, with a message that says what to
do: at ``@engine.workflow``, at ``start``, at the step that returned a bad value."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime
from typing import Any

import httpx
import pydantic
import pytest

from tickwork import (
    ConfigError,
    Context,
    Cron,
    Engine,
    Every,
    InputValidationError,
    ResultError,
    RunFailed,
    RunStatus,
    UnknownWorkflowError,
)
from tickwork.server import create_app

WHEN = datetime(2026, 11, 30, 9, 0, tzinfo=UTC)


def post(engine: Engine, path: str, body: dict[str, Any]) -> httpx.Response:
    """POST to the engine's HTTP API, in process, with a new key."""
    key = engine.create_api_key(f"k{len(engine.list_api_keys())}")

    async def send() -> httpx.Response:
        transport = httpx.ASGITransport(app=create_app(engine))
        async with httpx.AsyncClient(transport=transport, base_url="http://t") as client:
            return await client.post(path, json=body, headers={"Authorization": f"Bearer {key}"})

    return asyncio.run(send())


# -- the context comes first ---------------------------------------------------------------


def _input_first(input: dict) -> None:  # type: ignore[type-arg]
    return None


def _input_first_unannotated(input):  # type: ignore[no-untyped-def]
    return None


def _context_second(day: str, ctx: Context) -> None:
    return None


@pytest.mark.parametrize(
    ("fn", "said"),
    [
        (_input_first, "its first parameter 'input' is annotated dict"),
        (_input_first_unannotated, "its first parameter is named 'input'"),
        (_context_second, "its first parameter 'day' is annotated str"),
    ],
)
def test_a_workflow_whose_first_parameter_is_not_the_context_is_refused_at_decoration(
    engine: Engine, fn: Any, said: str
) -> None:
    with pytest.raises(ConfigError, match="must take the context first") as info:
        engine.workflow("report")(fn)
    assert str(info.value).startswith("Workflow 'report' must take the context first")
    assert said in str(info.value)
    assert f"def {fn.__name__}(ctx: Context, input: ...)" in str(info.value)
    assert engine.workflows() == []


def _annotated(ctx: Context, input: dict) -> None:  # type: ignore[type-arg]
    return None


def _unannotated(c, i):  # type: ignore[no-untyped-def]
    return None


def _any(context: Any) -> None:
    return None


def _string_annotation(ctx: "Context") -> None:  # noqa: UP037
    return None


@pytest.mark.parametrize("fn", [_annotated, _unannotated, _any, _string_annotation])
def test_a_first_parameter_annotated_context_or_any_or_left_unannotated_is_the_context(
    engine: Engine, fn: Any
) -> None:
    engine.workflow("fine")(fn)
    assert engine.workflows() == ["fine"]


# -- a declared schedule of a workflow that needs an input ----------------------------------


@pytest.mark.parametrize(
    "declared", [Cron("0 2 * * *"), Every("1h", key="hourly"), [Every("1h"), Cron("@daily")]]
)
def test_a_declared_schedule_without_input_on_a_workflow_needing_one_is_refused_at_decoration(
    engine: Engine, declared: Any
) -> None:
    with pytest.raises(InputValidationError, match="needs an input") as info:

        @engine.workflow("report", schedule=declared)
        def report(ctx: Context, input: dict[str, str]) -> None:
            return None

    assert "pass input=" in str(info.value)
    assert engine.workflows() == []
    assert engine.sync_schedules() == []  # so a worker starts without it, not dies


def test_a_declared_schedule_with_input_or_on_an_optional_input_is_accepted(
    engine: Engine,
) -> None:
    @engine.workflow("report", schedule=Cron("0 2 * * *", input={"day": "today"}))
    def report(ctx: Context, input: dict[str, str]) -> None:
        return None

    @engine.workflow("optional", schedule=Every("1h"))
    def optional(ctx: Context, input: dict[str, str] | None = None) -> None:
        return None

    assert sorted(engine.sync_schedules()) == ["optional", "report"]


def test_a_declared_input_that_does_not_fit_the_annotation_is_refused_at_decoration(
    engine: Engine,
) -> None:
    with pytest.raises(InputValidationError, match="declared schedule"):

        @engine.workflow("report", schedule=Cron("0 2 * * *", input={"day": 3}))
        def report(ctx: Context, input: dict[str, str]) -> None:
            return None


# -- run ids ---------------------------------------------------------------------------------


def test_starting_a_run_id_that_belongs_to_another_workflow_is_refused(engine: Engine) -> None:
    @engine.workflow()
    def first(ctx: Context) -> str:
        return "first"

    @engine.workflow()
    def second(ctx: Context) -> str:
        return "second"

    handle = engine.start("first", run_id="nightly")
    assert engine.start("first", run_id="nightly") == handle  # the same workflow: the run
    with pytest.raises(ConfigError, match="already a run of workflow 'first', not of 'second'"):
        engine.start("second", run_id="nightly")
    response = post(engine, "/api/v1/runs", {"workflow": "second", "run_id": "nightly"})
    assert response.status_code == 400, response.text
    assert response.json()["error"]["code"] == "CONFIG_ERROR"
    (run,) = engine.list_runs()
    assert (run.id, run.workflow) == ("nightly", "first")


# -- inputs that are not JSON ------------------------------------------------------------


class Meeting(pydantic.BaseModel):
    when: datetime
    notes: dict[str, Any] = {}


@pytest.fixture
def typed(engine: Engine) -> Engine:
    @engine.workflow("plain")
    def plain(ctx: Context, input: dict[str, Any]) -> Any:
        return None

    @engine.workflow("instant")
    def instant(ctx: Context, input: datetime) -> str:
        assert isinstance(input, datetime)  # given back as the annotated type
        return input.isoformat()

    @engine.workflow("meeting")
    def meeting(ctx: Context, input: Meeting) -> str:
        assert isinstance(input.when, datetime)
        return input.when.isoformat()

    return engine


@pytest.mark.parametrize(
    ("workflow", "value", "said"),
    [
        ("plain", {"x": object()}, "Unable to serialize unknown type"),
        ("plain", {"when": WHEN}, "input['when'] is a datetime"),
        ("plain", {"tags": {"a", "b"}}, "input['tags'] is a set"),
        ("plain", {"blob": b"\x00"}, "input['blob'] is a bytes"),
        ("meeting", {"when": WHEN, "notes": {"at": WHEN}}, "input['notes']['at'] is a datetime"),
    ],
)
def test_an_input_that_is_not_json_raises_input_validation_error(
    typed: Engine, workflow: str, value: Any, said: str
) -> None:
    with pytest.raises(InputValidationError, match="is not a JSON value") as info:
        typed.start(workflow, value)
    assert said in str(info.value)
    with pytest.raises(InputValidationError):
        typed.schedule(workflow, value, every="1h")
    assert typed.list_runs() == [] and typed.list_schedules() == []


def test_a_value_the_annotation_names_is_stored_as_json_and_given_back_as_its_type(
    typed: Engine,
) -> None:
    instant = typed.start("instant", WHEN)
    meeting = typed.start("meeting", Meeting(when=WHEN))
    listed = typed.start("plain", {"pair": (1, 2)})  # a tuple: a list in JSON, as documented
    typed.run_until_idle()
    assert instant.result() == meeting.result() == WHEN.isoformat()
    run = typed.get_run(meeting.id)
    assert run is not None and run.input == {"when": "2026-11-30T09:00:00Z", "notes": {}}
    listed_run = typed.get_run(listed.id)
    assert listed_run is not None and listed_run.input == {"pair": [1, 2]}


# -- results that are not JSON -------------------------------------------------------------


def test_a_step_result_that_is_not_json_fails_the_step_with_a_result_error(
    engine: Engine,
) -> None:
    caught: list[BaseException] = []

    @engine.workflow()
    def report(ctx: Context) -> None:
        try:
            ctx.step("when", lambda: WHEN)
        except ConfigError as exc:
            caught.append(exc)
            raise

    handle = engine.start("report")
    engine.run_until_idle()
    with pytest.raises(RunFailed) as info:
        handle.result()
    (error,) = caught
    assert isinstance(error, ResultError) and not isinstance(error, InputValidationError)
    assert str(error).startswith("The result of step 'when' is not a JSON value")
    assert str(info.value.error).startswith("ResultError: The result of step 'when'")
    (step,) = engine.list_steps(handle.id)
    assert (step.name, step.status) == ("when", "failed")


def test_a_workflow_result_that_is_not_json_fails_with_a_result_error(engine: Engine) -> None:
    @engine.workflow()
    def report(ctx: Context) -> Any:
        return {"at": WHEN}

    handle = engine.start("report")
    engine.run_until_idle()
    run = engine.get_run(handle.id)
    assert run is not None and run.status is RunStatus.FAILED
    assert str(run.error).startswith("ResultError: The result of workflow 'report' is not")


# -- unknown workflows -------------------------------------------------------------------


def test_an_unknown_workflow_suggests_the_close_names(engine: Engine) -> None:
    @engine.workflow("daily-report")
    def daily_report(ctx: Context) -> None:
        return None

    @engine.workflow("weekly-report")
    def weekly_report(ctx: Context) -> None:
        return None

    with pytest.raises(UnknownWorkflowError, match="did you mean 'daily-report'") as info:
        engine.start("daily-reprot")
    assert info.value.suggestions[0] == "daily-report"  # the closest first
    assert info.value.workflow == "daily-reprot"
    with pytest.raises(UnknownWorkflowError, match="did you mean 'daily-report'"):
        engine.schedule("Daily-Report", every="1h")
    with pytest.raises(UnknownWorkflowError) as unrelated:
        engine.start("cleanup")
    assert unrelated.value.suggestions == ()
    assert "register it with @engine.workflow" in str(unrelated.value)
    response = post(engine, "/api/v1/runs", {"workflow": "daily-reprot"})
    assert response.status_code == 400
    assert "did you mean 'daily-report'" in response.json()["error"]["message"]
