"""Events through the faces (DESIGN §9): the JSON API (a webhook's door) and ``Client``,
giving what ``Engine`` gives."""

from __future__ import annotations

import asyncio
import json
import threading
import time
from collections.abc import Iterator
from datetime import timedelta
from typing import Any

import httpx
import pytest
import uvicorn

from tickwork import Client, ConfigError, Context, Engine, On, UnknownWorkflowError
from tickwork.server import create_app
from tickwork.server.openapi import openapi_document
from tickwork.testing import FakeClock


@pytest.fixture
def app_engine(engine: Engine) -> Engine:
    @engine.workflow("welcome", on=On("user.signed_up"))
    def welcome(ctx: Context, input: Any) -> None:
        return None

    @engine.workflow("audit")
    def audit(ctx: Context, input: Any) -> None:
        return None

    return engine


def call(
    engine: Engine, method: str, path: str, headers: dict[str, str] | None = None, **kwargs: Any
) -> httpx.Response:
    app = create_app(engine, dashboard=False)
    key = engine.create_api_key(f"t{len(engine.list_api_keys())}")
    headers = {"Authorization": f"Bearer {key}", **(headers or {})}

    async def send() -> httpx.Response:
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://testserver") as c:
            return await c.request(method, path, headers=headers, **kwargs)

    return asyncio.run(send())


def test_post_events_emits_idempotently_and_get_lists_them(app_engine: Engine) -> None:
    body = {"name": "user.signed_up", "payload": {"user_id": 42}, "id": "signup-42"}
    first = call(app_engine, "POST", "/api/v1/events", json=body)
    assert first.status_code == 200
    runs = first.json()["runs"]
    assert len(runs) == 1 and app_engine.get_run(runs[0]) is not None
    assert call(app_engine, "POST", "/api/v1/events", json=body).json()["runs"] == runs
    listed = call(app_engine, "GET", "/api/v1/events", params={"name": "user.signed_up"})
    (event,) = listed.json()["events"]
    assert (event["id"], event["payload"], event["started"]) == ("signup-42", {"user_id": 42}, runs)
    one = call(app_engine, "GET", "/api/v1/events/signup-42")
    assert one.json()["name"] == "user.signed_up"
    missing = call(app_engine, "GET", "/api/v1/events/nope")
    assert (missing.status_code, missing.json()["error"]["code"]) == (404, "EVENT_NOT_FOUND")


def _waiting_for_payment(engine: Engine, run_id: str) -> None:
    @engine.workflow("fulfil")
    def fulfil(ctx: Context, input: Any) -> Any:
        return ctx.wait_for_event("order.paid", match={"order_id": input["order_id"]})

    engine.start("fulfil", {"order_id": 101}, run_id=run_id)
    engine.run_until_idle()


def test_post_events_answers_the_runs_it_started_and_the_runs_it_woke(
    app_engine: Engine,
) -> None:
    _waiting_for_payment(app_engine, "order-101")
    body = {"name": "order.paid", "payload": {"order_id": 101}, "id": "paid-1"}
    answer = call(app_engine, "POST", "/api/v1/events", json=body).json()
    assert answer == {"name": "order.paid", "id": "paid-1", "runs": [], "woke": ["order-101"]}
    assert call(app_engine, "POST", "/api/v1/events", json=body).json() == answer
    unnamed = call(app_engine, "POST", "/api/v1/events", json={"name": "user.signed_up"}).json()
    assert app_engine.get_event(unnamed["id"]) is not None  # the id the engine gave it
    assert (len(unnamed["runs"]), unnamed["woke"]) == (1, [])


def test_emit_event_returns_the_event_with_the_runs_it_started_and_woke(
    app_engine: Engine,
) -> None:
    """``emit`` returns the started run ids (DESIGN §9); ``emit_event`` the whole event."""
    _waiting_for_payment(app_engine, "order-101")
    emitted = app_engine.emit_event("order.paid", {"order_id": 101}, id="paid-1")
    assert (emitted.id, emitted.started, emitted.woke) == ("paid-1", (), ("order-101",))
    assert emitted == app_engine.get_event("paid-1")
    assert app_engine.emit("order.paid", {"order_id": 101}, id="paid-1") == []


@pytest.mark.parametrize(
    "body",
    [
        {"name": "bad\u0000name"},
        {"name": "ok", "id": "x\u001b"},
        {"payload": 1},
        {"name": "ok", "extra": 1},
    ],
)
def test_a_bad_event_is_refused_with_a_4xx_and_nothing_is_stored(
    app_engine: Engine, body: dict[str, Any]
) -> None:
    response = call(app_engine, "POST", "/api/v1/events", json=body)
    assert 400 <= response.status_code < 500
    assert app_engine.list_events() == []


