"""The Schedules page's run strips read every schedule's recent runs at once
(``Engine.console.recent_runs_by_schedule``), not one ``list_runs`` per schedule: the page and its
live refresh (every 2.5 s) cost one read however many schedules there are."""

from __future__ import annotations

import re
from collections.abc import Iterator
from contextlib import ExitStack
from typing import Any

import pytest
from tests.browser import Browser

from tickwork import Context, Engine
from tickwork.errors import ConfigError
from tickwork.server import create_app
from tickwork.testing import FakeClock


@pytest.fixture
def fired(engine: Engine, clock: FakeClock) -> Engine:
    @engine.workflow("report")
    def report(ctx: Context) -> str:
        return "ok"

    for n in range(5):
        engine.schedule("report", None, every="1m", key=f"s{n}")
    engine.schedule("report", None, every="1m", key="never-ran", paused=True)
    for _ in range(33):
        clock.advance("1m")
        engine.tick()
        engine.run_until_idle()
    return engine


@pytest.fixture
def browser(fired: Engine) -> Iterator[Browser]:
    with ExitStack() as stack:
        browser = Browser(create_app(fired), stack)
        assert browser.login(fired.create_api_key("strips")).status_code == 303
        yield browser


def test_recent_runs_by_schedule_are_each_schedules_list_runs(fired: Engine) -> None:
    keys = ["s0", "s3", "never-ran", "unknown"]
    found = fired.console.recent_runs_by_schedule(keys, limit=30)
    assert list(found) == keys
    for key in keys:
        assert found[key] == fired.list_runs(schedule_key=key, limit=30), key
    assert len(found["s0"]) == 30 and found["never-ran"] == found["unknown"] == []


@pytest.mark.parametrize(
    ("keys", "limit"), [("s0", 30), ([1], 30), (["s0"], 0), (["s0"], True), (["s0"], "30")]
)
def test_recent_runs_by_schedule_refuses_bad_arguments(
    fired: Engine, keys: Any, limit: Any
) -> None:
    with pytest.raises(ConfigError):
        fired.console.recent_runs_by_schedule(keys, limit=limit)


def test_the_schedules_page_draws_every_strip_without_a_list_runs_per_schedule(
    browser: Browser, fired: Engine, monkeypatch: pytest.MonkeyPatch
) -> None:
    def no_list_runs(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("the Schedules page read runs one schedule at a time")

    reads: list[list[str]] = []
    read_all = fired.console.recent_runs_by_schedule

    def recording(keys: list[str], limit: int = 30) -> Any:
        reads.append(list(keys))
        return read_all(keys, limit=limit)

    monkeypatch.setattr(fired, "list_runs", no_list_runs)
    monkeypatch.setattr(fired.console, "recent_runs_by_schedule", recording)
    page = browser.get("/").text
    strips = re.findall(r'<svg class="chart strip[ "].*?</svg>', page, re.S)
    assert [strip.count("<a ") for strip in strips] == [30] * 5
    assert reads == [["s0", "s1", "s2", "s3", "s4"]]  # one read; a schedule never run not asked
