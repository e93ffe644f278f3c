"""Schedules declared beside workflows, for a deployment, and in tickwork.toml."""

from __future__ import annotations

import threading
from datetime import timedelta
from pathlib import Path

import pytest

from tickwork import ConfigError, Context, Cron, Engine, Every, Retry, ScheduleConflict
from tickwork.testing import FakeClock


def test_workflow_declaration_is_registered_by_sync(db_url: str, clock: FakeClock) -> None:
    """A single declaration is keyed by the workflow name; options travel with it."""
    with Engine(db_url, clock=clock) as engine:

        @engine.workflow(schedule=Cron("0 2 * * *", timezone="America/Sao_Paulo", overlap="skip"))
        def nightly(ctx: Context) -> None:
            return None

        assert engine.list_schedules() == []
        assert engine.sync_schedules() == ["nightly"]
        info = engine.get_schedule("nightly")
        assert info is not None
        assert (info.cron, info.timezone, info.overlap.value) == (
            "0 2 * * *", "America/Sao_Paulo", "skip",
        )  # fmt: skip


def test_several_declarations_are_keyed_name_colon_index(db_url: str, clock: FakeClock) -> None:
    with Engine(db_url, clock=clock) as engine:

        @engine.workflow(schedule=[Every("1m"), Every("1h", key="hourly"), Cron("@daily")])
        def poll(ctx: Context) -> None:
            return None

        assert sorted(engine.sync_schedules()) == ["hourly", "poll:0", "poll:2"]
        hourly = engine.get_schedule("hourly")
        assert hourly is not None and hourly.every == timedelta(hours=1)


def test_deployment_schedules_win_over_declarations_by_key(db_url: str, clock: FakeClock) -> None:
    deployment = [
        {"workflow": "report", "key": "report", "cron": "30 6 * * *", "timezone": "Europe/Paris"},
        {"workflow": "report", "every": "15m", "input": {"day": "today"}},
    ]
    with Engine(db_url, clock=clock, schedules=deployment) as engine:

        @engine.workflow(schedule=Cron("0 9 * * *"))
        def report(ctx: Context, input: dict[str, str] | None = None) -> None:
            return None

        keys = engine.sync_schedules()
        assert len(keys) == 2 and "report" in keys
        info = engine.get_schedule("report")
        assert info is not None and (info.cron, info.timezone) == ("30 6 * * *", "Europe/Paris")


def test_config_file_wins_over_engine_schedules(
    db_url: str, clock: FakeClock, tmp_path: Path
) -> None:
    config = tmp_path / "tickwork.toml"
    config.write_text(
        "[[schedules]]\n"
        'workflow = "report"\nkey = "report"\ncron = "0 7 * * 1-5"\n'
        'overlap = "buffer_one"\njitter = "30s"\n'
        'retry = { max_attempts = 4, backoff = "2s" }\n'
    )
    deployment = [{"workflow": "report", "key": "report", "cron": "0 8 * * *"}]
    with Engine(db_url, clock=clock, schedules=deployment, config=config) as engine:

        @engine.workflow()
        def report(ctx: Context) -> None:
            return None

        assert engine.sync_schedules() == ["report"]
        info = engine.get_schedule("report")
        assert info is not None
        assert (info.cron, info.overlap.value, info.jitter) == (
            "0 7 * * 1-5", "buffer_one", timedelta(seconds=30),
        )  # fmt: skip


