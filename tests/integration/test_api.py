"""The HTTP API in process: every route, its keys, its status codes and error codes."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Iterator
from datetime import UTC, datetime, timedelta
from typing import Any
from urllib.parse import quote

import httpx
import pytest
from prometheus_client.parser import text_string_to_metric_families
from starlette.applications import Starlette
from starlette.routing import Mount, Route
from tests.timeline import START

from tickwork import ConfigError, Context, Engine, StoreError
from tickwork.server import create_app
from tickwork.server.openapi import openapi_document
from tickwork.testing import FakeClock


class Api:
    """A synchronous client of the app, in process (no socket)."""

    def __init__(self, app: Starlette, key: str | None) -> None:
        self.app = app
        self.key = key

    def request(
        self, method: str, path: str, *, key: str | None = "default", **kwargs: Any
    ) -> httpx.Response:
        token = self.key if key == "default" else key
        headers = {"Authorization": f"Bearer {token}"} if token is not None else {}
        headers.update(kwargs.pop("headers", {}))

        async def send() -> httpx.Response:
            transport = httpx.ASGITransport(app=self.app)
            async with httpx.AsyncClient(transport=transport, base_url="http://testserver") as c:
                return await c.request(method, path, headers=headers, **kwargs)

        return asyncio.run(send())

    def get(self, path: str, **kwargs: Any) -> httpx.Response:
        return self.request("GET", path, **kwargs)

    def post(self, path: str, **kwargs: Any) -> httpx.Response:
        return self.request("POST", path, **kwargs)


@pytest.fixture
def app_engine(engine: Engine) -> Engine:
    @engine.workflow()
    def double(ctx: Context, input: dict[str, int]) -> int:
        return ctx.step("double", lambda: input["n"] * 2)

    @engine.workflow(retry=None, concurrency=2, timeout="1m")
    def noop(ctx: Context) -> None:
        return None

    return engine


@pytest.fixture
def api(app_engine: Engine) -> Api:
    return Api(create_app(app_engine), app_engine.create_api_key("tests"))


def error_of(response: httpx.Response) -> dict[str, Any]:
    body = response.json()
    assert set(body) == {"error"}, body
    return dict(body["error"])


SCHEDULE = {"workflow": "double", "input": {"n": 1}, "every": "1h", "key": "hourly"}


def snapshot(engine: Engine) -> Any:
    """Everything the API can change, as the engine reads it."""
    schedules = engine.list_schedules()
    return (
        schedules,
        engine.list_runs(limit=10_000),
        [engine.schedule_history(s.key) for s in schedules],
        engine.list_api_keys(),
        engine.list_calendars(),
    )


# -- keys ------------------------------------------------------------------------------


def every_route() -> Iterator[tuple[str, str]]:
    """(method, path) of every documented operation, with path parameters filled in."""
    for path, item in openapi_document()["paths"].items():
        for method in item:
            filled = path.replace("{key}", "hourly").replace("{run_id}", "r1")
            filled = filled.replace("{event_id}", "e1")
            yield method.upper(), filled.replace("{name}", "acme")


PROTECTED = [route for route in every_route() if route[1] != "/healthz"]


def test_healthz_needs_no_key_and_says_ok(api: Api) -> None:
    response = api.get("/healthz", key=None)
    assert response.status_code == 200 and response.json() == {"status": "ok"}


def test_healthz_is_503_when_the_database_does_not_answer(
    api: Api, app_engine: Engine, monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken(run_id: str) -> None:
        raise StoreError("the database is gone")

    monkeypatch.setattr(app_engine, "get_run", broken)
    response = api.get("/healthz", key=None)
    assert response.status_code == 503 and response.json() == {"status": "unavailable"}


@pytest.mark.parametrize(("method", "path"), PROTECTED)
def test_every_route_but_healthz_refuses_a_request_without_a_key(
    api: Api, method: str, path: str
) -> None:
    response = api.request(method, path, key=None)
    assert response.status_code == 401
    assert response.headers["WWW-Authenticate"].startswith("Bearer")
    assert error_of(response)["code"] == "UNAUTHORIZED"


@pytest.mark.parametrize(("method", "path"), PROTECTED)
def test_every_route_but_healthz_refuses_a_wrong_key(api: Api, method: str, path: str) -> None:
    assert api.key is not None
    wrong = api.key[:-1] + ("A" if api.key[-1] != "A" else "B")
    response = api.request(method, path, key=wrong)
    assert response.status_code == 401
    assert 'error="invalid_token"' in response.headers["WWW-Authenticate"]
    assert error_of(response)["code"] == "UNAUTHORIZED"


@pytest.mark.parametrize(("method", "path"), PROTECTED)
def test_every_route_answers_json_503_when_the_database_is_down_at_the_key_check(
    api: Api, app_engine: Engine, monkeypatch: pytest.MonkeyPatch, method: str, path: str
) -> None:
    def down(key: str) -> None:
        raise StoreError("PostgreSQL: connection refused")

    monkeypatch.setattr(app_engine, "verify_api_key", down)
    response = api.request(method, path)
    assert response.status_code == 503
    assert error_of(response)["code"] == "STORE_ERROR"
    assert "connection refused" in error_of(response)["message"]


def test_a_revoked_key_is_refused_at_once(api: Api, app_engine: Engine) -> None:
    assert api.get("/api/v1/schedules").status_code == 200
    assert api.get("/metrics").status_code == 200
    app_engine.revoke_api_key("tests")
    assert api.get("/api/v1/schedules").status_code == 401
    assert api.get("/metrics").status_code == 401


@pytest.mark.parametrize("header", ["Basic dXNlcjpwYXNz", "Bearer", "Bearer ", "tw_x"])
def test_anything_but_a_bearer_key_is_refused(api: Api, header: str) -> None:
    response = api.get("/api/v1/schedules", key=None, headers={"Authorization": header})
    assert response.status_code == 401


def test_openapi_document_lists_exactly_the_routes_served(api: Api) -> None:
    document = api.get("/api/v1/openapi.json").json()
    assert document["openapi"].startswith("3.1")
    documented = {
        (path, method.upper()) for path, item in document["paths"].items() for method in item
    }
    served = set()
    for route in api.app.routes:
        if isinstance(route, Mount) and route.path == "/api/v1":
            for inner in route.routes:
                assert isinstance(inner, Route) and inner.methods is not None
                path = inner.path.replace("{run_id:path}", "{run_id}")
                served |= {(f"/api/v1{path}", m) for m in inner.methods if m != "HEAD"}
        elif isinstance(route, Route) and route.path in ("/healthz", "/metrics"):
            served |= {(route.path, m) for m in route.methods or () if m != "HEAD"}
    assert documented == served


# -- schedules -------------------------------------------------------------------------


def test_create_schedule_returns_its_key_and_the_schedule_as_stored(api: Api) -> None:
    response = api.post("/api/v1/schedules", json=SCHEDULE)
    assert response.status_code == 200, response.text
    body = response.json()
    assert body["key"] == "hourly"
    schedule = body["schedule"]
    assert schedule["every"] == "1h" and schedule["cron"] is None
    assert schedule["state"] == "active" and schedule["revision"] == 1
    assert schedule["next_fire_at"] == "2026-03-01T13:00:00.000Z"
    assert schedule["created_at"] == "2026-03-01T12:00:00.000Z"


def test_created_schedule_takes_every_engine_option(api: Api, app_engine: Engine) -> None:
    body = {
        "workflow": "double",
        "input": {"n": 2},
        "cron": "0 9 * * 1-5",
        "timezone": "Europe/London",
        "key": "weekday",
        "overlap": "skip",
        "catchup": "all",
        "catchup_window": {"hours": 6},
        "jitter": "30s",
        "paused": True,
        "pool": "reports",
        "priority": 5,
        "retry": {"max_attempts": 4, "backoff": "2s", "factor": 3, "max_backoff": "1m"},
        "start_at": "2026-03-02T00:00:00Z",
        "end_at": "2027-01-01T00:00:00+01:00",
    }
    assert api.post("/api/v1/schedules", json=body).status_code == 200
    info = app_engine.get_schedule("weekday")
    assert info is not None
    assert (info.cron, info.timezone, info.overlap, info.catchup) == (
        "0 9 * * 1-5",
        "Europe/London",
        "skip",
        "all",
    )
    assert info.jitter == timedelta(seconds=30) and info.state == "paused"
    assert (info.pool, info.priority) == ("reports", 5)
    assert info.next_fire_at is not None and info.next_fire_at.isoformat() == (
        "2026-03-02T09:00:00+00:00"
    )


def test_derived_key_is_the_engines(api: Api, app_engine: Engine) -> None:
    body = {"workflow": "double", "input": {"n": 7}, "cron": "*/5 * * * *"}
    key = api.post("/api/v1/schedules", json=body).json()["key"]
    assert key == app_engine.schedule("double", {"n": 7}, cron="*/5 * * * *")
    assert key.startswith("double-")


def test_put_registers_under_the_path_key_and_same_definition_changes_nothing(
    api: Api,
) -> None:
    definition = {"workflow": "double", "input": {"n": 1}, "every": "30m"}
    first = api.request("PUT", "/api/v1/schedules/half-hourly", json=definition)
    second = api.request("PUT", "/api/v1/schedules/half-hourly", json=definition)
    assert first.status_code == second.status_code == 200
    assert first.json() == second.json()
    assert first.json()["schedule"]["revision"] == 1
    changed = api.request(
        "PUT", "/api/v1/schedules/half-hourly", json={**definition, "every": "1h"}
    )
    assert changed.json()["schedule"]["revision"] == 2
    assert api.request("PUT", "/api/v1/schedules/x", json=SCHEDULE).status_code == 422


def test_conflicting_definition_with_on_conflict_error_is_409(api: Api) -> None:
    api.post("/api/v1/schedules", json=SCHEDULE)
    response = api.post(
        "/api/v1/schedules", json={**SCHEDULE, "every": "2h", "on_conflict": "error"}
    )
    assert response.status_code == 409
    assert error_of(response)["code"] == "SCHEDULE_CONFLICT"
    assert api.get("/api/v1/schedules/hourly").json()["every"] == "1h"


def test_list_and_get_schedules(api: Api) -> None:
    api.post("/api/v1/schedules", json=SCHEDULE)
    api.post("/api/v1/schedules", json={**SCHEDULE, "key": "daily", "every": "1d"})
    api.post("/api/v1/schedules/daily/pause")
    listed = api.get("/api/v1/schedules").json()["schedules"]
    assert [s["key"] for s in listed] == ["daily", "hourly"]
    paused = api.get("/api/v1/schedules", params={"state": "paused"}).json()["schedules"]
    assert [s["key"] for s in paused] == ["daily"]
    assert api.get("/api/v1/schedules", params={"workflow": "noop"}).json()["schedules"] == []
    assert api.get("/api/v1/schedules/daily").json()["every"] == "1d"
    bad = api.get("/api/v1/schedules", params={"state": "asleep"})
    assert bad.status_code == 400 and error_of(bad)["code"] == "CONFIG_ERROR"


def test_state_changes_answer_the_schedule_after(api: Api) -> None:
    api.post("/api/v1/schedules", json=SCHEDULE)
    for action, state in (
        ("pause", "paused"),
        ("resume", "active"),
        ("deactivate", "inactive"),
        ("activate", "active"),
    ):
        response = api.post(f"/api/v1/schedules/hourly/{action}")
        assert response.status_code == 200 and response.json()["state"] == state


def test_trigger_with_new_run_starts_another_run_now(api: Api, clock: FakeClock) -> None:
    api.post("/api/v1/schedules", json=SCHEDULE)
    clock.advance("90m")
    first = api.post("/api/v1/schedules/hourly/trigger").json()
    new = api.post("/api/v1/schedules/hourly/trigger", json={"new_run": True})
    assert new.status_code == 200
    assert new.json()["started"] is True and new.json()["run_id"] != first["run_id"]
    assert api.get(f"/api/v1/runs/{quote(new.json()['run_id'], safe='')}").status_code == 200
    bad = api.post("/api/v1/schedules/hourly/trigger", json={"new_run": "yes"})
    assert bad.status_code == 422 and bad.json()["error"]["code"] == "CONFIG_ERROR"
    unknown = api.post("/api/v1/schedules/hourly/trigger", json={"new_runs": True})
    assert unknown.status_code == 422


def test_trigger_starts_the_current_occurrence_once(api: Api, clock: FakeClock) -> None:
    api.post("/api/v1/schedules", json=SCHEDULE)
    clock.advance("90m")
    first = api.post("/api/v1/schedules/hourly/trigger").json()
    second = api.post("/api/v1/schedules/hourly/trigger", json={}).json()
    run_id = "hourly@2026-03-01T13:00:00.000Z"
    assert first == {"key": "hourly", "run_id": run_id, "started": True, "status": "pending"}
    assert second == {**first, "started": False}
    history = api.get("/api/v1/schedules/hourly/history").json()["history"]
    assert [h["decision"] for h in history] == ["already_started", "triggered"]
    assert history[1]["occurrence"] == "2026-03-01T13:00:00.000Z"
    limited = api.get("/api/v1/schedules/hourly/history", params={"limit": 1}).json()
    assert len(limited["history"]) == 1


def test_delete_removes_the_schedule(api: Api) -> None:
    api.post("/api/v1/schedules", json=SCHEDULE)
    response = api.request("DELETE", "/api/v1/schedules/hourly")
    assert response.json() == {"key": "hourly", "deleted": True}
    assert api.get("/api/v1/schedules/hourly").status_code == 404


@pytest.mark.parametrize(
    ("method", "path"),
    [
        ("GET", ""),
        ("DELETE", ""),
        ("POST", "/pause"),
        ("POST", "/resume"),
        ("POST", "/activate"),
        ("POST", "/deactivate"),
        ("POST", "/trigger"),
        ("GET", "/history"),
    ],
)
def test_unknown_schedule_is_404(api: Api, method: str, path: str) -> None:
    response = api.request(method, f"/api/v1/schedules/nope{path}")
    assert response.status_code == 404
    assert error_of(response)["code"] == "SCHEDULE_NOT_FOUND"


@pytest.mark.parametrize(
    ("change", "code"),
    [
        ({"every": None, "cron": "61 * * * *"}, "CRON_ERROR"),
        ({"every": None, "cron": "0 0 30 2 *"}, "CRON_ERROR"),
        ({"timezone": "Mars/Olympus_Mons"}, "CONFIG_ERROR"),
        ({"every": "1 fortnight"}, "CONFIG_ERROR"),
        ({"every": "0s"}, "CONFIG_ERROR"),
        ({"jitter": {"weeks": 1}}, "CONFIG_ERROR"),
        ({"every": None}, "CONFIG_ERROR"),
        ({"cron": "* * * * *"}, "CONFIG_ERROR"),
        ({"workflow": "missing"}, "UNKNOWN_WORKFLOW"),
        ({"input": {"n": "one"}}, "INPUT_INVALID"),
        ({"input": None, "workflow": "noop", "key": "a b"}, "CONFIG_ERROR"),
        ({"start_at": "2026-03-02T00:00:00"}, "CONFIG_ERROR"),
        ({"every": "999999999d"}, "CONFIG_ERROR"),
        ({"retry": {"max_attempts": 0}}, "CONFIG_ERROR"),
    ],
)
def test_invalid_values_are_400_with_the_error_code_and_store_nothing(
    api: Api, app_engine: Engine, change: dict[str, Any], code: str
) -> None:
    response = api.post("/api/v1/schedules", json={**SCHEDULE, **change})
    assert response.status_code == 400, response.text
    assert error_of(response)["code"] == code
    assert app_engine.list_schedules() == []


def test_cron_error_carries_the_field_and_reason(api: Api) -> None:
    response = api.post("/api/v1/schedules", json={**SCHEDULE, "every": None, "cron": "0 25 * * *"})
    error = error_of(response)
    assert error["details"] == {
        "expr": "0 25 * * *",
        "field": "hour",
        "reason": error["details"]["reason"],
    }
    assert "hour" in error["message"]


@pytest.mark.parametrize(
    ("body", "code"),
    [
        (b"{not json", "MALFORMED_BODY"),
        (b"[1, 2]", "MALFORMED_BODY"),
        (b'{"workflow": "double", "input": NaN}', "MALFORMED_BODY"),
        (b'{"workflow": "double", "input": "\\ud800"}', "MALFORMED_BODY"),
        (b"\xff\xfe", "MALFORMED_BODY"),
        (b'{"workflow": "double", "every": "1h", "priority": "high"}', "CONFIG_ERROR"),
        (b'{"workflow": "double", "every": "1h", "paused": 1}', "CONFIG_ERROR"),
        (b'{"workflow": "double", "every": "1h", "colour": "red"}', "CONFIG_ERROR"),
        (b'{"every": "1h"}', "CONFIG_ERROR"),
        (b'{"workflow": "double", "every": "1h", "overlap": "sometimes"}', "CONFIG_ERROR"),
        (b"[" * 5000 + b"]" * 5000, "MALFORMED_BODY"),
    ],
)
def test_malformed_bodies_are_422(api: Api, app_engine: Engine, body: bytes, code: str) -> None:
    for path in ("/api/v1/schedules", "/api/v1/runs"):
        response = api.post(path, content=body, headers={"Content-Type": "application/json"})
        assert response.status_code == 422, (path, response.text)
        assert error_of(response)["code"] == code
    assert app_engine.list_schedules() == [] and app_engine.list_runs() == []


def test_body_over_one_mebibyte_is_413(api: Api, app_engine: Engine) -> None:
    big = json.dumps({"workflow": "double", "input": {"pad": "x" * (1024 * 1024)}}).encode()
    response = api.post("/api/v1/runs", content=big, headers={"Content-Type": "application/json"})
    assert response.status_code == 413 and error_of(response)["code"] == "PAYLOAD_TOO_LARGE"

    async def chunks() -> AsyncIterator[bytes]:  # no Content-Length: counted as it comes
        for start in range(0, len(big), 64 * 1024):
            yield big[start : start + 64 * 1024]

    streamed = api.post("/api/v1/runs", content=chunks())
    assert streamed.status_code == 413 and error_of(streamed)["code"] == "PAYLOAD_TOO_LARGE"
    assert app_engine.list_runs() == []


# -- runs ------------------------------------------------------------------------------


def test_start_run_then_read_it_with_its_steps(api: Api, app_engine: Engine) -> None:
    started = api.post("/api/v1/runs", json={"workflow": "double", "input": {"n": 21}})
    assert started.status_code == 200
    run = started.json()
    assert run["status"] == "pending" and run["input"] == {"n": 21}
    app_engine.run_until_idle()
    shown = api.get(f"/api/v1/runs/{run['id']}").json()
    assert shown["status"] == "completed" and shown["result"] == 42
    assert shown["started_at"] == shown["finished_at"] == "2026-03-01T12:00:00.000Z"
    (step,) = shown["steps"]
    assert (step["name"], step["kind"], step["status"], step["result"]) == (
        "double",
        "step",
        "completed",
        42,
    )


def test_start_is_idempotent_by_run_id_and_takes_every_option(
    api: Api, app_engine: Engine, clock: FakeClock
) -> None:
    body = {
        "workflow": "double",
        "input": {"n": 1},
        "run_id": "once",
        "priority": 3,
        "pool": "default",
        "delay": "5m",
    }
    first = api.post("/api/v1/runs", json=body).json()
    second = api.post("/api/v1/runs", json={**body, "input": {"n": 2}}).json()
    assert first == second and first["id"] == "once" and first["priority"] == 3
    assert app_engine.run_until_idle() == 0  # delayed
    clock.advance("5m")
    assert app_engine.run_until_idle() == 1


@pytest.mark.parametrize(
    ("body", "code"),
    [
        ({"workflow": "missing"}, "UNKNOWN_WORKFLOW"),
        ({"workflow": "double", "input": [1]}, "INPUT_INVALID"),
        ({"workflow": "noop", "input": 1}, "INPUT_INVALID"),
        ({"workflow": "noop", "delay": "soon"}, "CONFIG_ERROR"),
        ({"workflow": "noop", "pool": ""}, "CONFIG_ERROR"),
    ],
)
def test_invalid_start_is_400(
    api: Api, app_engine: Engine, body: dict[str, Any], code: str
) -> None:
    response = api.post("/api/v1/runs", json=body)
    assert response.status_code == 400 and error_of(response)["code"] == code
    assert app_engine.list_runs() == []


def test_list_runs_filters_and_pages_newest_first(
    api: Api, app_engine: Engine, clock: FakeClock
) -> None:
    for n in range(5):
        app_engine.start("noop", run_id=f"r{n}")
        clock.advance("1s")
    app_engine.start("double", {"n": 1}, run_id="d")
    pages, offset = [], 0
    while offset is not None:
        page = api.get("/api/v1/runs", params={"workflow": "noop", "limit": 2, "offset": offset})
        pages.append([r["id"] for r in page.json()["runs"]])
        offset = page.json()["next_offset"]
    assert pages == [["r4", "r3"], ["r2", "r1"], ["r0"]]
    app_engine.cancel("r1")
    cancelled = api.get("/api/v1/runs", params={"status": "cancelled"}).json()
    assert [r["id"] for r in cancelled["runs"]] == ["r1"] and cancelled["next_offset"] is None
    assert len(api.get("/api/v1/runs").json()["runs"]) == 6


def test_list_runs_pages_by_run_id_stay_stable_while_runs_arrive(
    api: Api, app_engine: Engine, clock: FakeClock
) -> None:
    for n in range(5):
        app_engine.start("noop", run_id=f"r{n}")
        clock.advance("1s")
    pages, before = [], None
    while True:
        params = {"limit": 2} if before is None else {"limit": 2, "before": before}
        page = api.get("/api/v1/runs", params=params).json()
        pages.append([r["id"] for r in page["runs"]])
        before = page["next_before"]
        if before is None:
            break
        app_engine.start("noop", run_id=f"new{len(pages)}")  # lands on page one, not here
    assert pages == [["r4", "r3"], ["r2", "r1"], ["r0"]]
    assert api.get("/api/v1/runs", params={"before": "nope"}).json()["runs"] == []


@pytest.mark.parametrize(
    "params",
    [
        {"status": "sleepy"},
        {"limit": 0},
        {"limit": "ten"},
        {"limit": 10_001},
        {"offset": -1},
        {"offset": 9_999, "limit": 2},
        {"limit": "--5"},
    ],
)
def test_bad_run_filters_are_400(api: Api, params: dict[str, Any]) -> None:
    response = api.get("/api/v1/runs", params=params)
    assert response.status_code == 400 and error_of(response)["code"] == "CONFIG_ERROR"


@pytest.mark.parametrize(
    "path", ["/api/v1/runs?stauts=failed", "/api/v1/schedules?limit=5", "/api/v1/workflows?x=1"]
)
def test_unknown_query_parameters_are_400_rather_than_ignored(api: Api, path: str) -> None:
    response = api.get(path)
    assert response.status_code == 400 and error_of(response)["code"] == "CONFIG_ERROR"
    assert "Unknown query parameter" in error_of(response)["message"]


def test_instants_take_any_iso_offset_even_with_seconds(api: Api, app_engine: Engine) -> None:
    body = {**SCHEDULE, "start_at": "1900-01-01T00:00:00+05:53:28", "every": "1d"}
    assert api.post("/api/v1/schedules", json=body).status_code == 200
    info = app_engine.get_schedule("hourly")
    assert info is not None and info.next_fire_at is not None
    assert info.next_fire_at.time().isoformat() == "18:06:32"


def test_runs_of_a_schedule_are_listed_by_its_key(api: Api, clock: FakeClock) -> None:
    api.post("/api/v1/schedules", json=SCHEDULE)
    clock.advance("1h")
    run_id = api.post("/api/v1/schedules/hourly/trigger").json()["run_id"]
    runs = api.get("/api/v1/runs", params={"schedule_key": "hourly"}).json()["runs"]
    assert [r["id"] for r in runs] == [run_id]
    assert runs[0]["scheduled_for"] == "2026-03-01T13:00:00.000Z"
    assert runs[0]["schedule_revision"] == 1


def test_cancel_answers_whether_it_cancelled(api: Api, app_engine: Engine) -> None:
    app_engine.start("noop", run_id="r1")
    first = api.post("/api/v1/runs/r1/cancel").json()
    assert first == {"run_id": "r1", "cancelled": True, "status": "cancelled"}
    second = api.post("/api/v1/runs/r1/cancel").json()
    assert second == {"run_id": "r1", "cancelled": False, "status": "cancelled"}
    missing = api.post("/api/v1/runs/nope/cancel")
    assert missing.status_code == 404 and error_of(missing)["code"] == "RUN_NOT_FOUND"
    assert api.get("/api/v1/runs/nope").status_code == 404


def test_run_ids_with_slashes_and_dots_are_addressable(api: Api, app_engine: Engine) -> None:
    for run_id in ("daily/2026-03-01", "..", "a b?c#d"):
        app_engine.start("noop", run_id=run_id)
        quoted = "".join(f"%{b:02X}" for b in run_id.encode())  # every byte escaped
        assert api.get(f"/api/v1/runs/{quoted}").json()["id"] == run_id
        assert api.post(f"/api/v1/runs/{quoted}/cancel").json()["cancelled"] is True


# -- workflows, previews, metrics ------------------------------------------------------


def test_workflows_are_listed_with_their_options(api: Api) -> None:
    workflows = {w["name"]: w for w in api.get("/api/v1/workflows").json()["workflows"]}
    assert set(workflows) == {"double", "noop"}
    assert workflows["double"]["takes_input"] is True
    assert workflows["double"]["input_schema"]["type"] == "object"
    noop = workflows["noop"]
    assert (noop["concurrency"], noop["timeout"], noop["input_schema"]) == (2, "1m", None)
    assert noop["retry"] == {"max_attempts": 1, "backoff": "1s", "factor": 2.0, "max_backoff": "5m"}


def test_cron_preview_lists_occurrences_in_the_zone_and_in_words(api: Api) -> None:
    params = {
        "cron": "30 2 * * *",
        "timezone": "Europe/Paris",
        "count": 3,
        "after": "2026-03-28T00:00:00Z",
    }
    preview = api.get("/api/v1/cron/preview", params=params).json()
    assert preview["description"] and preview["every"] is None
    assert [o["utc"] for o in preview["occurrences"]] == [
        "2026-03-28T01:30:00.000Z",
        "2026-03-29T01:00:00.000Z",  # 02:30 is skipped by DST: the first instant after
        "2026-03-30T00:30:00.000Z",
    ]
    assert [o["utc_offset"] for o in preview["occurrences"]] == ["+01:00", "+02:00", "+02:00"]


def test_cron_preview_takes_the_dst_policy(api: Api) -> None:
    params = {
        "cron": "30 2 * * *",
        "timezone": "Europe/Paris",
        "count": 2,
        "after": "2026-03-28T12:00:00Z",
        "dst_gap": "skip",
    }
    preview = api.get("/api/v1/cron/preview", params=params).json()
    assert [o["utc"] for o in preview["occurrences"]] == [
        "2026-03-30T00:30:00.000Z",  # no run on the 29th, whose 02:30 DST skips
        "2026-03-31T00:30:00.000Z",
    ]


def test_cron_preview_marks_what_dst_did(api: Api) -> None:
    base = {"cron": "30 2 * * *", "timezone": "Europe/Paris", "after": "2026-03-28T12:00:00Z"}
    moved = api.get("/api/v1/cron/preview", params={**base, "count": 2}).json()
    assert [(o["utc"], o.get("dst"), o.get("dst_wall")) for o in moved["occurrences"]] == [
        ("2026-03-29T01:00:00.000Z", "moved", "2026-03-29T02:30:00"),
        ("2026-03-30T00:30:00.000Z", None, None),  # untouched: no dst fields at all
    ]
    skipped = api.get("/api/v1/cron/preview", params={**base, "count": 1, "dst_gap": "skip"})
    assert skipped.json()["dst_skipped"] == ["2026-03-29T02:30:00"]
    autumn = {**base, "cron": "30 2 * * *", "after": "2026-10-24T12:00:00Z", "count": 2}
    doubled = api.get("/api/v1/cron/preview", params={**autumn, "dst_repeat": "both"}).json()
    assert [(o["utc_offset"], o["dst"]) for o in doubled["occurrences"]] == [
        ("+02:00", "doubled"),
        ("+01:00", "doubled"),
    ]


def test_interval_preview_counts_from_now(api: Api) -> None:
    preview = api.get("/api/v1/cron/preview", params={"every": "90m", "count": 2}).json()
    assert preview["every"] == "1h30m" and preview["description"] == "every 1 h 30 min"
    assert [o["utc"] for o in preview["occurrences"]] == [
        "2026-03-01T13:30:00.000Z",
        "2026-03-01T15:00:00.000Z",
    ]
    bare = api.get("/api/v1/cron/preview", params={"every": "5400000", "count": 2})
    assert bare.status_code == 400  # seconds or milliseconds? (it used to read ms)
    assert "write '5400000s' or '5400000ms'" in error_of(bare)["message"]


@pytest.mark.parametrize(
    ("params", "code"),
    [
        ({"cron": "* * *"}, "CRON_ERROR"),
        ({}, "CONFIG_ERROR"),
        ({"cron": "* * * * *", "every": "1m"}, "CONFIG_ERROR"),
        ({"cron": "* * * * *", "timezone": "Nowhere"}, "CONFIG_ERROR"),
        ({"every": "1m", "count": 1001}, "CONFIG_ERROR"),
        ({"every": "1m", "after": "yesterday"}, "CONFIG_ERROR"),
        ({"every": "1m", "after": "2026-03-01T00:00:00"}, "CONFIG_ERROR"),
        ({"cron": "0 2 * * *", "dst_repeat": "twice"}, "CONFIG_ERROR"),
    ],
)
def test_bad_previews_are_400(api: Api, params: dict[str, Any], code: str) -> None:
    response = api.get("/api/v1/cron/preview", params=params)
    assert response.status_code == 400 and error_of(response)["code"] == code


def metric_samples(api: Api) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    response = api.get("/metrics")
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("text/plain")
    return {
        (sample.name, tuple(sorted(sample.labels.items()))): sample.value
        for family in text_string_to_metric_families(response.text)
        for sample in family.samples
    }


def test_metrics_count_firings_lateness_runs_and_durations(
    api: Api, app_engine: Engine, clock: FakeClock
) -> None:
    api.post("/api/v1/schedules", json={**SCHEDULE, "every": "1m", "overlap": "skip"})
    clock.advance("1m")
    clock.advance("2s")
    app_engine.tick()  # fired 2 s late
    clock.advance("1m")
    app_engine.tick()  # the first run is unfinished: skipped for overlap
    app_engine.run_until_idle()
    samples = metric_samples(api)
    assert samples[("tickwork_schedule_firings_total", (("decision", "started"),))] == 1
    assert samples[("tickwork_schedule_firings_total", (("decision", "skipped_overlap"),))] == 1
    late = (("workflow", "double"),)
    assert samples[("tickwork_firing_lateness_seconds_count", late)] == 1
    assert samples[("tickwork_firing_lateness_seconds_sum", late)] == 2.0
    assert samples[("tickwork_firing_lateness_seconds_bucket", (("le", "1.0"), *late))] == 0
    assert samples[("tickwork_firing_lateness_seconds_bucket", (("le", "2.5"), *late))] == 1
    done = (("status", "completed"), ("workflow", "double"))
    assert samples[("tickwork_runs", done)] == 1
    assert samples[("tickwork_run_duration_seconds_count", done)] == 1
    assert samples[("tickwork_step_duration_seconds_count", (("status", "completed"),))] == 1
    assert samples[("tickwork_schedules", (("state", "active"),))] == 1


def test_two_apps_in_one_process_keep_their_own_metrics(app_engine: Engine) -> None:
    key = app_engine.create_api_key("second")
    first, second = Api(create_app(app_engine), key), Api(create_app(app_engine), key)
    assert metric_samples(first) == metric_samples(second)


# -- the whole app ---------------------------------------------------------------------


def test_get_requests_never_change_anything(api: Api, app_engine: Engine, clock: FakeClock) -> None:
    api.post("/api/v1/schedules", json=SCHEDULE)
    app_engine.start("double", {"n": 1}, run_id="r1")
    app_engine.emit("order.paid", {"n": 1}, id="e1")
    app_engine.calendar("acme", holidays=["2026-12-24"])
    clock.advance("3h")  # occurrences are due: a GET must not fire them
    app_engine.run_until_idle()
    before = snapshot(app_engine)
    for method, path in every_route():
        if method == "GET":  # the preview without a cadence is a 400
            assert api.get(path).status_code in (200, 400), path
    api.get("/api/v1/runs", params={"schedule_key": "hourly", "status": "pending"})
    api.get("/api/v1/cron/preview", params={"every": "1m"})
    api.get("/api/v1/calendars/acme", params={"year": 2026})
    assert snapshot(app_engine) == before
    assert app_engine.get_schedule("hourly") == before[0][0]


def test_unknown_routes_and_methods_are_json_errors(api: Api) -> None:
    missing = api.get("/api/v1/nothing-here")
    assert missing.status_code == 404 and error_of(missing)["code"] == "NOT_FOUND"
    wrong = api.request("PATCH", "/api/v1/schedules")
    assert wrong.status_code == 405 and error_of(wrong)["code"] == "METHOD_NOT_ALLOWED"


def test_app_without_dashboard_serves_the_api_only(app_engine: Engine) -> None:
    app = create_app(app_engine, dashboard=False)
    paths = {getattr(route, "path", None) for route in app.routes}
    assert paths == {"/healthz", "/metrics", "/api/v1"}


def test_engine_clock_sets_every_instant(api: Api) -> None:
    api.post("/api/v1/schedules", json=SCHEDULE)
    schedule = api.get("/api/v1/schedules/hourly").json()
    assert schedule["created_at"] == START.isoformat().replace("+00:00", ".000Z")


@pytest.mark.parametrize(
    "options",
    [
        {"every": timedelta(days=999_999_998)},
        {"every": "1d", "start_at": datetime(9999, 12, 31, tzinfo=UTC)},
    ],
)
def test_engine_refuses_a_schedule_whose_occurrences_pass_year_9999(
    app_engine: Engine, options: dict[str, Any]
) -> None:
    with pytest.raises(ConfigError, match="9999"):
        app_engine.schedule("noop", key="far", **options)
    assert app_engine.list_schedules() == []