@pytest.mark.parametrize(
    "body",
    [
        b"not json",  # not JSON at all
        b'{"name": "x", "payload": NaN}',  # Python's json reads NaN; JSON has none
        b'{"name": "x", "payload": "\\ud800"}',  # a lone surrogate: no UTF-8 text
        b'{"name": "\\ud800"}',
        b'{"name": "x", "id": "a\\u0000b"}',  # NUL in an id
        b'[{"name": "x"}]',  # JSON, but not an object
    ],
)
def test_a_body_that_is_no_event_is_refused_with_a_4xx_and_nothing_is_stored(
    app_engine: Engine, body: bytes
) -> None:
    headers = {"content-type": "application/json"}
    response = call(app_engine, "POST", "/api/v1/events", content=body, headers=headers)
    assert 400 <= response.status_code < 500, response.text
    assert response.json()["error"]["message"]
    assert app_engine.list_events() == []


@pytest.mark.parametrize(
    "match",
    [
        {"amount": {"$gt": 5}},  # operators (Mongo's, Inngest's): equality only here
        {"$or": [{"a": 1}]},
        {"a..b": 1},  # no dotted path
        {"": 1},
        "tier=gold",  # no dict
    ],
)
def test_a_subscription_with_unknown_match_syntax_is_refused_and_not_stored(
    app_engine: Engine, match: Any
) -> None:
    body = {"workflow": "audit", "name": "order.paid", "match": match, "key": "audit"}
    response = call(app_engine, "POST", "/api/v1/subscriptions", json=body)
    assert 400 <= response.status_code < 500, response.text
    assert "audit" not in [s.key for s in app_engine.list_subscriptions()]


def test_a_payload_over_the_body_limit_is_refused(app_engine: Engine) -> None:
    big = {"name": "big", "payload": "x" * 10_000_000}
    response = call(app_engine, "POST", "/api/v1/events", json=big)
    assert response.status_code == 413
    assert app_engine.list_events() == []


def test_events_need_an_api_key(app_engine: Engine) -> None:
    async def send() -> httpx.Response:
        transport = httpx.ASGITransport(app=create_app(app_engine, dashboard=False))
        async with httpx.AsyncClient(transport=transport, base_url="http://testserver") as c:
            return await c.post("/api/v1/events", json={"name": "user.signed_up"})

    assert asyncio.run(send()).status_code == 401
    assert app_engine.list_events() == []


@pytest.fixture
def client(app_engine: Engine) -> Iterator[Client]:
    config = uvicorn.Config(
        create_app(app_engine, dashboard=False), host="127.0.0.1", port=0,
        log_level="warning", lifespan="off", ws="none",
    )  # fmt: skip
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, name="uvicorn", daemon=True)
    thread.start()
    deadline = time.monotonic() + 10
    while not server.started:
        assert thread.is_alive() and time.monotonic() < deadline, "the server did not start"
        time.sleep(0.01)
    port = server.servers[0].sockets[0].getsockname()[1]
    key = app_engine.create_api_key("client")
    try:
        with Client(f"http://127.0.0.1:{port}", api_key=key, timeout=10) as client:
            yield client
    finally:
        server.should_exit = True
        thread.join(10)


def test_the_client_emits_subscribes_and_lists_as_the_engine(
    client: Client, app_engine: Engine
) -> None:
    runs = client.emit("user.signed_up", {"user_id": 1}, id="e1")
    assert client.emit("user.signed_up", {"user_id": 1}, id="e1") == runs
    assert [r.id for r in app_engine.list_runs(workflow="welcome")] == runs
    key = client.subscribe("audit", "order.paid", match={"region": "eu"}, key="audit-eu")
    assert key == "audit-eu"
    assert client.list_subscriptions() == app_engine.list_subscriptions()
    assert len(asyncio.run(client.emit_async("order.paid", {"region": "eu"}))) == 1
    assert client.list_events() == app_engine.list_events()
    assert client.get_event("e1") == app_engine.get_event("e1")
    assert client.get_event("nope") is None
    assert client.unsubscribe("audit-eu") is True
    assert client.unsubscribe("audit-eu") is False


def test_the_client_says_which_runs_an_emit_woke(client: Client, app_engine: Engine) -> None:
    _waiting_for_payment(app_engine, "order-101")
    emitted = client.emit_event("order.paid", {"order_id": 101}, id="paid-1")
    assert (emitted.started, emitted.woke) == ((), ("order-101",))
    assert emitted == app_engine.get_event("paid-1")
    assert client.emit("order.paid", {"order_id": 101}, id="paid-1") == []
    again = asyncio.run(client.emit_event_async("order.paid", {"order_id": 101}, id="paid-1"))
    assert again == emitted


def test_the_client_raises_the_engines_errors(client: Client) -> None:
    with pytest.raises(ConfigError):
        client.emit("bad\x00name")
    with pytest.raises(UnknownWorkflowError):
        client.subscribe("nope", "order.paid")