def test_config_file_is_found_through_the_environment(
    db_url: str, clock: FakeClock, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    config = tmp_path / "deploy.toml"
    config.write_text('[[schedules]]\nworkflow = "job"\nkey = "from-env"\nevery = "5m"\n')
    monkeypatch.setenv("TICKWORK_CONFIG", str(config))
    with Engine(db_url, clock=clock) as engine:

        @engine.workflow()
        def job(ctx: Context) -> None:
            return None

        assert engine.sync_schedules() == ["from-env"]


def test_sync_is_idempotent(db_url: str, clock: FakeClock) -> None:
    with Engine(db_url, clock=clock) as engine:

        @engine.workflow(schedule=Every("10m"))
        def job(ctx: Context) -> None:
            return None

        engine.sync_schedules()
        first = engine.get_schedule("job")
        clock.advance("1m")
        engine.sync_schedules()
        assert engine.get_schedule("job") == first


@pytest.mark.parametrize(
    "declaration",
    [Cron("0 2 * * *", key="k"), Every("1h", overlap="skip")],
)
def test_declarations_are_values(declaration: object) -> None:
    assert declaration == declaration and repr(declaration)


def test_bad_declarations_fail_at_definition_time(engine: Engine) -> None:
    with pytest.raises(ConfigError):
        Cron("61 * * * *")
    with pytest.raises(ConfigError):
        Every("0s")
    with pytest.raises(ConfigError):
        Every("1m", colour="blue")
    with pytest.raises(ConfigError):

        @engine.workflow(schedule="0 2 * * *")
        def job(ctx: Context) -> None:
            return None


@pytest.mark.parametrize(
    ("entries", "message"),
    [
        ([{"cron": "* * * * *"}], "workflow"),
        ([{"workflow": "job", "cron": "* * * * *", "colour": "blue"}], "unknown option"),
        (["job"], "table"),
    ],
)
def test_bad_deployment_entries_are_refused_at_once(
    db_url: str, entries: list[object], message: str
) -> None:
    with pytest.raises(ConfigError, match=message):
        Engine(db_url, schedules=entries)  # type: ignore[arg-type]


def test_bad_config_file_is_a_config_error(db_url: str, tmp_path: Path) -> None:
    broken = tmp_path / "broken.toml"
    broken.write_text("[[schedules]\n")
    with Engine(db_url, config=broken) as engine, pytest.raises(ConfigError):
        engine.sync_schedules()
    with Engine(db_url, config=tmp_path / "missing.toml") as engine, pytest.raises(ConfigError):
        engine.sync_schedules()


def test_deployment_schedule_options_are_validated_when_the_engine_is_built(db_url: str) -> None:
    # One spec for every face: a bad option is refused where it is written, not later.
    with pytest.raises(ConfigError, match="Unknown overlap 'sometimes'"):
        Engine(db_url, schedules=[{"workflow": "job", "every": "1m", "overlap": "sometimes"}])


def test_config_file_options_are_validated_when_synced(
    db_url: str, clock: FakeClock, tmp_path: Path
) -> None:
    config = tmp_path / "tickwork.toml"
    config.write_text('[[schedules]]\nworkflow = "job"\nevery = "1m"\noverlap = "sometimes"\n')
    with Engine(db_url, clock=clock, config=config) as engine:

        @engine.workflow()
        def job(ctx: Context) -> None:
            return None

        with pytest.raises(ConfigError, match="Unknown overlap 'sometimes'"):
            engine.sync_schedules()
        assert engine.list_schedules() == []


def test_one_bad_declared_schedule_among_many_stores_none(
    db_url: str, clock: FakeClock, tmp_path: Path
) -> None:
    """sync_schedules checks every schedule before storing any (they are stored in bulk):
    an input the workflow refuses, declared after 1,200 good ones, stores nothing."""
    entries = "".join(
        f'[[schedules]]\nworkflow = "job"\nevery = "1h"\nkey = "k{i}"\n' for i in range(1_200)
    )
    bad = '[[schedules]]\nworkflow = "job"\nevery = "1h"\nkey = "bad"\ninput = {n = "x"}\n'
    config = tmp_path / "tickwork.toml"
    config.write_text(entries + bad)
    with Engine(db_url, clock=clock, config=config) as engine:

        @engine.workflow()
        def job(ctx: Context, input: dict[str, int] | None = None) -> None:
            return None

        with pytest.raises(ConfigError):
            engine.sync_schedules()
        assert engine.list_schedules() == []
        config.write_text(entries)
        assert len(engine.sync_schedules()) == 1_200
        assert len(engine.list_schedules()) == 1_200


def test_worker_registers_declared_schedules_when_it_starts(db_url: str) -> None:
    with Engine(db_url) as engine:

        @engine.workflow(schedule=Every("1h", retry=Retry(max_attempts=2)))
        def hourly(ctx: Context) -> None:
            return None

        with engine.worker(threads=1):
            pass
        assert [s.key for s in engine.list_schedules()] == ["hourly"]


def test_two_workers_starting_at_once_register_each_declared_schedule_once(
    db_url: str, clock: FakeClock
) -> None:
    """A fleet's workers start together and sync the same 2,000 declared schedules at once
    (in bulk): no error, and one schedule per key, registered once (revision 1)."""
    declared = [{"workflow": "job", "key": f"k{i:04d}", "every": f"{1 + i % 50}m"}
                for i in range(2_000)]  # fmt: skip
    engines = [Engine(db_url, clock=clock, schedules=declared) for _ in range(2)]
    for engine in engines:

        @engine.workflow()
        def job(ctx: Context) -> None:
            return None

    engines[0].migrate()
    start = threading.Barrier(2)
    synced: list[list[str]] = []
    errors: list[BaseException] = []

    def sync(engine: Engine) -> None:
        try:
            start.wait()
            synced.append(engine.sync_schedules())
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=sync, args=(engine,)) for engine in engines]
    try:
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(120)
        assert errors == []
        keys = [f"k{i:04d}" for i in range(2_000)]
        assert synced == [keys, keys]
        listed = engines[0].list_schedules()
        assert [info.key for info in listed] == keys
        assert {info.revision for info in listed} == {1}
    finally:
        for engine in engines:
            engine.close()


