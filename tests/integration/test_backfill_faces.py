"""Backfill on the HTTP API (and its OpenAPI document) and through ``Client``: the same
runs and the same errors as ``engine.backfill``; overlap="buffer_all" accepted by both."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator

import httpx
import pytest
import uvicorn
from tests.timeline import at, rid

from tickwork import Client, ConfigError, Context, Engine
from tickwork.server import create_app
from tickwork.server.openapi import openapi_document


@pytest.fixture
def app_engine(engine: Engine) -> Engine:
    @engine.workflow()
    def job(ctx: Context) -> None:
        return None

    engine.schedule("job", None, key="k", every="10m", overlap="skip")
    return engine


@pytest.fixture
def server_url(app_engine: Engine) -> Iterator[str]:
    config = uvicorn.Config(
        create_app(app_engine, dashboard=False),
        host="127.0.0.1",
        port=0,
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
def http(app_engine: Engine, server_url: str) -> Iterator[httpx.Client]:
    key = app_engine.create_api_key("tests")
    headers = {"Authorization": f"Bearer {key}"}
    with httpx.Client(base_url=f"{server_url}/api/v1", headers=headers, timeout=10) as http:
        yield http


@pytest.fixture
def client(app_engine: Engine, server_url: str) -> Iterator[Client]:
    with Client(server_url, api_key=app_engine.create_api_key("client"), timeout=10) as client:
        yield client


def test_post_backfill_starts_the_runs_and_answers_with_their_ids(
    http: httpx.Client, app_engine: Engine
) -> None:
    body = {"start": "2026-03-01T11:30:00Z", "end": "2026-03-01T12:00:00+00:00", "overlap": "allow"}
    response = http.post("/schedules/k/backfill", json=body)
    assert response.status_code == 200, response.text
    assert response.json() == {
        "key": "k", "run_ids": [rid(-30), rid(-20), rid(-10)], "count": 3, "started": 3,
        "already_had_runs": 0,
    }  # fmt: skip
    assert [h.decision for h in app_engine.schedule_history("k")] == ["backfilled"] * 3
    again = http.post("/schedules/k/backfill", json=body)
    assert again.json()["run_ids"] == response.json()["run_ids"]
    assert (again.json()["started"], again.json()["already_had_runs"]) == (0, 3)
    assert len(app_engine.list_runs(schedule_key="k")) == 3


def test_post_backfill_refusals(http: httpx.Client, app_engine: Engine) -> None:
    span = {"start": "2026-03-01T11:30:00Z", "end": "2026-03-01T12:00:00Z"}
    missing = http.post("/schedules/nope/backfill", json=span)
    assert missing.status_code == 404
    assert missing.json()["error"]["code"] == "SCHEDULE_NOT_FOUND"
    backwards = http.post(
        "/schedules/k/backfill", json={"start": span["end"], "end": span["start"]}
    )
    assert backwards.status_code == 400 and "later than its start" in backwards.text
    huge = http.post(
        "/schedules/k/backfill", json={"start": "2000-01-01T00:00:00Z", **{"end": span["end"]}}
    )
    assert huge.status_code == 400 and "100,000" in huge.text
    bad_overlap = http.post("/schedules/k/backfill", json={**span, "overlap": "sometimes"})
    assert bad_overlap.status_code == 422
    assert app_engine.list_runs() == []


def test_the_openapi_document_describes_the_backfill_route() -> None:
    document = openapi_document()
    operation = document["paths"]["/api/v1/schedules/{key}/backfill"]["post"]
    assert operation["operationId"] == "backfill_schedule"
    body = document["components"]["schemas"]["BackfillRequest"]
    assert set(body["properties"]) == {"start", "end", "overlap"}
    assert set(body["required"]) == {"start", "end"}
    overlaps = document["components"]["schemas"]["Overlap"]["enum"]
    assert "buffer_all" in overlaps


def test_client_backfill_is_the_engines(client: Client, app_engine: Engine) -> None:
    ids = client.backfill("k", at(-30), at(0), overlap="buffer_all")
    assert ids == [rid(-30), rid(-20), rid(-10)]
    assert [r.id for r in app_engine.list_runs(schedule_key="k")] == [rid(-30)]  # one by one
    assert client.backfill("k", at(-30), at(0)) == ids  # idempotent
    with pytest.raises(ConfigError, match="No schedule"):
        client.backfill("nope", at(-30), at(0))
    with pytest.raises(ConfigError, match="later than its start"):
        client.backfill("k", at(0), at(-30))
    with pytest.raises(ConfigError):
        client.backfill("k", at(-30).replace(tzinfo=None), at(0))


def test_client_registers_buffer_all(client: Client, app_engine: Engine) -> None:
    client.schedule("job", None, key="b", every="1h", overlap="buffer_all")
    info = app_engine.get_schedule("b")
    assert info is not None and info.overlap == "buffer_all"
