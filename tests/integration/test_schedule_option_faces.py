"""A schedule option's bound is the spec's on every face (issue 30): the value at the bound
is registered, one past it is refused with a ConfigError naming the option, and nothing is
stored, whether through ``Engine.schedule``, ``Client.schedule``, the HTTP API or the config
file."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from tests.integration.test_api import Api, error_of
from tests.integration.test_client import server_url

from tickwork import Client, ConfigError, Context, Engine
from tickwork._spec import MAX_CATCHUP, MAX_KEY, MAX_PAUSE_AFTER_FAILURES
from tickwork.server import create_app

__all__ = ["server_url"]  # the fixture, shared with the Client's tests

#: (option, the last value it takes, the first it refuses)
EDGES: list[tuple[str, Any, Any]] = [
    ("catchup", MAX_CATCHUP, MAX_CATCHUP + 1),
    ("catchup", 1, 0),
    ("pause_after_failures", MAX_PAUSE_AFTER_FAILURES, MAX_PAUSE_AFTER_FAILURES + 1),
    ("pause_after_failures", 1, 0),
    ("key", "k" * MAX_KEY, "k" * (MAX_KEY + 1)),
    ("key", "a-b.c:d", "a/b"),
]
IDS = [f"{name}={str(bad)[:8]}" for name, _, bad in EDGES]


def job(ctx: Context) -> str:
    return "done"


@pytest.fixture
def app_engine(engine: Engine) -> Engine:
    engine.workflow("job")(job)
    return engine


def stored(engine: Engine) -> list[tuple[str, int | None, int | None]]:
    return [(s.key, s.catchup, s.pause_after_failures) for s in engine.list_schedules()]


@pytest.mark.parametrize(("name", "good", "bad"), EDGES, ids=IDS)
def test_engine_takes_the_bound_and_refuses_past_it(
    app_engine: Engine, name: str, good: Any, bad: Any
) -> None:
    with pytest.raises(ConfigError, match=name):
        app_engine.schedule("job", every="1h", **{"key": "k", name: bad})
    assert stored(app_engine) == []
    app_engine.schedule("job", every="1h", **{"key": "k", name: good})
    assert len(stored(app_engine)) == 1


@pytest.mark.parametrize(("name", "good", "bad"), EDGES, ids=IDS)
def test_the_api_takes_the_bound_and_refuses_past_it_with_the_specs_message(
    app_engine: Engine, name: str, good: Any, bad: Any
) -> None:
    api = Api(create_app(app_engine), app_engine.create_api_key("tests"))
    body = {"workflow": "job", "every": "1h", "key": "k"}
    refused = api.post("/api/v1/schedules", json={**body, name: bad})
    assert refused.status_code == 400, refused.text
    error = error_of(refused)
    assert error["code"] == "CONFIG_ERROR" and name in error["message"]
    with pytest.raises(ConfigError) as raised:
        app_engine.schedule("job", every="1h", **{"key": "k", name: bad})
    assert error["message"] == str(raised.value)
    assert stored(app_engine) == []
    taken = api.post("/api/v1/schedules", json={**body, name: good})
    assert taken.status_code == 200, taken.text
    assert len(stored(app_engine)) == 1


@pytest.mark.parametrize(("name", "good", "bad"), EDGES, ids=IDS)
def test_the_client_takes_the_bound_and_refuses_past_it(
    app_engine: Engine, server_url: str, name: str, good: Any, bad: Any
) -> None:
    with Client(server_url, api_key=app_engine.create_api_key("client"), timeout=10) as client:
        with pytest.raises(ConfigError, match=name):
            client.schedule("job", every="1h", **{"key": "k", name: bad})
        assert stored(app_engine) == []
        client.schedule("job", every="1h", **{"key": "k", name: good})
    assert len(stored(app_engine)) == 1


@pytest.mark.parametrize(("name", "good", "bad"), EDGES, ids=IDS)
def test_the_config_file_takes_the_bound_and_refuses_past_it(
    db_url: str, tmp_path: Path, name: str, good: Any, bad: Any
) -> None:
    path = tmp_path / "tickwork.toml"

    def write(value: Any) -> None:
        entry = {"workflow": "job", "every": "1h", "key": "k", name: value}
        lines = [f"{k} = {v!r}" if isinstance(v, int) else f'{k} = "{v}"' for k, v in entry.items()]
        path.write_text("[[schedules]]\n" + "\n".join(lines) + "\n")

    with Engine(db_url, config=path) as engine:
        engine.workflow("job")(job)
        write(bad)
        with pytest.raises(ConfigError, match=f"schedule 1: .*{name}"):
            engine.sync_schedules()
        assert stored(engine) == []
        write(good)
        engine.sync_schedules()
        assert len(stored(engine)) == 1
