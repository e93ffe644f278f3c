"""Retention through the engine: full passes, the worker's background pruning, the CLI,
and what pruning means for idempotency (DESIGN §7), on both backends."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from click.testing import CliRunner, Result

from tickwork import ConfigError, Context, Engine, RunStatus
from tickwork._rules.retention import FIRST_PASS_MS, MOST_ROWS_PER_S, PASS_INTERVAL_MS
from tickwork.cli import main
from tickwork.errors import StoreError
from tickwork.testing import FakeClock


@pytest.fixture
def short(db_url: str, clock: FakeClock) -> Iterator[Engine]:
    """An engine that keeps ended runs for an hour."""
    with Engine(db_url, clock=clock, lease="30s", retention="1h") as engine:
        yield engine


def add_stepped(engine: Engine, name: str = "stepped", **options: Any) -> None:
    @engine.workflow(name, **options)
    def stepped(ctx: Context, input: int) -> int:
        ctx.step("one", lambda: input)
        return ctx.step("two", lambda: input * 2)


def run_many(engine: Engine, workflow: str, count: int, prefix: str = "r") -> list[str]:
    ids = [engine.start(workflow, n, run_id=f"{prefix}{n:04}").id for n in range(count)]
    assert engine.run_until_idle() == count
    return ids


def until(condition: Any, seconds: float = 10.0) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.02)
    return bool(condition())


def test_engine_prune_removes_what_retention_no_longer_keeps_in_one_pass(
    short: Engine, clock: FakeClock
) -> None:
    add_stepped(short)
    old = run_many(short, "stepped", 340)  # 1,020 rows: more than one batch
    clock.advance("61m")
    (recent,) = run_many(short, "stepped", 1, prefix="new")
    unfinished = short.start("stepped", 1, run_id="later", delay="1d").id

    assert short.prune() == 340 * 3

    assert all(short.get_run(run_id) is None for run_id in old[::50])
    assert short.list_steps(old[0]) == []
    assert {r.id for r in short.list_runs()} == {recent, unfinished}
    assert len(short.list_steps(recent)) == 2
    assert short.prune() == 0


def test_counters_read_before_and_after_a_prune_never_go_down(
    short: Engine, clock: FakeClock
) -> None:
    """/metrics counts events as they happen: pruning the rows they came from takes
    nothing back (a counter that fell would read as a reset to Prometheus)."""
    add_stepped(short)
    short.schedule("stepped", 7, every="10m", key="every-10m")
    clock.advance("10m")
    assert len(short.tick()) == 1 and short.run_until_idle() == 1
    run_many(short, "stepped", 20)
    before = short.console.stats()
    clock.advance("2h")
    assert short.prune() > 0
    after = short.console.stats()
    ended = {k: v for k, v in before.runs.items() if k[1] in ("completed", "failed")}
    assert ended and all(after.runs[k] >= v for k, v in ended.items())
    assert after.firings == before.firings and sum(before.firings.values()) > 0
    for name in ("lateness", "run_durations", "step_durations"):
        for label, histogram in getattr(before, name).items():
            assert getattr(after, name)[label].count >= histogram.count > 0


def test_a_workflows_retention_overrides_the_engines(short: Engine, clock: FakeClock) -> None:
    add_stepped(short, "brief", retention="10m")
    add_stepped(short, "lasting", retention="2d")
    add_stepped(short, "plain")
    for name in ("brief", "lasting", "plain"):
        run_many(short, name, 2, prefix=name)
    clock.advance("20m")
    assert short.prune() == 2 * 3  # only "brief" is past its retention
    clock.advance("1h")
    assert short.prune() == 2 * 3  # now "plain", by the engine's hour
    assert {r.workflow for r in short.list_runs()} == {"lasting"}


def test_retention_none_keeps_everything(db_url: str, clock: FakeClock) -> None:
    with Engine(db_url, clock=clock, retention=None) as engine:
        add_stepped(engine)
        run_many(engine, "stepped", 3)
        clock.advance("3650d")
        assert engine.prune() == 0
        assert engine.prune(older_than="1d") == 9  # an explicit age still applies
        with pytest.raises(ConfigError, match="older_than"):
            engine.prune(older_than="yesterday")
    with pytest.raises(ConfigError, match="retention"):
        Engine(db_url, retention="forever")
    with pytest.raises(ConfigError):
        Engine(db_url).workflow("x", retention=-5)


def test_a_pruned_run_id_can_be_started_again(short: Engine, clock: FakeClock) -> None:
    add_stepped(short)
    first = short.start("stepped", 1, run_id="nightly-2026-03-01")
    short.run_until_idle()
    assert first.result() == 2
    assert short.start("stepped", 5, run_id="nightly-2026-03-01").result() == 2  # idempotent
    clock.advance("2h")
    assert short.prune() == 3

    again = short.start("stepped", 5, run_id="nightly-2026-03-01")
    run = short.get_run(again.id)
    assert run is not None and run.status is RunStatus.PENDING and run.input == 5
    short.run_until_idle()
    assert again.result() == 10


def test_a_schedule_never_fires_an_occurrence_again_after_its_runs_are_pruned(
    short: Engine, clock: FakeClock
) -> None:
    add_stepped(short)
    key = short.schedule("stepped", 1, every="1m", key="minutely")
    started: list[str] = []
    for _ in range(130):
        clock.advance("1m")
        started += short.tick()
        short.run_until_idle()
    assert len(started) == len(set(started)) == 130

    assert short.prune() > 0
    # Those that ended in the last hour, the one that ended exactly an hour ago included;
    # the history's 100 newest entries (older than the hour's 61).
    assert len(short.list_runs(schedule_key=key, limit=1_000)) == 61
    assert len(short.schedule_history(key, limit=1_000)) == 100
    assert short.tick() == []  # nothing is due again
    info = short.get_schedule(key)
    assert info is not None and info.last_run_id == started[-1]
    assert short.trigger(key) == started[-1]  # the current occurrence has its run, kept
    for _ in range(5):
        clock.advance("1m")
        fired = short.tick()
        assert len(fired) == 1 and fired[0] not in started
        started += fired


def test_trigger_does_not_start_again_an_occurrence_whose_run_a_new_run_displaced(
    short: Engine, clock: FakeClock
) -> None:
    """A daily schedule's occurrence ran; an operator's ``new_run=True`` run is now the
    schedule's latest. Hours later, past the retention, a plain trigger of the same
    (still current) occurrence finds its run kept and does not run it again."""
    add_stepped(short)
    key = short.schedule("stepped", 3, every="1d", key="daily")
    clock.advance("1d")
    (fired,) = short.tick()
    short.run_until_idle()
    again = short.run_now(key, new_run=True)
    assert again is not None and again.started and again.run_id != fired
    short.run_until_idle()
    info = short.get_schedule(key)
    assert info is not None and info.last_run_id == again.run_id
    clock.advance("2h")  # both ended more than the retention ago
    short.prune()

    triggered = short.run_now(key)
    assert triggered is not None
    assert triggered.run_id == fired and not triggered.started
    assert triggered.status is RunStatus.COMPLETED
    assert short.run_until_idle() == 0  # nothing started
    assert {run.id for run in short.list_runs(schedule_key=key)} == {fired, again.run_id}


def test_the_worker_prunes_in_the_background(short: Engine, clock: FakeClock) -> None:
    add_stepped(short)
    add_stepped(short, "brief", retention="1m")
    old = run_many(short, "stepped", 5)
    clock.advance("2h")
    with short.worker(poll_interval="20ms"):
        time.sleep(0.2)
        assert short.get_run(old[0]) is not None  # not before its first pass
        clock.advance(timedelta(milliseconds=FIRST_PASS_MS))
        assert until(lambda: short.list_runs() == [])
        brief = [short.start("brief", n).id for n in range(3)]
        assert until(lambda: all(
            (r := short.get_run(i)) is not None and r.status is RunStatus.COMPLETED
            for i in brief
        ))  # fmt: skip
        clock.advance("2m")  # past their retention, not yet the next pass
        time.sleep(0.2)
        assert len(short.list_runs()) == 3
        clock.advance(timedelta(milliseconds=PASS_INTERVAL_MS))
        assert until(lambda: short.list_runs() == [])


def test_a_pruning_outage_is_reported_once(db_url: str, clock: FakeClock) -> None:
    reported: list[dict[str, Any]] = []
    engine = Engine(db_url, clock=clock, on_error=lambda exc, info: reported.append(info))
    calls = threading.Semaphore(0)

    def down(**_: Any) -> Any:
        calls.release()
        raise StoreError("the database is down")

    engine.migrate()
    engine._runtime.database.pruning = SimpleNamespace(prune_batch=down)  # type: ignore[assignment]
    try:
        with engine.worker(poll_interval="20ms"):
            time.sleep(0.2)  # the pruning thread has started: its first pass is 10 s away
            for _ in range(3):
                clock.advance(timedelta(milliseconds=PASS_INTERVAL_MS))
                assert calls.acquire(timeout=10)
    finally:
        engine.close()
    assert [info for info in reported if info.get("where") == "pruning"] == [
        {"where": "pruning", "outage": True}
    ]


def test_a_prune_batch_holds_up_this_processs_other_writes_only_where_writes_take_turns(
    short: Engine, clock: FakeClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    # PostgreSQL: a batch runs in a transaction of its own, so a start, a checkpoint or a
    # firing of the same process goes through meanwhile (it touches none of its rows).
    # SQLite: the file's one write lock makes it wait for the batch, as any write does.
    from tickwork._store import sql_prune

    add_stepped(short)
    run_many(short, "stepped", 3)
    clock.advance("61m")
    inside, release = threading.Event(), threading.Event()
    delete_runs = sql_prune._delete_runs

    def held(tx: Any, run_ids: Any) -> int:
        inside.set()
        assert release.wait(30)
        return delete_runs(tx, run_ids)

    monkeypatch.setattr(sql_prune, "_delete_runs", held)
    pruner = threading.Thread(target=short.prune)
    starter = threading.Thread(target=lambda: short.start("stepped", 1, run_id="meanwhile"))
    takes_turns = short.url.startswith("sqlite")
    pruner.start()
    try:
        assert inside.wait(10)
        starter.start()
        starter.join(0.5 if takes_turns else 10)
        assert starter.is_alive() is takes_turns  # started during the batch unless SQLite
        assert pruner.is_alive()
    finally:
        release.set()
        pruner.join(10)
        if starter.ident is not None:
            starter.join(10)
    assert short.get_run("meanwhile") is not None
    assert short.get_run("r0000") is None  # and the batch did its work


def test_a_pass_paces_itself_where_writes_do_not_take_turns(
    short: Engine, clock: FakeClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    # PostgreSQL: the pauses hold a pass to MOST_ROWS_PER_S (its WAL, not a lock, is what
    # the others wait behind). SQLite: half a batch's time, whatever its size.
    from tickwork._services import pruning as _pruning

    add_stepped(short)
    run_many(short, "stepped", 700)  # 2,100 rows: several batches
    clock.advance("61m")
    store = short._runtime.store
    prune_batch = store.pruning.prune_batch
    batches: list[tuple[int, float]] = []  # (rows removed, seconds it took)
    pauses: list[float] = []

    def timed(**kwargs: Any) -> Any:
        began = time.monotonic()
        batch = prune_batch(**kwargs)
        batches.append((batch.removed, time.monotonic() - began))
        return batch

    pruning, real_wait = threading.current_thread(), _pruning._clock.wait

    def wait(stop: threading.Event, seconds: float) -> bool:
        if threading.current_thread() is not pruning:  # the engine's other threads (leases)
            return real_wait(stop, seconds)
        pauses.append(seconds)
        return stop.is_set()

    monkeypatch.setattr(store, "pruning", SimpleNamespace(prune_batch=timed))
    monkeypatch.setattr(_pruning._clock, "wait", wait)
    assert short.prune() == 2_100
    assert len(pauses) == len(batches) - 1 >= 2  # a pause between batches
    for (removed, took), pause in zip(batches, pauses, strict=False):
        if short.url.startswith("sqlite"):
            assert pause == pytest.approx(max(0.001, min(0.1, took / 2)), rel=0.1, abs=0.002)
        else:
            assert removed / (took + pause) <= MOST_ROWS_PER_S * 1.01
            assert pause >= min(0.1, took / 2)


# -- the command line ------------------------------------------------------------------


@pytest.fixture
def old_url(db_url: str) -> str:
    """A database with four ended runs (three rows each) from 2020, and one pending run."""
    with Engine(db_url, clock=FakeClock(datetime(2020, 1, 1, tzinfo=UTC))) as engine:
        add_stepped(engine)
        run_many(engine, "stepped", 4)
        engine.start("stepped", 1, run_id="waiting", delay="3650d")
    return db_url


def tickwork(*args: str) -> Result:
    return CliRunner().invoke(main, list(args), catch_exceptions=False)


def test_db_stats_shows_rows_bytes_and_the_backlog(old_url: str) -> None:
    result = tickwork("db", "stats", "--database", old_url, "--json")
    assert result.exit_code == 0, result.output
    stats = json.loads(result.output)
    tables = {t["name"]: t for t in stats["tables"]}
    assert tables["tickwork_runs"]["rows"] == 5 and tables["tickwork_steps"]["rows"] == 8
    assert all(t["bytes"] > 0 for t in tables.values())
    assert stats["total_bytes"] >= sum(t["bytes"] for t in tables.values()) > 0
    assert stats["oldest_ended_at"].startswith("2020-01-01")
    assert stats["prunable_runs"] == 4 and stats["retention"] == "30d"  # as the API writes it

    table = tickwork("db", "stats", "--database", old_url)
    assert table.exit_code == 0, table.output
    assert "tickwork_runs" in table.output and "retention: 30 d" in table.output
    assert "waiting to be pruned: 4 run(s) with their steps, 0 history entries" in table.output


def test_db_prune_removes_the_backlog(old_url: str) -> None:
    result = tickwork("db", "prune", "--database", old_url, "--older-than", "36500d")
    assert (result.exit_code, result.output) == (
        0, "pruned 0 row(s): 0 run(s), 0 step(s), 0 history entries\n"
    )  # fmt: skip
    result = tickwork("db", "prune", "--database", old_url, "--json")
    assert result.exit_code == 0, result.output
    assert json.loads(result.output) == {
        "removed": 12,
        "by_table": {"tickwork_runs": 4, "tickwork_steps": 8, "tickwork_schedule_history": 0},
    }
    stats = json.loads(tickwork("db", "stats", "--database", old_url, "--json").output)
    assert stats["prunable_runs"] == 0 and stats["oldest_ended_at"] is None
    assert {t["name"]: t["rows"] for t in stats["tables"]}["tickwork_runs"] == 1
    bad = CliRunner().invoke(main, ["db", "prune", "--database", old_url, "--older-than", "x"])
    assert bad.exit_code == 2 and "older_than" in bad.output


def test_db_prune_applies_the_apps_retentions(old_url: str, tmp_path: Path) -> None:
    app = tmp_path / "keeper.py"
    app.write_text(
        "from tickwork import Context, Engine\n"
        "engine = Engine(retention=None)\n"
        "@engine.workflow('stepped', retention='36500d')\n"
        "def stepped(ctx: Context, input: int) -> int:\n"
        "    return input\n"
    )
    spec = f"{app}:engine"
    result = tickwork("db", "prune", "--app", spec, "--database", old_url, "--json")
    assert result.exit_code == 0, result.output
    assert json.loads(result.output)["removed"] == 0  # kept for a century
    stats = json.loads(
        tickwork("db", "stats", "--app", spec, "--database", old_url, "--json").output
    )
    assert stats["retention"] is None and stats["prunable_runs"] == 0
