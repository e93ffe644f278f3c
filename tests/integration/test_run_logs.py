"""The log lines a person on call reads (DESIGN §8, Logs): a run's whole life on
``tickwork.runs`` and every firing decision other than a plain start on
``tickwork.firing``, each line naming its run or schedule in its text and in its fields.
"""

from __future__ import annotations

import io
import json
import logging
from collections.abc import Iterator

import pytest

from tickwork import Context, Engine, Retry, RunStatus
from tickwork.cli._logging import JsonFormatter
from tickwork.testing import FakeClock

LEASE = "30s"


@pytest.fixture
def logs(caplog: pytest.LogCaptureFixture) -> pytest.LogCaptureFixture:
    caplog.set_level(logging.DEBUG, logger="tickwork")
    return caplog


def life(logs: pytest.LogCaptureFixture, run_id: str) -> list[tuple[str, str]]:
    """(level, message) of the run's lines on ``tickwork.runs`` at INFO and above."""
    return [
        (r.levelname, r.getMessage())
        for r in logs.records
        if r.name == "tickwork.runs" and r.levelno >= logging.INFO and r.run_id == run_id  # type: ignore[attr-defined]
    ]


def decisions(logs: pytest.LogCaptureFixture) -> list[logging.LogRecord]:
    return [r for r in logs.records if r.name == "tickwork.firing" and r.levelno >= logging.INFO]


def test_a_completed_run_logs_started_and_completed_with_its_duration(
    engine: Engine, clock: FakeClock, logs: pytest.LogCaptureFixture
) -> None:
    def work() -> str:
        clock.advance("2s")
        return "done"

    @engine.workflow()
    def report(ctx: Context) -> str:
        return ctx.step("work", work)

    run_id = engine.start(report).id
    engine.run_until_idle()
    assert life(logs, run_id) == [
        ("INFO", f"run {run_id} started: workflow report"),
        ("INFO", f"run {run_id} completed in 2 s"),
    ]
    (completed,) = [r for r in logs.records if "completed" in r.getMessage()]
    fields = (completed.run_id, completed.workflow, completed.attempt)  # type: ignore[attr-defined]
    assert fields == (run_id, "report", 1)


def test_a_step_that_fails_once_logs_its_error_and_its_retry(
    engine: Engine, clock: FakeClock, logs: pytest.LogCaptureFixture
) -> None:
    tries: list[int] = []

    def flaky() -> str:
        tries.append(1)
        if len(tries) == 1:
            raise RuntimeError("connection reset")
        return "ok"

    @engine.workflow()
    def fetch(ctx: Context) -> str:
        return ctx.step("fetch", flaky, retry=Retry(max_attempts=3, backoff="10s"))

    run_id = engine.start(fetch).id
    engine.run_until_idle()
    clock.advance("10s")
    engine.run_until_idle()
    assert engine.get_run(run_id).status is RunStatus.COMPLETED  # type: ignore[union-attr]
    assert life(logs, run_id) == [
        ("INFO", f"run {run_id} started: workflow fetch"),
        (
            "WARNING",
            f"run {run_id} step 'fetch' try 1 failed: RuntimeError: connection reset; "
            "retry in 10 s",
        ),
        ("INFO", f"run {run_id} resumed (attempt 1)"),
        ("INFO", f"run {run_id} completed in 10 s"),
    ]


def test_a_sleeping_run_logs_until_when(
    engine: Engine, clock: FakeClock, logs: pytest.LogCaptureFixture
) -> None:
    @engine.workflow()
    def nap(ctx: Context) -> None:
        ctx.sleep("nap", "5m")

    run_id = engine.start(nap).id
    engine.run_until_idle()
    assert life(logs, run_id)[-1] == ("INFO", f"run {run_id} sleeping until 2026-03-01T12:05:00Z")


def test_a_run_resumed_in_the_millisecond_it_started_logs_started_once(
    engine: Engine, clock: FakeClock, logs: pytest.LogCaptureFixture
) -> None:
    # The event came first: the wait finds it, the run is stored pending and claimed
    # again in the same millisecond. One start, one end: no "resumed" under "started".
    @engine.workflow()
    def waiter(ctx: Context) -> str:
        ctx.wait_for_event("go")
        return "done"

    run_id = engine.start(waiter).id
    engine.emit("go")
    engine.run_until_idle()
    assert life(logs, run_id) == [
        ("INFO", f"run {run_id} started: workflow waiter"),
        ("INFO", f"run {run_id} completed in 0 ms"),
    ]


def test_a_run_that_fails_for_good_logs_an_error_with_its_traceback(
    engine: Engine, clock: FakeClock, logs: pytest.LogCaptureFixture
) -> None:
    @engine.workflow(retry=Retry(max_attempts=2, backoff="1s"))
    def doomed(ctx: Context) -> None:
        raise KeyError("missing")

    run_id = engine.start(doomed).id
    engine.run_until_idle()
    clock.advance("1s")
    engine.run_until_idle()
    assert life(logs, run_id) == [
        ("INFO", f"run {run_id} started: workflow doomed"),
        ("WARNING", f"run {run_id} attempt 1 failed: KeyError: 'missing'; retry in 1 s"),
        ("INFO", f"run {run_id} resumed (attempt 2)"),
        ("ERROR", f"run {run_id} failed: KeyError: 'missing'"),
    ]
    (failed,) = [r for r in logs.records if r.levelname == "ERROR"]
    assert failed.exc_info is not None and isinstance(failed.exc_info[1], KeyError)
    assert failed.attempt == 2  # type: ignore[attr-defined]


