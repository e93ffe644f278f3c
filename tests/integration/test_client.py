"""``tickwork.Client`` against a live server (uvicorn on 127.0.0.1, a free port): the same
results and the same errors as the ``Engine`` behind it."""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import httpx
import pydantic
import pytest
import uvicorn

from tickwork import (
    ApiError,
    Client,
    ConfigError,
    Context,
    CronError,
    Engine,
    InputValidationError,
    Retry,
    RunCancelled,
    RunFailed,
    RunHandle,
    RunStatus,
    RunTimeout,
    ScheduleConflict,
    ScheduleState,
    TickworkError,
    UnknownWorkflowError,
)
from tickwork.server import create_app
from tickwork.testing import FakeClock


class Order(pydantic.BaseModel):
    n: int


@pytest.fixture
def app_engine(engine: Engine) -> Engine:
    @engine.workflow()
    def double(ctx: Context, input: dict[str, int]) -> int:
        return ctx.step("double", lambda: input["n"] * 2)

    @engine.workflow()
    def noop(ctx: Context) -> None:
        return None

    @engine.workflow()
    def boom(ctx: Context) -> None:
        raise RuntimeError("kaboom")

    @engine.workflow()
    def ordered(ctx: Context, input: Order) -> int:
        return input.n

    return engine


@pytest.fixture
def server_url(app_engine: Engine) -> Iterator[str]:
    config = uvicorn.Config(
        create_app(app_engine, dashboard=False),
        host="127.0.0.1",
        port=0,  # a free port, chosen by the system
        log_level="warning",
        lifespan="off",
        ws="none",
    )
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, name="uvicorn", daemon=True)
    thread.start()
    deadline = time.monotonic() + 10
    while not server.started:
        assert thread.is_alive() and time.monotonic() < deadline, "the server did not start"
        time.sleep(0.01)
    port = server.servers[0].sockets[0].getsockname()[1]
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(10)


@pytest.fixture
def client(app_engine: Engine, server_url: str) -> Iterator[Client]:
    with Client(server_url, api_key=app_engine.create_api_key("client"), timeout=10) as client:
        yield client


# -- schedules -------------------------------------------------------------------------


def test_schedule_with_every_option_is_stored_as_the_engine_would_store_it(
    client: Client, app_engine: Engine
) -> None:
    options: dict[str, Any] = dict(
        cron="0 9 * * 1-5",
        timezone="Europe/London",
        key="weekday",
        overlap="skip",
        catchup=3,
        catchup_window="6h",
        jitter=timedelta(seconds=30),
        paused=True,
        pool="reports",
        priority=5,
        retry=Retry(max_attempts=4, backoff="2s", factor=3, max_backoff="1m"),
        start_at=datetime(2026, 3, 2, 1, tzinfo=UTC),
        end_at=datetime(2027, 1, 1, tzinfo=UTC),
        on_conflict="error",
    )
    assert client.schedule("double", {"n": 1}, **options) == "weekday"
    stored = app_engine.get_schedule("weekday")
    assert stored is not None and client.get_schedule("weekday") == stored
    # The engine finds the very same definition: nothing changes, no conflict.
    assert app_engine.schedule("double", {"n": 1}, **options) == "weekday"
    assert app_engine.get_schedule("weekday") == stored


def test_derived_key_is_the_engines(client: Client, app_engine: Engine) -> None:
    key = client.schedule(app_engine_workflow(app_engine, "double"), {"n": 7}, every="1h")
    assert key == app_engine.schedule("double", {"n": 7}, every=timedelta(hours=1))
    assert client.list_schedules() == app_engine.list_schedules()
    assert client.list_schedules()[0].every == timedelta(hours=1)


def test_schedule_filters_are_the_engines(client: Client, app_engine: Engine) -> None:
    client.schedule("noop", every="1h", key="hourly")
    client.schedule("noop", every="1d", key="daily")
    client.schedule("double", {"n": 1}, every="1h", key="doubled")
    client.pause("daily")
    for filters, expected in (
        ({"workflow": "noop"}, ["daily", "hourly"]),
        ({"state": ScheduleState.PAUSED}, ["daily"]),
        ({"workflow": "noop", "state": "active"}, ["hourly"]),
        ({"workflow": "double", "state": "paused"}, []),
    ):
        listed = client.list_schedules(**filters)  # type: ignore[arg-type]
        assert [info.key for info in listed] == expected, filters
        assert listed == app_engine.list_schedules(**filters)  # type: ignore[arg-type]
    for lister in (client.list_schedules, app_engine.list_schedules):
        with pytest.raises(ConfigError, match="Unknown state 'asleep'"):
            lister(state="asleep")


