"""Workers record themselves and renew the record (DESIGN §8): ``engine.list_workers()``,
its async twin, ``GET /api/v1/workers``, ``Client.list_workers()``, ``tickwork workers``.

Engines here run on a ``FakeClock``; the heartbeat stamps the engine's clock, so the times
a worker shows are known in advance.
"""

from __future__ import annotations

import asyncio
import importlib.metadata
import json
import os
import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import timedelta

import pytest
import uvicorn
from click.testing import CliRunner
from starlette.applications import Starlette
from tests.integration.test_api import Api
from tests.polling import WAIT_S, wait_until

from tickwork import Client, ConfigError, Context, Engine, WorkerInfo
from tickwork.cli import main
from tickwork.server import create_app
from tickwork.testing import FakeClock


def report(ctx: Context) -> str:
    return "done"


@contextmanager
def serving(app: Starlette) -> Iterator[str]:
    """``app`` on 127.0.0.1 at a free port, for a ``Client``; its URL."""
    config = uvicorn.Config(app, host="127.0.0.1", port=0, log_level="warning", lifespan="off")
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, name="uvicorn", daemon=True)
    thread.start()
    deadline = time.monotonic() + WAIT_S
    while not server.started:
        assert thread.is_alive() and time.monotonic() < deadline, "the server did not start"
        time.sleep(0.01)
    try:
        yield f"http://127.0.0.1:{server.servers[0].sockets[0].getsockname()[1]}"
    finally:
        server.should_exit = True
        thread.join(10)