def test_a_run_cancelled_while_running_logs_cancelled(
    engine: Engine, logs: pytest.LogCaptureFixture
) -> None:
    @engine.workflow()
    def long(ctx: Context) -> None:
        ctx.step("first", lambda: engine.cancel(ctx.run_id) and None)
        ctx.step("second", lambda: None)

    run_id = engine.start(long).id
    engine.run_until_idle()
    assert engine.get_run(run_id).status is RunStatus.CANCELLED  # type: ignore[union-attr]
    assert life(logs, run_id)[-1] == ("INFO", f"run {run_id} cancelled")


def test_a_lost_lease_and_the_take_over_are_logged_as_warnings(
    engine: Engine, clock: FakeClock, db_url: str, logs: pytest.LogCaptureFixture
) -> None:
    """A worker stalls in a step past its lease; another worker takes the run over and
    finishes it; the first then finds its lease gone."""
    other = Engine(db_url, clock=clock, lease=LEASE)
    stalled: list[bool] = []

    def slow() -> str:
        if not stalled:
            stalled.append(True)
            clock.advance("31s")  # the lease expires while this worker is stuck here
            assert other.run_until_idle() == 1  # the other worker takes the run over
        return "done"

    for each in (engine, other):
        each.workflow("slow")(lambda ctx: ctx.step("slow", slow))
    with other:
        run_id = engine.start("slow").id
        engine.run_until_idle()
    lines = life(logs, run_id)
    assert (
        "WARNING",
        f"run {run_id} taken over from a lost worker (attempt 1; 1 lost in a row)",
    ) in lines
    assert lines[-1] == ("WARNING", f"run {run_id} lost its lease: left to the worker that took it")


def test_skipped_for_overlap_is_logged_once_committed_with_key_and_occurrence(
    engine: Engine, clock: FakeClock, logs: pytest.LogCaptureFixture
) -> None:
    @engine.workflow()
    def job(ctx: Context) -> None:
        pass

    engine.schedule(job, every="1m", key="k", overlap="skip")
    clock.advance("1m")
    assert len(engine.tick()) == 1  # a plain start: no line at INFO
    assert decisions(logs) == []
    clock.advance("1m")
    assert engine.tick() == []
    (skipped,) = decisions(logs)
    assert skipped.getMessage() == (
        "schedule k: occurrence 2026-03-01T12:02:00Z skipped_overlap: overlap=skip: "
        "earlier run k@2026-03-01T12:01:00.000Z is unfinished"
    )
    fields = (skipped.key, skipped.occurrence, skipped.decision)  # type: ignore[attr-defined]
    assert fields == ("k", "2026-03-01T12:02:00Z", "skipped_overlap")


def test_dropped_by_catchup_is_logged_with_its_count(
    engine: Engine, clock: FakeClock, logs: pytest.LogCaptureFixture
) -> None:
    @engine.workflow()
    def job(ctx: Context) -> None:
        pass

    engine.schedule(job, every="1m", key="k", catchup=1)
    clock.advance("5m")
    assert len(engine.tick()) == 1
    (dropped,) = decisions(logs)
    assert dropped.getMessage().startswith(
        "schedule k: 4 occurrences 2026-03-01T12:01:00Z to 2026-03-01T12:04:00Z dropped_catchup: "
    )
    assert (dropped.key, dropped.count) == ("k", 4)  # type: ignore[attr-defined]


def test_the_tickwork_logger_governs_every_line(
    engine: Engine, logs: pytest.LogCaptureFixture
) -> None:
    """A user's ``logging.getLogger("tickwork")`` setup decides: at WARNING, a run that
    fails says so and nothing of its start."""
    logs.set_level(logging.WARNING, logger="tickwork")

    @engine.workflow()
    def broken(ctx: Context) -> None:
        raise ValueError("bad")

    run_id = engine.start(broken).id
    engine.run_until_idle()
    lines = [(r.name, r.levelname) for r in logs.records if r.name.startswith("tickwork")]
    assert lines == [("tickwork.runs", "ERROR")]
    assert life(logs, run_id) == [("ERROR", f"run {run_id} failed: ValueError: bad")]


@pytest.fixture
def json_lines() -> Iterator[io.StringIO]:
    """What ``--log-format json`` prints of the ``tickwork`` loggers."""
    stream = io.StringIO()
    handler = logging.StreamHandler(stream)
    handler.setFormatter(JsonFormatter())
    logger = logging.getLogger("tickwork")
    logger.addHandler(handler)
    level = logger.level
    logger.setLevel(logging.INFO)
    try:
        yield stream
    finally:
        logger.removeHandler(handler)
        logger.setLevel(level)


def test_json_lines_are_one_object_per_record_with_the_run_id(
    engine: Engine, json_lines: io.StringIO
) -> None:
    @engine.workflow()
    def broken(ctx: Context) -> None:
        raise ValueError("bad\nvalue")

    run_id = engine.start(broken).id
    engine.run_until_idle()
    records = [json.loads(line) for line in json_lines.getvalue().splitlines()]
    assert [(r["level"], r["logger"], r["run_id"]) for r in records] == [
        ("INFO", "tickwork.runs", run_id),
        ("ERROR", "tickwork.runs", run_id),
    ]
    failed = records[-1]
    assert failed["message"] == f"run {run_id} failed: ValueError: bad\nvalue"
    assert (failed["workflow"], failed["attempt"]) == ("broken", 1)
    assert "Traceback" in failed["exception"] and "ValueError: bad" in failed["exception"]
    assert failed["time"].endswith("Z")
