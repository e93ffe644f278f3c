"""Run by ``test_a_new_option_is_one_field`` against a copy of tickwork whose ``ScheduleSpec``
has one more field, ``colour`` (a name of 1 to 10 characters), and nothing else edited.

It registers schedules with the option through each face and prints, as JSON, what each
face did: the option as stored in the schedule's definition, the revision, or the error.
"""

from __future__ import annotations

import asyncio
import inspect
import json
import sqlite3
import sys
import threading
import time
from pathlib import Path
from typing import Any

import httpx
import uvicorn

import tickwork
from tickwork import Client, ConfigError, Context, Engine, Every
from tickwork.server import create_app

folder = Path(sys.argv[1])
database = folder / "t.db"
said: dict[str, Any] = {"tickwork": tickwork.__file__}


def stored(key: str) -> tuple[Any, int] | None:
    """The option as the schedule's definition keeps it, and the schedule's revision."""
    with sqlite3.connect(database) as connection:
        row = connection.execute(
            "SELECT definition, revision FROM tickwork_schedules WHERE key = ?", (key,)
        ).fetchone()
    if row is None:
        return None
    return json.loads(row[0]).get("options", {}).get("colour"), row[1]


def refused(call: Any) -> str:
    try:
        call()
    except ConfigError as exc:
        return f"ConfigError: {exc}"
    return "accepted"


def job(ctx: Context) -> str:
    return "done"


config = folder / "tickwork.toml"
config.write_text(
    '[[schedules]]\nworkflow = "job"\nevery = "2h"\nkey = "config"\ncolour = "teal"\n'
)
engine = Engine(f"sqlite:///{database}", config=config)
engine.workflow("job", schedule=Every("1h", key="declared", colour="green"))(job)
said["signature"] = "colour" in inspect.signature(Engine.schedule).parameters

# Engine.schedule: stored, unchanged when the same, a new revision when changed, bounded
engine.schedule("job", every="1h", key="engine", colour="red")
said["engine"] = [stored("engine")]
engine.schedule("job", every="1h", key="engine", colour="red")
said["engine"].append(stored("engine"))
engine.schedule("job", every="1h", key="engine", colour="blue")
said["engine"].append(stored("engine"))
said["engine_refused"] = refused(
    lambda: engine.schedule("job", every="1h", key="long", colour="x" * 11)
)
said["engine_refused_stored"] = stored("long")

# a declaration beside the workflow and the config file
engine.sync_schedules()
said["declared"] = stored("declared")
said["config"] = stored("config")
bad_config = folder / "bad.toml"
bad_config.write_text('[[schedules]]\nworkflow = "job"\nevery = "2h"\ncolour = 5\n')
said["config_refused"] = refused(
    lambda: Engine(f"sqlite:///{database}", config=bad_config).sync_schedules()
)

# the HTTP API and its OpenAPI document
app = create_app(engine, dashboard=False)
headers = {"Authorization": f"Bearer {engine.create_api_key('proof')}"}


async def post(body: dict[str, Any]) -> httpx.Response:
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://testserver") as http:
        if not body:
            return await http.get("/api/v1/openapi.json", headers=headers)
        return await http.post("/api/v1/schedules", json=body, headers=headers)


body = {"workflow": "job", "every": "1h", "key": "http"}
said["http"] = [asyncio.run(post({**body, "colour": "navy"})).status_code, stored("http")]
said["http_refused"] = asyncio.run(post({**body, "key": "http2", "colour": "x" * 11})).status_code
said["http_refused_stored"] = stored("http2")
document = asyncio.run(post({})).json()
said["openapi"] = document["components"]["schemas"]["ScheduleCreate"]["properties"]["colour"]

# the Client, against the app served on a free port
server = uvicorn.Server(
    uvicorn.Config(app, host="127.0.0.1", port=0, log_level="warning", lifespan="off")
)
thread = threading.Thread(target=server.run, daemon=True)
thread.start()
while not server.started:
    time.sleep(0.01)
url = f"http://127.0.0.1:{server.servers[0].sockets[0].getsockname()[1]}"
with Client(url, api_key=engine.create_api_key("client"), timeout=10) as client:
    client.schedule("job", every="1h", key="client", colour="plum")
    said["client"] = stored("client")
    said["client_refused"] = refused(
        lambda: client.schedule("job", every="1h", key="client2", colour="x" * 11)
    )
server.should_exit = True
thread.join(10)
print(json.dumps(said))