def app_engine_workflow(engine: Engine, name: str) -> Callable[..., Any]:
    """A function registered under ``name``, as user code would pass it."""

    def fn(ctx: Context) -> None:
        return None

    fn.__tickwork_workflow__ = name  # type: ignore[attr-defined]
    return fn


def test_state_changes_and_unknown_keys_answer_as_the_engine(client: Client) -> None:
    key = client.schedule("noop", every="1h", key="hourly")
    for action, state in (("pause", "paused"), ("resume", "active"),
                          ("deactivate", "inactive"), ("activate", "active")):  # fmt: skip
        assert getattr(client, action)(key) is True
        info = client.get_schedule(key)
        assert info is not None and info.state == state
    for action in ("pause", "resume", "activate", "deactivate", "unschedule"):
        assert getattr(client, action)("nope") is False
        assert getattr(client, action)("") is False
    assert client.trigger("nope") is None
    assert client.get_schedule("nope") is None
    assert client.schedule_history("nope") == []
    assert client.unschedule(key) is True
    assert client.unschedule(key) is False


def test_trigger_and_history_are_the_engines(
    client: Client, app_engine: Engine, clock: FakeClock
) -> None:
    key = client.schedule("noop", every="1h", key="hourly")
    clock.advance("90m")
    run_id = client.trigger(key)
    assert run_id == "hourly@2026-03-01T13:00:00.000Z" == client.trigger(key)
    assert client.schedule_history(key) == app_engine.schedule_history(key)
    assert [e.decision for e in client.schedule_history(key, limit=1)] == ["already_started"]
    run = client.get_run(run_id)
    assert run is not None and run.scheduled_for == datetime(2026, 3, 1, 13, tzinfo=UTC)
    found = client.run_now(key)
    assert found is not None and (found.run_id, found.started) == (run_id, False)
    assert found.status == app_engine.get_run(run_id).status  # type: ignore[union-attr]
    new = client.run_now(key, new_run=True)
    assert new is not None and new.started and new.run_id != run_id
    assert client.trigger(key, True) not in (run_id, new.run_id)
    assert len(app_engine.list_runs(schedule_key=key)) == 3


def test_schedule_names_with_dots_are_addressed_as_themselves(client: Client) -> None:
    for key in ("..", ".", "a.b"):
        assert client.schedule("noop", every="1h", key=key) == key
        assert client.pause(key) is True
        info = client.get_schedule(key)
        assert info is not None and info.key == key


# -- runs ------------------------------------------------------------------------------


def test_start_returns_a_handle_whose_result_waits_for_the_run(
    client: Client, app_engine: Engine
) -> None:
    handle = client.start("double", {"n": 21})
    assert isinstance(handle, RunHandle) and handle.status() is RunStatus.PENDING
    worker = threading.Timer(0.2, app_engine.run_until_idle)
    worker.start()
    try:
        assert handle.result(timeout=10) == 42
    finally:
        worker.join()
    assert handle.status() is RunStatus.COMPLETED
    assert client.get_run(handle.id) == app_engine.get_run(handle.id)
    assert client.list_steps(handle.id) == app_engine.list_steps(handle.id)
    assert [s.name for s in client.list_steps(handle.id)] == ["double"]


def test_start_is_idempotent_and_takes_every_option(
    client: Client, app_engine: Engine, clock: FakeClock
) -> None:
    first = client.start("double", {"n": 1}, run_id="once", priority=3, pool="default",
                         delay=timedelta(minutes=5))  # fmt: skip
    second = client.start("double", {"n": 2}, run_id="once")
    assert first == second and first.id == "once"
    run = app_engine.get_run("once")
    assert run is not None and (run.priority, run.input) == (3, {"n": 1})
    assert app_engine.run_until_idle() == 0
    clock.advance("5m")
    assert app_engine.run_until_idle() == 1


def test_result_raises_as_the_engines_handle_does(client: Client, app_engine: Engine) -> None:
    failed = client.start("boom")
    app_engine.run_until_idle()
    with pytest.raises(RunFailed) as caught:
        failed.result()
    assert caught.value.run_id == failed.id and "kaboom" in (caught.value.error or "")

    waiting = client.start("noop")
    with pytest.raises(RunTimeout):
        waiting.result(timeout=0.2)
    assert waiting.cancel() is True and waiting.cancel() is False
    with pytest.raises(RunCancelled):
        waiting.result()
    gone = RunHandle(
        "never-started", get_run=client.get_run, cancel=client.cancel, pause=lambda s, n: None
    )
    with pytest.raises(TickworkError, match="no longer exists"):
        gone.status()


