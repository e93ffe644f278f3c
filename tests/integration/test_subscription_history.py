"""A debounced or batched subscription's decisions, through every face (DESIGN §9:
"visible in the history like a schedule's decisions"): Engine with a FakeClock, the JSON
API, ``Client``, ``tickwork events history`` and the dashboard's subscription page."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from contextlib import ExitStack
from typing import Any

import pytest
from tests.browser import Browser
from tests.integration.test_dashboard_events import text
from tests.integration.test_event_faces import call, cli, client  # noqa: F401 (fixture)

from tickwork import Client, ConfigError, Context, Engine, FlowDecision, On, SubscriptionDecision
from tickwork.server import create_app
from tickwork.testing import FakeClock


@pytest.fixture
def app_engine(engine: Engine) -> Engine:
    @engine.workflow("sync", on=On("profile.changed", debounce="5m", key="user_id"))
    def sync(ctx: Context, input: Any) -> Any:
        return input

    return engine


def sync_key(engine: Engine) -> str:
    (sub,) = engine.list_subscriptions()
    return sub.key


def debounce_one_user(engine: Engine, clock: FakeClock) -> str:
    """Two events of user 1, four minutes apart, then five quiet minutes: one run."""
    engine.emit("profile.changed", {"user_id": 1, "v": 1}, id="v1")
    clock.advance("4m")
    engine.emit("profile.changed", {"user_id": 1, "v": 2}, id="v2")
    clock.advance("5m")
    (run_id,) = engine.tick()
    return run_id


def test_the_engine_answers_why_a_debounced_run_started_and_with_what(
    app_engine: Engine, clock: FakeClock
) -> None:
    run_id = debounce_one_user(app_engine, clock)
    started, extended, opened = app_engine.subscription_history(sync_key(app_engine))
    assert [e.decision for e in (opened, extended, started)] == [
        FlowDecision.DEBOUNCED, FlowDecision.DEBOUNCED, FlowDecision.STARTED
    ]  # fmt: skip
    assert (opened.event_id, extended.event_id, started.run_id) == ("v1", "v2", run_id)
    assert extended.due_at == started.decided_at  # the window it set is when it fired
    assert started.group == 1 and started.count == 2
    assert started.reason == "no event for 5 min: started with the last of 2 events"
    assert app_engine.subscription_history(sync_key(app_engine), limit=1) == [started]


def test_a_plain_subscription_or_an_unknown_key_has_no_decisions(engine: Engine) -> None:
    @engine.workflow("welcome", on=On("user.signed_up"))
    def welcome(ctx: Context, input: Any) -> None:
        return None

    engine.emit("user.signed_up", {})
    assert engine.subscription_history(engine.list_subscriptions()[0].key) == []
    assert engine.subscription_history("nope") == []


@pytest.mark.parametrize("args", [("",), ("k", 0), ("k", 10_001), ("bad\x00key",)])
def test_a_bad_key_or_limit_is_refused(engine: Engine, args: tuple[Any, ...]) -> None:
    with pytest.raises(ConfigError):
        engine.subscription_history(*args)


def test_the_api_and_the_client_give_the_engines_history(
    app_engine: Engine,
    clock: FakeClock,
    client: Client,  # noqa: F811
) -> None:
    debounce_one_user(app_engine, clock)
    key = sync_key(app_engine)
    expected = app_engine.subscription_history(key)
    assert client.subscription_history(key) == expected
    assert asyncio.run(client.subscription_history_async(key, limit=1)) == expected[:1]
    assert client.subscription_history("nope") == []
    answer = call(app_engine, "GET", f"/api/v1/subscriptions/{key}/history", params={"limit": 2})
    assert answer.status_code == 200
    first = answer.json()["history"][0]
    assert (first["decision"], first["group"], first["count"]) == ("started", 1, 2)
    bad = call(app_engine, "GET", f"/api/v1/subscriptions/{key}/history", params={"limit": 0})
    assert bad.status_code == 400


def test_tickwork_events_history_prints_the_decisions(app_engine: Engine, clock: FakeClock) -> None:
    run_id = debounce_one_user(app_engine, clock)
    key, url = sync_key(app_engine), app_engine.url
    table = cli("events", "history", key, "--database", url)
    assert table.exit_code == 0, table.output
    assert "no event for 5 min" in table.stdout and run_id in table.stdout
    as_json = json.loads(cli("events", "history", key, "--json", "--database", url).stdout)
    assert [e["decision"] for e in as_json["history"]] == ["started", "debounced", "debounced"]
    none = cli("events", "history", "nope", "--database", url)
    assert none.exit_code == 0 and "No decisions" in none.stdout


@pytest.fixture
def browser(app_engine: Engine) -> Iterator[Browser]:
    with ExitStack() as stack:
        browser = Browser(create_app(app_engine), stack)
        assert browser.login(app_engine.create_api_key("dashboard")).status_code == 303
        yield browser


def test_the_dashboard_lists_subscriptions_and_shows_a_subscriptions_decisions(
    app_engine: Engine, clock: FakeClock, browser: Browser
) -> None:
    run_id = debounce_one_user(app_engine, clock)
    key = sync_key(app_engine)
    events = text(browser.get("/events"))
    assert key in events and "profile.changed" in events
    page = browser.get("/subscription", params={"key": key})
    assert page.status_code == 200
    shown = text(page)
    assert "no event for 5 min: started with the last of 2 events" in shown
    assert "extended the debounce window" in shown and run_id in shown
    assert browser.get("/subscription", params={"key": "nope"}).status_code == 404


def test_subscription_decision_is_the_public_type(app_engine: Engine, clock: FakeClock) -> None:
    debounce_one_user(app_engine, clock)
    assert all(
        isinstance(e, SubscriptionDecision)
        for e in app_engine.subscription_history(sync_key(app_engine))
    )
