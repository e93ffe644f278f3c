"""``/metrics`` after real runs and firings: the same figures as recounting every row gave
before counters, and the same again after those rows are deleted."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from prometheus_client.parser import text_string_to_metric_families
from tests.pg import delete_rows
from tests.recount import Figures, figures, recount

from tickwork import Context, Engine, Retry
from tickwork._values.buckets import LATENESS_MS, RUN_MS, STEP_MS, seconds
from tickwork.server.metrics import metrics_registry, render_metrics
from tickwork.testing import FakeClock

Samples = dict[tuple[str, tuple[tuple[str, str], ...]], float]
#: gauges read from the schedules and workers as they are now, not counted from events
NOT_COUNTED = {
    "tickwork_schedules",
    "tickwork_workers",
    "tickwork_schedules_overdue",
    "tickwork_schedule_overdue_seconds",
}

HISTOGRAMS = {
    "lateness": ("tickwork_firing_lateness_seconds", ("workflow",), LATENESS_MS),
    "run_durations": ("tickwork_run_duration_seconds", ("workflow", "status"), RUN_MS),
    "step_durations": ("tickwork_step_duration_seconds", ("status",), STEP_MS),
}


def scrape(engine: Engine) -> Samples:
    text = render_metrics(metrics_registry(engine)).decode()
    return {
        (sample.name, tuple(sorted(sample.labels.items()))): sample.value
        for family in text_string_to_metric_families(text)
        for sample in family.samples
        if sample.name not in NOT_COUNTED
    }


def samples_of(found: Figures) -> Samples:
    """The samples a scrape shows for figures in ``recount``'s form."""
    samples: Samples = {}
    for (workflow, status), count in found["runs"].items():
        labels = (("status", status), ("workflow", workflow))
        samples[("tickwork_runs", labels)] = count
    waiting = (n for (_, status), n in found["runs"].items() if status == "waiting")
    samples[("tickwork_runs_waiting", ())] = sum(waiting)
    for decision, count in found["firings"].items():
        samples[("tickwork_schedule_firings_total", (("decision", decision),))] = count
    for figure, (name, names, bounds) in HISTOGRAMS.items():
        for key, values in found[figure].items():
            labels = tuple(zip(names, key if isinstance(key, tuple) else (key,), strict=True))
            *cumulative, total = values
            les = [*map(repr, seconds(bounds)), "+Inf"]
            for bound, count in zip(les, cumulative, strict=True):
                le = tuple(sorted((*labels, ("le", bound))))
                samples[(f"{name}_bucket", le)] = count
            samples[(f"{name}_count", tuple(sorted(labels)))] = cumulative[-1]
            samples[(f"{name}_sum", tuple(sorted(labels)))] = total / 1000
    return samples


@pytest.fixture
def busy(engine: Engine, clock: FakeClock) -> Engine:
    """An engine after steps, sleeps, failures, cancellations, firings, drops, triggers."""

    def work(ms: int) -> int:
        clock.advance(timedelta(milliseconds=ms))
        return ms

    def broken() -> None:
        clock.advance(timedelta(milliseconds=70))
        raise ValueError("no")

    @engine.workflow()
    def three(ctx: Context, input: dict[str, int]) -> int:
        total = ctx.step("one", work, input["n"])
        total += ctx.step("two", work, 10 * input["n"])
        ctx.sleep("nap", "30s")
        return total + int(ctx.step("three", work, 1))

    @engine.workflow(retry=None)
    def failing(ctx: Context) -> None:
        ctx.step("broken", broken)

    @engine.workflow()
    def napping(ctx: Context) -> None:
        ctx.step("first", work, 3)
        ctx.sleep("long", "1d")

    for n in range(1, 13):
        engine.start("three", {"n": n * 7})
    engine.start("failing")
    engine.start("napping", run_id="napper")
    engine.start("failing", run_id="never")
    assert engine.cancel("never")  # pending: never started
    engine.schedule("three", {"n": 1}, every="1m", key="often", overlap="skip", catchup=1)
    engine.schedule("napping", every="1h", key="hourly")
    clock.advance("1m")
    clock.advance("1500ms")
    engine.tick()  # "often" fires 1.5 s late
    engine.run_until_idle()
    clock.advance("10m")  # "often" misses nine occurrences: dropped, one started
    engine.tick()
    engine.trigger("hourly")
    engine.run_until_idle()
    clock.advance("40s")  # the sleeps end
    engine.run_until_idle()
    assert engine.cancel("napper")  # sleeping: ended with its duration
    return engine


def test_a_scrape_shows_what_recounting_every_row_showed(busy: Engine) -> None:
    before = recount(busy.url)
    assert figures(busy.console.stats()) == before
    assert before["firings"]["dropped_catchup"] == 9 and before["lateness"]
    assert {status for _, status in before["runs"]} >= {"completed", "failed", "cancelled"}
    assert scrape(busy) == samples_of(before)


def test_a_scrape_shows_the_same_after_ended_runs_and_history_are_deleted(
    busy: Engine,
) -> None:
    before = scrape(busy)
    for table in ("tickwork_steps", "tickwork_schedule_history", "tickwork_queue", "tickwork_runs"):
        delete_rows(busy.url, table)
    after = scrape(busy)
    unfinished = {"pending", "running", "sleeping", "waiting"}

    def ended(samples: Samples) -> Samples:
        return {
            key: value
            for key, value in samples.items()
            if key[0] != "tickwork_runs" or dict(key[1])["status"] not in unfinished
        }

    assert ended(after) == ended(before) == after
    assert any(key[0] == "tickwork_runs" for key in after)


def test_each_failed_try_of_a_step_is_counted_where_recounting_saw_the_last(
    engine: Engine, clock: FakeClock
) -> None:
    tries: list[int] = []

    def flaky() -> int:
        tries.append(1)
        clock.advance(timedelta(milliseconds=20))
        if len(tries) < 3:
            raise ValueError("not yet")
        return len(tries)

    @engine.workflow()
    def retrying(ctx: Context) -> int:
        return int(ctx.step("flaky", flaky, retry=Retry(max_attempts=3, backoff="1s")))

    engine.start("retrying")
    for _ in range(3):
        engine.run_until_idle()
        clock.advance("10s")
    assert len(tries) == 3
    step_durations: dict[str, Any] = figures(engine.console.stats())["step_durations"]
    assert {status: values[-2] for status, values in step_durations.items()} == {
        "failed": 2,
        "completed": 1,
    }
    assert recount(engine.url)["step_durations"].keys() == {"completed"}  # the last try only
