"""A parent and its children on the faces (DESIGN §10): ``list_runs(parent=)`` on the
Engine, the API and the Client, ``tickwork runs list --parent`` and ``runs show`` (the
parent, the children by status, what a waiting parent waits for)."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import httpx
from click.testing import CliRunner

from tickwork import Context, Engine, RunStatus
from tickwork.cli import main
from tickwork.server import create_app
from tickwork.testing import FakeClock


def cli(*args: str) -> Any:
    return CliRunner(env={"COLUMNS": "200"}).invoke(main, list(args), catch_exceptions=False)


def get(engine: Engine, path: str) -> Any:
    app = create_app(engine, dashboard=False)
    key = engine.create_api_key(f"t{len(engine.list_api_keys())}")

    async def send() -> httpx.Response:
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://testserver") as c:
            return await c.get(path, headers={"Authorization": f"Bearer {key}"})

    response = asyncio.run(send())
    assert response.status_code == 200, response.text
    return response.json()


def album(engine: Engine) -> str:
    """A parent mapping over 5 children, 2 of them done and 3 asleep: its run id."""

    @engine.workflow("resize")
    def resize(ctx: Context, n: int) -> int:
        if n >= 2:
            ctx.sleep("slow", "1h")
        return n

    @engine.workflow("album")
    def album(ctx: Context, input: Any) -> Any:
        return ctx.map("resize", list(range(5)))

    handle = engine.start("album", run_id="a1")
    engine.run_until_idle()
    return handle.id


def test_the_children_of_a_run_are_listed_by_every_face(engine: Engine) -> None:
    parent = album(engine)
    ids = {f"{parent}/resize/{n}" for n in range(5)}
    assert {r.id for r in engine.list_runs(parent=parent)} == ids
    assert {r["id"] for r in get(engine, f"/api/v1/runs?parent={parent}")["runs"]} == ids
    assert [r.id for r in engine.list_runs(parent=parent, status="completed")] == [
        f"{parent}/resize/1", f"{parent}/resize/0",
    ]  # fmt: skip
    listed = cli("runs", "list", "--parent", parent, "--database", engine.url, "--json")
    assert {r["id"] for r in json.loads(listed.stdout)["runs"]} == ids
    assert engine.list_runs(parent="nobody") == []
    child = get(engine, f"/api/v1/runs/{parent}%2Fresize%2F0")
    assert child["parent_id"] == parent


def test_runs_show_says_the_children_and_what_the_parent_waits_for(
    engine: Engine, clock: FakeClock
) -> None:
    parent = album(engine)
    shown = cli("runs", "show", parent, "--database", engine.url)
    assert shown.exit_code == 0, shown.output
    assert "2 completed, 3 sleeping (tickwork runs list --parent a1)" in shown.stdout
    assert "waits for 3 of 5 runs of resize" in shown.stdout
    child = cli("runs", "show", f"{parent}/resize/4", "--database", engine.url).stdout
    assert "parent_id" in child and " a1" in child
    clock.advance("2h")
    engine.run_until_idle()
    assert engine.get_run(parent).status is RunStatus.COMPLETED  # type: ignore[union-attr]
    assert "5 completed" in cli("runs", "show", parent, "--database", engine.url).stdout
