"""A subscription's flow control (debounce, debounce_max, key, batch, batch_window) on
every face: ``SubscriptionInfo`` from Engine, the API's JSON and its OpenAPI schema,
``Client`` (sync and async), ``tickwork events subscriptions`` (table and ``--json``) and
the dashboard's Events and subscription pages (issue 31)."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from contextlib import ExitStack
from datetime import timedelta
from typing import Any

import pytest
from tests.browser import Browser
from tests.integration.test_dashboard_events import text
from tests.integration.test_event_faces import call, cli, client  # noqa: F401 (fixture)

from tickwork import Client, Context, Engine, On, SubscriptionInfo
from tickwork.server import create_app
from tickwork.server.openapi import openapi_document


@pytest.fixture
def app_engine(engine: Engine) -> Engine:
    @engine.workflow("sync", on=On("profile.changed", debounce="5m", key="user_id",
                                   debounce_max="1h"))  # fmt: skip
    def sync(ctx: Context, input: Any) -> Any:
        return input

    @engine.workflow("ingest", on=On("row.added", batch=100, batch_window="10s"))
    def ingest(ctx: Context, input: Any) -> Any:
        return input

    @engine.workflow("welcome", on=On("user.signed_up"))
    def welcome(ctx: Context, input: Any) -> None:
        return None

    engine.sync_subscriptions()
    return engine


def by_workflow(subs: list[SubscriptionInfo]) -> dict[str, SubscriptionInfo]:
    return {s.workflow: s for s in subs}


def test_list_subscriptions_says_each_ones_debounce_or_batch(app_engine: Engine) -> None:
    subs = by_workflow(app_engine.list_subscriptions())
    sync, ingest, welcome = subs["sync"], subs["ingest"], subs["welcome"]
    assert (sync.debounce, sync.debounce_max, sync.group_key) == (
        timedelta(minutes=5), timedelta(hours=1), "user_id"
    )  # fmt: skip
    assert (sync.batch, sync.batch_window) == (None, None)
    assert (ingest.batch, ingest.batch_window) == (100, timedelta(seconds=10))
    assert (ingest.debounce, ingest.debounce_max, ingest.group_key) == (None, None, None)
    plain = (welcome.debounce, welcome.debounce_max, welcome.group_key, welcome.batch,
             welcome.batch_window)  # fmt: skip
    assert plain == (None,) * 5


def test_the_api_answers_the_flow_settings_as_its_openapi_schema_says(
    app_engine: Engine,
) -> None:
    answer = call(app_engine, "GET", "/api/v1/subscriptions")
    assert answer.status_code == 200
    subs = {s["workflow"]: s for s in answer.json()["subscriptions"]}
    flow = ("debounce", "debounce_max", "group_key", "batch", "batch_window")
    assert [subs["sync"][f] for f in flow] == ["5m", "1h", "user_id", None, None]
    assert [subs["ingest"][f] for f in flow] == [None, None, None, 100, "10s"]
    assert [subs["welcome"][f] for f in flow] == [None] * 5
    schema = openapi_document()["components"]["schemas"]["Subscription"]
    assert set(flow) <= set(schema["properties"]) and set(flow) <= set(schema["required"])


def test_the_client_gives_the_engines_flow_settings_sync_and_async(
    app_engine: Engine,
    client: Client,  # noqa: F811
) -> None:
    expected = app_engine.list_subscriptions()
    assert client.list_subscriptions() == expected
    assert asyncio.run(client.list_subscriptions_async()) == expected
    assert by_workflow(expected)["sync"].debounce == timedelta(minutes=5)


def test_tickwork_events_subscriptions_prints_each_flow(app_engine: Engine) -> None:
    url = app_engine.url
    table = cli("events", "subscriptions", "--database", url)
    assert table.exit_code == 0, table.output
    assert "debounce 5 min (at most 1 h) by user_id" in table.stdout
    assert "batch of 100 within 10 s" in table.stdout
    assert "a run per event" in table.stdout
    as_json = json.loads(cli("events", "subscriptions", "--json", "--database", url).stdout)
    assert as_json == call(app_engine, "GET", "/api/v1/subscriptions").json()


def test_tickwork_events_subscriptions_says_when_there_are_none(engine: Engine) -> None:
    engine.migrate()  # the database exists, with no subscription
    empty = cli("events", "subscriptions", "--database", engine.url)
    assert empty.exit_code == 0 and "No subscriptions" in empty.stdout
    listed = json.loads(cli("events", "subscriptions", "--json", "--database", engine.url).stdout)
    assert listed == {"subscriptions": []}


@pytest.fixture
def browser(app_engine: Engine) -> Iterator[Browser]:
    with ExitStack() as stack:
        browser = Browser(create_app(app_engine), stack)
        assert browser.login(app_engine.create_api_key("dashboard")).status_code == 303
        yield browser


def test_the_dashboard_shows_each_subscriptions_flow(app_engine: Engine, browser: Browser) -> None:
    events = text(browser.get("/events"))
    assert "debounce 5 min (at most 1 h) by user_id" in events
    assert "batch of 100 within 10 s" in events and "a run per event" in events
    sync = by_workflow(app_engine.list_subscriptions())["sync"]
    page = text(browser.get("/subscription", params={"key": sync.key}))
    assert "start workflow sync : debounce 5 min (at most 1 h) by user_id" in page