# -- command line and /metrics -------------------------------------------------------------


def cli(*args: str) -> Any:
    from click.testing import CliRunner

    from tickwork.cli import main

    return CliRunner(env={"COLUMNS": "200"}).invoke(main, list(args), catch_exceptions=False)


def test_tickwork_events_emit_list_and_show(app_engine: Engine) -> None:
    app_engine.sync_subscriptions()  # what a worker does at start-up
    url = app_engine.url
    emitted = cli("events", "emit", "user.signed_up", "--data", '{"user_id": 7}', "--id", "e7",
                  "--database", url)  # fmt: skip
    assert emitted.exit_code == 0, emitted.output
    (run_id,) = emitted.stdout.split()
    assert app_engine.get_run(run_id) is not None
    again = cli("events", "emit", "user.signed_up", "--id", "e7", "--json", "--database", url)
    assert json.loads(again.stdout)["runs"] == [run_id]
    listed = cli("events", "list", "--database", url)
    assert "user.signed_up" in listed.stdout and "e7" in listed.stdout
    as_json = json.loads(cli("events", "list", "--json", "--database", url).stdout)
    assert [e["id"] for e in as_json["events"]] == ["e7"]
    shown = cli("events", "show", "e7", "--json", "--database", url)
    assert json.loads(shown.stdout)["started"] == [run_id]
    assert "user_id" in cli("events", "show", "e7", "--database", url).stdout
    missing = cli("events", "show", "nope", "--database", url)
    assert missing.exit_code == 3 and "nope" in missing.stderr


def test_tickwork_events_emit_says_how_many_runs_it_started_and_woke(
    app_engine: Engine,
) -> None:
    _waiting_for_payment(app_engine, "order-101")
    url = app_engine.url
    emitted = cli("events", "emit", "order.paid", "--data", '{"order_id": 101}', "--id",
                  "paid-1", "--database", url)  # fmt: skip
    assert emitted.exit_code == 0, emitted.output
    assert emitted.stdout == ""  # no run started: no run id to print
    assert emitted.stderr.strip() == "Event paid-1: started 0 runs, woke 1 (order-101)."
    again = cli("events", "emit", "order.paid", "--id", "paid-1", "--json", "--database", url)
    assert json.loads(again.stdout) == {
        "name": "order.paid", "id": "paid-1", "runs": [], "woke": ["order-101"]
    }  # fmt: skip
    shown = json.loads(cli("events", "show", "paid-1", "--json", "--database", url).stdout)
    assert shown["woke"] == ["order-101"]


def test_tickwork_events_emit_refuses_bad_json_and_bad_names(app_engine: Engine) -> None:
    url = app_engine.url
    assert cli("events", "emit", "x", "--data", "{nope", "--database", url).exit_code == 2
    assert cli("events", "emit", "bad\x1bname", "--database", url).exit_code != 0
    assert app_engine.list_events() == []


def test_metrics_count_events_by_name_and_runs_waiting(app_engine: Engine) -> None:
    @app_engine.workflow("waits")
    def waits(ctx: Context) -> Any:
        return ctx.wait_for_event("go")

    app_engine.start("waits")
    app_engine.run_until_idle()
    app_engine.emit("user.signed_up", {}, id="a")
    app_engine.emit("user.signed_up", {}, id="a")  # the same event: counted once
    app_engine.emit("other", {})
    text = call(app_engine, "GET", "/metrics").text
    assert 'tickwork_events_total{name="user.signed_up"} 1.0' in text
    assert 'tickwork_events_total{name="other"} 1.0' in text
    assert "tickwork_runs_waiting 1.0" in text
    app_engine.emit("go", {})
    assert "tickwork_runs_waiting 0.0" in call(app_engine, "GET", "/metrics").text


def test_runs_show_says_what_a_run_waits_for_and_what_it_received(
    app_engine: Engine, clock: FakeClock
) -> None:
    @app_engine.workflow("waits")
    def waits(ctx: Context) -> Any:
        return ctx.wait_for_event("order.paid", match={"order_id": 404}, timeout="1h") is not None

    app_engine.start("waits", run_id="w1")
    app_engine.run_until_idle()
    shown = cli("runs", "show", "w1", "--database", app_engine.url).stdout
    # (in …): from the command's own clock, not the test's
    says = "waits for order.paid where order_id = 404, until 2026-03-01T13:00:00.000Z ("
    assert says in shown
    assert "so far" in shown and "0 ms" not in shown  # a wait not over has no duration yet
    clock.advance(timedelta(minutes=20))
    app_engine.emit("order.paid", {"order_id": 404}, id="p1")
    app_engine.run_until_idle()
    shown = cli("runs", "show", "w1", "--database", app_engine.url).stdout
    assert "event p1" in shown
    (row,) = [line for line in shown.splitlines() if "event p1" in line]
    assert "20 min" in row  # from its start to the event