def test_listing_runs_is_the_engines(client: Client, app_engine: Engine, clock: FakeClock) -> None:
    for n in range(4):
        client.start("noop", run_id=f"noop/{n}")
        clock.advance("1s")
    client.start("double", {"n": 1}, run_id="d.1")
    client.cancel("noop/1")
    for filters in ({}, {"workflow": "noop"}, {"status": RunStatus.CANCELLED},
                    {"status": "pending", "limit": 2}, {"workflow": "nope"},
                    {"before": "noop/2", "limit": 1}, {"before": "nope"}):  # fmt: skip
        assert client.list_runs(**filters) == app_engine.list_runs(**filters), filters
    assert client.get_run("noop/1") == app_engine.get_run("noop/1")
    assert client.get_run("nope") is None and client.get_run("") is None
    assert client.cancel("nope") is False and client.list_steps("nope") == []


def test_pydantic_inputs_are_sent_as_json(client: Client, app_engine: Engine) -> None:
    handle = client.start("ordered", Order(n=5))
    app_engine.run_until_idle()
    assert handle.result() == 5


def test_workflows_and_preview_are_the_engines(client: Client, app_engine: Engine) -> None:
    assert client.workflows() == app_engine.workflows()
    after = datetime(2026, 3, 28, tzinfo=UTC)
    for cadence in ({"cron": "30 2 * * *", "timezone": "Europe/Paris"}, {"every": "90m"},
                    {"cron": "30 2 * * *", "timezone": "Europe/Paris", "dst_gap": "skip"},
                    {"cron": "30 2 * * *", "timezone": "Europe/Paris", "dst_repeat": "both"},
                    {"every": timedelta(minutes=5), "timezone": "Asia/Kolkata"}):  # fmt: skip
        expected = app_engine.preview(**cadence, after=after, count=4)
        assert client.preview(**cadence, after=after, count=4) == expected
    assert client.preview(every="1h", count=1) == app_engine.preview(every="1h", count=1)


# -- errors ----------------------------------------------------------------------------


def bad_calls() -> list[tuple[str, Callable[[Any], Any], type[Exception]]]:
    return [
        ("cron", lambda api: api.schedule("noop", cron="0 25 * * *"), CronError),
        ("cron never", lambda api: api.schedule("noop", cron="0 0 30 2 *"), CronError),
        ("workflow", lambda api: api.schedule("missing", every="1h"), UnknownWorkflowError),
        ("start workflow", lambda api: api.start("missing"), UnknownWorkflowError),
        ("callable", lambda api: api.start(print), UnknownWorkflowError),
        ("input", lambda api: api.start("double", {"n": "one"}), InputValidationError),
        ("no input", lambda api: api.schedule("noop", 1, every="1h"), InputValidationError),
        ("not json", lambda api: api.start("double", {1, 2}), InputValidationError),
        ("nan", lambda api: api.start("double", {"n": float("nan")}), InputValidationError),
        ("zone", lambda api: api.schedule("noop", cron="* * * * *", timezone="Mars/X"),
         ConfigError),
        ("duration", lambda api: api.schedule("noop", every="1 fortnight"), ConfigError),
        ("zero", lambda api: api.schedule("noop", every=0), ConfigError),
        ("sub-ms", lambda api: api.start("noop", delay=timedelta(microseconds=5)), ConfigError),
        ("both", lambda api: api.schedule("noop", every="1h", cron="* * * * *"), ConfigError),
        ("overlap", lambda api: api.schedule("noop", every="1h", overlap="never"), ConfigError),
        ("catchup", lambda api: api.schedule("noop", every="1h", catchup=0), ConfigError),
        ("key", lambda api: api.schedule("noop", every="1h", key="a/b"), ConfigError),
        ("naive", lambda api: api.schedule("noop", every="1h", start_at=datetime(2026, 1, 1)),
         ConfigError),
        ("start_at", lambda api: api.schedule("noop", every="1h", start_at="2026"), ConfigError),
        ("retry", lambda api: api.schedule("noop", every="1h", retry=3), ConfigError),
        ("priority", lambda api: api.start("noop", priority=True), ConfigError),
        ("status", lambda api: api.list_runs(status="asleep"), ConfigError),
        ("limit", lambda api: api.list_runs(limit=0), ConfigError),
        ("history limit", lambda api: api.schedule_history("k", limit=0), ConfigError),
        ("preview", lambda api: api.preview(), ConfigError),
        ("preview count", lambda api: api.preview(every="1h", count=0), ConfigError),
    ]  # fmt: skip


@pytest.mark.parametrize(("name", "call", "expected"), bad_calls(), ids=[c[0] for c in bad_calls()])
def test_errors_come_back_as_the_engines_own_classes(
    client: Client,
    app_engine: Engine,
    name: str,
    call: Callable[[Any], Any],
    expected: type[Exception],
) -> None:
    with pytest.raises(expected) as from_engine:
        call(app_engine)
    with pytest.raises(expected) as from_client:
        call(client)
    assert type(from_client.value) is type(from_engine.value)
    assert not isinstance(from_client.value, ApiError)
    assert app_engine.list_schedules() == [] and app_engine.list_runs() == []