def test_a_declared_schedule_in_conflict_raises_and_keeps_the_stored_one(
    db_url: str, clock: FakeClock
) -> None:
    """on_conflict="error" among declared schedules registered in bulk: the conflict is
    raised as one registration would raise it, and the stored schedule is left as it was."""
    first = [{"workflow": "job", "key": "report", "every": "1h"}]
    second = [
        *({"workflow": "job", "key": f"k{i}", "every": "1h"} for i in range(3)),
        {"workflow": "job", "key": "report", "every": "2h", "on_conflict": "error"},
    ]
    for declared, conflict in ((first, False), (second, True)):
        with Engine(db_url, clock=clock, schedules=declared) as engine:

            @engine.workflow()
            def job(ctx: Context) -> None:
                return None

            if conflict:
                with pytest.raises(ScheduleConflict, match="'report'"):
                    engine.sync_schedules()
            else:
                engine.sync_schedules()
            report = engine.get_schedule("report")
            assert report is not None
            assert (report.every, report.revision) == (timedelta(hours=1), 1)


def test_a_declared_schedule_whose_calendar_is_missing_waits_and_the_others_register(
    db_url: str, clock: FakeClock
) -> None:
    """One schedule's missing calendar does not stop the sync (a worker's start-up): it
    is reported naming the schedule, its workflow and the calendar, the others are
    registered, and it is registered by the first pass after its calendar is stored."""
    reported: list[tuple[str, dict[str, object]]] = []
    with Engine(db_url, clock=clock, on_error=lambda e, i: reported.append((str(e), i))) as engine:

        @engine.workflow("holiday-report", schedule=Cron("0 9 * * *", calendar="uk"))
        def holiday_report(ctx: Context) -> None:
            return None

        @engine.workflow(schedule=Every("1m"))
        def beat(ctx: Context) -> None:
            return None

        assert engine.sync_schedules() == ["beat"]
        [(message, info)] = reported
        assert "'holiday-report' (workflow 'holiday-report')" in message
        assert "no calendar 'uk'" in message
        assert info["schedule_key"] == "holiday-report" and info["calendar"] == "uk"
        assert engine.get_schedule("holiday-report") is None
        clock.advance("1m")
        assert len(engine.tick()) == 1  # the others are served meanwhile
        engine.calendar("uk", holidays=["2026-12-25"])
        engine.tick()
        registered = engine.get_schedule("holiday-report")
        assert registered is not None and registered.calendar == "uk"
        assert len(reported) == 1  # said once, at the sync