def test_the_api_says_when_a_wait_ended_and_what_it_waits_for(
    app_engine: Engine, clock: FakeClock
) -> None:
    @app_engine.workflow("waits")
    def waits(ctx: Context) -> Any:
        ctx.sleep("cool-off", "1h")
        return ctx.wait_for_event("order.paid", match={"order_id": 404}, timeout="1h") is not None

    app_engine.start("waits", run_id="w1")
    app_engine.run_until_idle()
    sleeping = call(app_engine, "GET", "/api/v1/runs/w1").json()["steps"]
    assert sleeping[0]["ended_at"] is None and sleeping[0]["waiting_for"] is None
    clock.advance(timedelta(hours=1))
    app_engine.run_until_idle()
    (slept, waiting) = call(app_engine, "GET", "/api/v1/runs/w1").json()["steps"]
    assert slept["ended_at"] == "2026-03-01T13:00:00.000Z"  # its wake, not its start
    assert waiting["status"] == "waiting" and waiting["ended_at"] is None
    assert waiting["waiting_for"] == {
        "names": ["order.paid"], "match": {"order_id": 404}, "until": "2026-03-01T14:00:00.000Z"
    }  # fmt: skip
    assert waiting["result"]["match"] == {"order_id": 404}  # the stored value keeps it too
    clock.advance(timedelta(minutes=20))
    app_engine.emit("order.paid", {"order_id": 404}, id="p1")
    (_, got) = call(app_engine, "GET", "/api/v1/runs/w1").json()["steps"]
    assert got["ended_at"] == "2026-03-01T13:20:00.000Z" and got["waiting_for"] is None
    assert got["started_at"] == "2026-03-01T13:00:00.000Z"
    step = openapi_document()["components"]["schemas"]["Step"]["properties"]
    assert {"ended_at", "waiting_for"} <= set(step)


# -- bad events through every face (docs/events.md "What an event may hold") ----------------


def deep(depth: int) -> Any:
    value: Any = {}
    for _ in range(depth - 1):
        value = {"a": value}
    return value


@pytest.mark.parametrize(
    "payload", [deep(150), deep(100_000), {"a": "\ud800"}], ids=["150", "100000", "surrogate"]
)
def test_the_client_refuses_a_payload_the_engine_refuses_and_nothing_is_stored(
    client: Client, app_engine: Engine, payload: Any
) -> None:
    with pytest.raises(ConfigError, match="An event's payload"):
        client.emit("user.signed_up", payload)
    with pytest.raises(ConfigError, match="Input of workflow 'audit'"):
        client.start("audit", payload)
    assert app_engine.list_events() == [] and app_engine.list_runs() == []


@pytest.mark.parametrize(
    "body",
    [
        {"name": "x", "payload": deep(150)},  # JSON the body's parser reads, too deep to keep
        {"name": "x\u202eexe.gpj"},
        {"name": "x", "id": "a\u2028b"},
    ],
    ids=["150-deep", "bidi-name", "line-separator-id"],
)
def test_the_api_refuses_an_event_the_engine_refuses_and_nothing_is_stored(
    app_engine: Engine, body: dict[str, Any]
) -> None:
    response = call(app_engine, "POST", "/api/v1/events", json=body)
    assert (response.status_code, response.json()["error"]["code"]) == (400, "CONFIG_ERROR")
    assert app_engine.list_events() == []


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (["--id", "\udcff"], "An event id must be"),  # $'\xff' read under a UTF-8 locale
        (["--id", "a\u202eb"], "An event id must be"),
        (["--data", '"\\ud800"'], "lone surrogate"),
        (["--data", "[" * 10_000 + "]" * 10_000], "nests deeper than 100 levels"),
        (["--data", "[" * 101 + "]" * 101], "nests deeper than 100 levels"),
    ],
    ids=["non-utf8-id", "bidi-id", "surrogate-payload", "10000-deep", "101-deep"],
)
def test_tickwork_events_emit_says_what_is_wrong_and_exits_2(
    app_engine: Engine, args: list[str], said: str
) -> None:
    assert app_engine.list_events() == []  # the database exists
    result = cli("events", "emit", "user.signed_up", *args, "--database", app_engine.url)
    assert result.exit_code == 2, result.output
    assert "Traceback" not in result.output
    (line,) = [line for line in result.output.splitlines() if line.startswith("error:")]
    assert said in line
    assert app_engine.list_events() == []


def test_tickwork_events_emit_refuses_a_non_utf8_name_and_exits_2(app_engine: Engine) -> None:
    assert app_engine.list_events() == []  # the database exists
    result = cli("events", "emit", "paid\udcff", "--database", app_engine.url)
    assert result.exit_code == 2 and "error: An event name must be" in result.output
    assert app_engine.list_events() == []