@pytest.fixture
def fast_heartbeat(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TICKWORK_WORKER_HEARTBEAT", "50ms")


def test_no_worker_is_listed_before_one_ran(engine: Engine) -> None:
    assert engine.list_workers() == []


def test_a_running_worker_is_listed_alive_with_what_it_serves(
    engine: Engine, clock: FakeClock
) -> None:
    engine.workflow("report")(report)
    engine.workflow("cleanup")(report)
    with engine.worker(threads=1):
        (worker,) = engine.list_workers()
    assert worker.alive and worker.stopped_at is None
    assert (worker.host, worker.pid) == (socket.gethostname(), os.getpid())
    assert worker.pools == ("default",) and worker.workflows == ("cleanup", "report")
    assert worker.version == importlib.metadata.version("tickwork")
    assert worker.started_at == worker.last_seen == clock.now()


def test_a_worker_that_stops_gracefully_is_listed_stopped_not_alive(
    engine: Engine, clock: FakeClock
) -> None:
    engine.workflow("report")(report)
    with engine.worker(threads=1):
        clock.advance("1s")
    (worker,) = engine.list_workers()
    assert not worker.alive and worker.stopped_at == clock.now()
    with engine.worker(threads=1):  # the same engine again: alive again, one record
        (again,) = engine.list_workers()
    assert again.id == worker.id and again.alive and again.stopped_at is None


@pytest.mark.usefixtures("fast_heartbeat")
def test_the_heartbeat_renews_the_record_on_the_engines_clock(
    engine: Engine, clock: FakeClock
) -> None:
    engine.workflow("report")(report)
    with engine.worker(threads=1, poll_interval="50ms"):
        (first,) = engine.list_workers()
        clock.advance("1h")  # three renewals missed, by the engine's clock...
        later = clock.now()
        # ...until the heartbeat, which looks at that clock, renews: alive again.
        wait_until(lambda: engine.list_workers()[0].last_seen == later, "renewed")
        (renewed,) = engine.list_workers()
    assert renewed.alive and renewed.started_at == first.started_at


@pytest.mark.usefixtures("fast_heartbeat")
def test_a_workflow_registered_after_start_is_renewed_into_the_record(engine: Engine) -> None:
    engine.workflow("report")(report)
    with engine.worker(threads=1, poll_interval="50ms"):
        engine.workflow("late")(report)
        wait_until(lambda: "late" in engine.list_workers()[0].workflows, "late is listed")


def test_a_bad_heartbeat_setting_is_refused_before_the_worker_starts(
    engine: Engine, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TICKWORK_WORKER_HEARTBEAT", "soon")
    with pytest.raises(ConfigError, match="TICKWORK_WORKER_HEARTBEAT"), engine.worker(threads=1):
        pass
    assert engine.list_workers() == []


def test_list_workers_async_is_the_same_call(engine: Engine) -> None:
    engine.workflow("report")(report)
    with engine.worker(threads=1):
        assert asyncio.run(engine.list_workers_async()) == engine.list_workers()


# -- the faces -------------------------------------------------------------------------


@pytest.fixture
def stopped_and_live(engine: Engine, clock: FakeClock) -> list[WorkerInfo]:
    """One worker that ran and stopped, then one running (on the engine's thread)."""
    engine.workflow("report")(report)
    with engine.worker(threads=1):
        pass
    clock.advance("1m")
    return engine.list_workers()


def test_the_api_lists_the_workers_as_the_engine_does(
    engine: Engine, stopped_and_live: list[WorkerInfo]
) -> None:
    api = Api(create_app(engine, dashboard=False), engine.create_api_key("ops"))
    response = api.get("/api/v1/workers")
    assert response.status_code == 200
    (worker,) = stopped_and_live
    assert response.json() == {
        "workers": [
            {
                "id": worker.id,
                "host": socket.gethostname(),
                "pid": os.getpid(),
                "pools": ["default"],
                "workflows": ["report"],
                "version": worker.version,
                "started_at": "2026-03-01T12:00:00.000Z",
                "last_seen": "2026-03-01T12:00:00.000Z",
                "alive": False,
                "stopped_at": "2026-03-01T12:00:00.000Z",
                "waiting_for_calendars": {},
            }
        ]
    }
    assert api.get("/api/v1/workers", key=None).status_code == 401
    assert api.get("/api/v1/workers?alive=1").json()["error"]["code"] == "CONFIG_ERROR"


def test_the_openapi_document_describes_the_workers_route(engine: Engine) -> None:
    api = Api(create_app(engine, dashboard=False), engine.create_api_key("ops"))
    document = api.get("/api/v1/openapi.json").json()
    operation = document["paths"]["/api/v1/workers"]["get"]
    assert operation["operationId"] == "list_workers"
    schema = operation["responses"]["200"]["content"]["application/json"]["schema"]
    assert schema == {"$ref": "#/components/schemas/WorkerList"}
    worker = document["components"]["schemas"]["Worker"]
    assert set(worker["properties"]) == {
        "id", "host", "pid", "pools", "workflows", "version", "started_at", "last_seen",
        "alive", "stopped_at", "waiting_for_calendars",
    }  # fmt: skip


def test_the_client_lists_the_same_workers_as_the_engine(engine: Engine) -> None:
    engine.workflow("report")(report)
    key = engine.create_api_key("client")
    with serving(create_app(engine, dashboard=False)) as url, Client(url, api_key=key) as client:
        assert client.list_workers() == []
        with engine.worker(threads=1):
            live = client.list_workers()
            assert live == engine.list_workers() and live[0].alive
            assert asyncio.run(client.list_workers_async()) == live
        assert client.list_workers() == engine.list_workers()
        assert not client.list_workers()[0].alive


def tickwork(*args: str) -> str:
    result = CliRunner().invoke(main, list(args), catch_exceptions=False, env={"COLUMNS": "250"})
    assert result.exit_code == 0, result.output
    return result.output


def test_tickwork_workers_lists_them_for_people_and_scripts(db_url: str) -> None:
    Engine(db_url).migrate()  # `tickwork workers` looks: it creates no database
    assert "No live worker" in tickwork("workers", "--database", db_url)
    assert json.loads(tickwork("workers", "--database", db_url, "--json")) == {"workers": []}
    with Engine(db_url) as engine:
        engine.workflow("report")(report)
        with engine.worker(threads=1):
            (live,) = engine.list_workers()
            table = tickwork("workers", "--database", db_url)
            listed = json.loads(tickwork("workers", "--database", db_url, "--json"))["workers"]
    header = next(line for line in table.splitlines() if "last seen" in line)
    for column in ("id", "host", "pid", "pools", "workflows", "version", "started", "alive"):
        assert column in header
    row = next(line for line in table.splitlines() if live.id in line)
    assert str(os.getpid()) in row and "report" in row and "yes" in row
    assert "No live worker" not in table
    assert listed == [json.loads(json.dumps(listed[0]))] and listed[0]["id"] == live.id
    assert listed[0]["alive"] is True and listed[0]["workflows"] == ["report"]
    stopped = tickwork("workers", "--database", db_url)
    assert "stopped" in next(line for line in stopped.splitlines() if live.id in line)
    assert "No live worker" in stopped


def test_gone_workers_are_forgotten_after_a_day(engine: Engine, clock: FakeClock) -> None:
    engine.workflow("report")(report)
    with engine.worker(threads=1):
        pass
    clock.advance(timedelta(days=1, milliseconds=1))
    assert engine.list_workers() == []