def test_engine_messages_and_attributes_survive_the_trip(
    client: Client, app_engine: Engine
) -> None:
    with pytest.raises(CronError) as remote:
        client.schedule("noop", cron="0 25 * * *")
    with pytest.raises(CronError) as local:
        app_engine.schedule("noop", cron="0 25 * * *")
    assert str(remote.value) == str(local.value)
    assert (remote.value.field, remote.value.reason, remote.value.expr) == (
        local.value.field, local.value.reason, local.value.expr,
    )  # fmt: skip
    with pytest.raises(UnknownWorkflowError) as missing:
        client.start("missing")
    assert missing.value.workflow == "missing"


def test_conflict_is_schedule_conflict(client: Client) -> None:
    client.schedule("noop", every="1h", key="k")
    with pytest.raises(ScheduleConflict) as caught:
        client.schedule("noop", every="2h", key="k", on_conflict="error")
    assert caught.value.code == "SCHEDULE_CONFLICT"
    assert client.schedule("noop", every="2h", key="k", on_conflict="keep") == "k"
    info = client.get_schedule("k")
    assert info is not None and info.every == timedelta(hours=1)


def test_a_wrong_or_revoked_key_is_an_api_error(
    server_url: str, app_engine: Engine, client: Client
) -> None:
    wrong = Client(server_url, api_key="tw_000000000000_" + "x" * 43)
    with wrong, pytest.raises(ApiError) as caught:
        wrong.list_schedules()
    assert (caught.value.status, caught.value.error_code) == (401, "UNAUTHORIZED")
    app_engine.revoke_api_key("client")
    with pytest.raises(ApiError, match="revoked"):
        client.get_run("anything")


def test_the_key_comes_from_the_environment(
    server_url: str, app_engine: Engine, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("TICKWORK_API_KEY", raising=False)
    with pytest.raises(ConfigError, match="API key"):
        Client(server_url)
    monkeypatch.setenv("TICKWORK_API_KEY", app_engine.create_api_key("env"))
    with Client(f"{server_url}/api/v1/") as from_env:  # the API's prefix may be given too
        assert from_env.list_schedules() == []


def test_no_answer_is_an_api_error_with_the_cause() -> None:
    nowhere = Client("http://127.0.0.1:9", api_key="tw_x", timeout=2)
    with nowhere, pytest.raises(ApiError) as caught:
        nowhere.list_runs()
    assert caught.value.status is None
    assert isinstance(caught.value.__cause__, httpx.TransportError)


# -- async twins -------------------------------------------------------------------------


def test_async_twins_are_the_blocking_calls(client: Client, app_engine: Engine) -> None:
    async def scenario() -> None:
        key = await client.schedule_async("noop", every="1h", key="hourly")
        assert await client.get_schedule_async(key) == app_engine.get_schedule(key)
        assert await client.pause_async(key) is True
        assert (await client.list_schedules_async())[0].state == "paused"
        assert await client.resume_async("nope") is False
        handle = await client.start_async("double", {"n": 4}, run_id="a1")
        app_engine.run_until_idle()
        assert await handle.result_async(timeout=10) == 8
        assert await client.get_run_async("a1") == app_engine.get_run("a1")
        assert await client.list_steps_async("a1") == app_engine.list_steps("a1")
        assert [r.id for r in await client.list_runs_async(workflow="double")] == ["a1"]
        assert await client.cancel_async("a1") is False
        assert await client.schedule_history_async(key) == app_engine.schedule_history(key)
        with pytest.raises(UnknownWorkflowError):
            await client.schedule_async("missing", every="1h")
        assert await client.unschedule_async(key) is True

    asyncio.run(scenario())


def test_the_client_lists_the_children_of_a_run_as_the_engine(
    app_engine: Engine, client: Client
) -> None:
    @app_engine.workflow("leaf")
    def leaf(ctx: Context, n: int) -> int:
        return n

    @app_engine.workflow("fan")
    def fan(ctx: Context, input: Any) -> Any:
        return ctx.map("leaf", [1, 2, 3])

    handle = app_engine.start("fan", run_id="fan-1")
    app_engine.run_until_idle()
    assert handle.result() == [1, 2, 3]
    assert client.list_runs(parent="fan-1") == app_engine.list_runs(parent="fan-1")
    assert {r.parent_id for r in client.list_runs(parent="fan-1")} == {"fan-1"}
    with pytest.raises(ConfigError):
        client.list_runs(parent="")
