"""Registering schedules (DESIGN §3): validation first, identity, re-registration, first fire."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pydantic
import pytest
from tests.timeline import START

from tickwork import (
    ConfigError,
    Context,
    CronError,
    Engine,
    InputValidationError,
    ScheduleConflict,
    UnknownWorkflowError,
)
from tickwork.testing import FakeClock


class Order(pydantic.BaseModel):
    id: int
    total: float


@pytest.fixture
def wf(engine: Engine) -> Engine:
    """The engine with an untyped workflow "job", a typed one and one without input."""

    @engine.workflow("job")
    def job(ctx: Context, input: Any = None) -> Any:
        return input

    @engine.workflow("typed")
    def typed(ctx: Context, input: Order) -> float:
        return input.total

    @engine.workflow("no-input")
    def no_input(ctx: Context) -> None:
        return None

    return engine


# -- 1. everything is validated before anything is stored ---------------------------------


def test_unknown_workflow_is_rejected_and_nothing_is_stored(wf: Engine) -> None:
    """Scheduling a workflow nobody registered raises UnknownWorkflowError."""
    with pytest.raises(UnknownWorkflowError):
        wf.schedule("nope", None, every="1h")
    assert wf.list_schedules() == []


@pytest.mark.parametrize(
    ("workflow", "value"),
    [
        ("typed", {"id": "not a number", "total": 1}),
        ("typed", {"total": 1}),
        ("typed", None),
        ("no-input", {"unexpected": True}),
        ("job", {1, 2}),
        ("job", float("nan")),
        ("job", {"when": object()}),
    ],
)
def test_bad_input_is_rejected_and_nothing_is_stored(
    wf: Engine, workflow: str, value: object
) -> None:
    """An input that fails the annotation or is not JSON raises InputValidationError."""
    with pytest.raises(InputValidationError):
        wf.schedule(workflow, value, every="1h")
    assert wf.list_schedules() == []


@pytest.mark.parametrize(
    "expr", ["61 * * * *", "* * *", "0 0 30 2 *", "@reboot", "*/0 * * * *", "5-1 * * * *"]
)
def test_bad_cron_is_a_cron_error_and_nothing_is_stored(wf: Engine, expr: str) -> None:
    """A cron expression that cannot parse or never occurs raises CronError."""
    with pytest.raises(CronError):
        wf.schedule("job", None, cron=expr)
    assert wf.list_schedules() == []


AWARE = datetime(2026, 4, 1, tzinfo=UTC)

BAD_OPTIONS: list[dict[str, Any]] = [
    {"every": "1h", "timezone": "Mars/Olympus"},
    {"cron": "0 9 * * *", "timezone": "Not/AZone"},
    {"every": "1h", "timezone": ""},
    {"every": "1h", "timezone": None},
    {"every": 0},
    {"every": -5},
    {"every": "soon"},
    {"every": "0s"},
    {"every": 1.5},
    {"every": "1h", "jitter": 0},
    {"every": "1h", "jitter": "-1s"},
    {"every": "1h", "jitter": "a bit"},
    {"every": "1h", "catchup_window": 0},
    {"every": "1h", "catchup_window": "whenever"},
    {"every": "1h", "overlap": "never"},
    {"every": "1h", "overlap": None},
    {"every": "1h", "catchup": 0},
    {"every": "1h", "catchup": -1},
    {"every": "1h", "catchup": "some"},
    {"every": "1h", "catchup": True},
    {"every": "1h", "catchup": 1.5},
    {"every": "1h", "cron": "0 9 * * *"},
    {},
    {"cron": 5},
    {"every": "1h", "key": ""},
    {"every": "1h", "key": "k" * 151},
    {"every": "1h", "key": "with space"},
    {"every": "1h", "key": "with/slash"},
    {"every": "1h", "key": "tab\there"},
    {"every": "1h", "key": 7},
    {"every": "1h", "start_at": datetime(2026, 4, 1)},
    {"every": "1h", "end_at": datetime(2026, 4, 1)},
    {"every": "1h", "start_at": "2026-04-01T00:00:00Z"},
    {"every": "1h", "start_at": AWARE, "end_at": AWARE},
    {"every": "1h", "start_at": AWARE, "end_at": AWARE - timedelta(hours=1)},
    {"every": "1h", "on_conflict": "replace"},
    {"every": "1h", "on_conflict": None},
    {"every": "1h", "retry": {"max_attempts": 3}},
    {"every": "1h", "paused": "yes"},
    {"every": "1h", "paused": 1},
    {"every": "1h", "pool": ""},
    {"every": "1h", "pool": 5},
    {"every": "1h", "priority": "high"},
    {"every": "1h", "priority": True},
    {"every": "1h", "priority": 1.5},
]


@pytest.mark.parametrize("options", BAD_OPTIONS, ids=repr)
def test_bad_option_is_a_config_error_and_nothing_is_stored(
    wf: Engine, options: dict[str, Any]
) -> None:
    """Bad zones, durations, option values, keys and bounds raise ConfigError, storing nothing."""
    with pytest.raises(ConfigError):
        wf.schedule("job", None, **options)
    assert wf.list_schedules() == []
    assert wf.list_runs() == []


@pytest.mark.parametrize("options", BAD_OPTIONS[:20], ids=repr)
def test_bad_reregistration_leaves_the_existing_schedule_untouched(
    wf: Engine, clock: FakeClock, options: dict[str, Any]
) -> None:
    """A rejected call for an existing key changes nothing about the stored schedule."""
    wf.schedule("job", {"n": 1}, every="1h", key="k")
    before = wf.get_schedule("k")
    clock.advance("1m")
    options = {"every": "2h", **options} if "cron" not in options else options
    with pytest.raises(ConfigError):
        wf.schedule("job", {"n": 2}, key="k", **options)
    assert wf.get_schedule("k") == before
    assert [s.key for s in wf.list_schedules()] == ["k"]


# -- 2. identity ------------------------------------------------------------------------


def test_derived_key_is_the_same_for_the_same_call(wf: Engine) -> None:
    """The same call twice yields the same key and one schedule."""
    first = wf.schedule("job", {"n": 1}, every="1h")
    second = wf.schedule("job", {"n": 1}, every="1h")
    assert first == second
    assert [s.key for s in wf.list_schedules()] == [first]


def test_derived_key_ignores_input_key_order_and_duration_spelling(wf: Engine) -> None:
    """Canonical JSON and milliseconds are hashed, not the spelling the caller used."""
    a = wf.schedule("job", {"a": 1, "b": [1, 2], "c": {"y": 1, "x": 2}}, every="1h")
    b = wf.schedule("job", {"c": {"x": 2, "y": 1}, "b": [1, 2], "a": 1}, every={"minutes": 60})
    assert a == b


def test_derived_key_is_stable_across_processes(wf: Engine) -> None:
    """The hash is pinned: a change in how keys are derived breaks every deployed fleet."""
    # Computed once: sha256(canonical JSON of [workflow, {cadence, input}])[:12].
    assert wf.schedule("job", {"day": "mon", "n": 1}, every="1h") == "job-5cd355f2826b"
    assert (
        wf.schedule("job", None, cron="0 9 * * 1-5", timezone="Europe/London") == "job-21cbb577f964"
    )
    # spacing inside a cron expression is not part of its identity
    assert (
        wf.schedule("job", None, cron="0  9 * *   1-5", timezone="Europe/London")
        == "job-21cbb577f964"
    )


@pytest.mark.parametrize(
    "other",
    [
        {"input": {"n": 2}},
        {"every": "2h"},
        {"cron": "0 * * * *", "every": None},
        {"pool": "gpu"},
        {"priority": 5},
    ],
    ids=repr,
)
def test_derived_key_differs_when_the_identity_differs(wf: Engine, other: dict[str, Any]) -> None:
    """Input, cadence, pool and priority each take part in the derived key."""
    base: dict[str, Any] = {"input": {"n": 1}, "every": "1h"}
    changed = {**base, **other}
    a = wf.schedule("job", base.pop("input"), **base)
    b = wf.schedule("job", changed.pop("input"), **changed)
    assert a != b
    assert len(wf.list_schedules()) == 2


def test_derived_key_differs_by_cron_timezone(wf: Engine) -> None:
    """The same cron expression in two zones is two schedules."""
    a = wf.schedule("job", None, cron="0 9 * * *", timezone="Europe/London")
    b = wf.schedule("job", None, cron="0 9 * * *", timezone="America/New_York")
    assert a != b


def test_derived_key_is_usable_as_a_key(wf: Engine) -> None:
    """A derived key for an awkward workflow name is still a valid key."""

    @wf.workflow("nightly report/v2")
    def awkward(ctx: Context) -> None:
        return None

    key = wf.schedule("nightly report/v2", None, every="1h")
    assert " " not in key and "/" not in key
    assert wf.get_schedule(key) is not None


def test_reregistering_the_same_definition_changes_nothing(wf: Engine, clock: FakeClock) -> None:
    """Same definition again: revision, next fire, state, timestamps and history kept."""
    key = wf.schedule("job", {"n": 1}, every="1h", key="k", overlap="skip")
    clock.advance("1h")
    wf.tick()
    wf.pause("k")
    before = wf.get_schedule(key)
    history = wf.schedule_history(key)
    clock.advance("10m")
    assert wf.schedule("job", {"n": 1}, every="1h", key="k", overlap="skip") == "k"
    assert wf.get_schedule(key) == before
    assert wf.schedule_history(key) == history


def test_update_bumps_revision_and_keeps_next_fire_when_cadence_is_unchanged(
    wf: Engine, clock: FakeClock
) -> None:
    """A new input or overlap updates in place: revision + 1, same next occurrence."""
    wf.schedule("job", {"n": 1}, every="1h", key="k")
    clock.advance("25m")
    wf.schedule("job", {"n": 2}, every="1h", key="k", overlap="skip")
    info = wf.get_schedule("k")
    assert info is not None
    assert info.revision == 2
    assert info.input == {"n": 2}
    assert info.overlap == "skip"
    assert info.next_fire_at == START + timedelta(hours=1)
    assert info.created_at == START
    assert info.updated_at == START + timedelta(minutes=25)


def test_update_recomputes_next_fire_from_now_when_cadence_changes(
    wf: Engine, clock: FakeClock
) -> None:
    """A new interval or cron counts from the moment of the update."""
    wf.schedule("job", None, every="1h", key="k")
    clock.advance("25m")
    wf.schedule("job", None, every="2h", key="k")
    info = wf.get_schedule("k")
    assert info is not None and info.revision == 2
    assert info.next_fire_at == START + timedelta(hours=2, minutes=25)
    clock.advance("5m")
    wf.schedule("job", None, cron="0 15 * * *", key="k")
    info = wf.get_schedule("k")
    assert info is not None and info.revision == 3
    assert info.next_fire_at == datetime(2026, 3, 1, 15, 0, tzinfo=UTC)


def test_update_of_timezone_alone_recomputes_the_next_fire(wf: Engine) -> None:
    """The zone is part of a cron cadence: 09:00 London becomes 09:00 New York."""
    wf.schedule("job", None, cron="0 9 * * *", timezone="Europe/London", key="k")
    wf.schedule("job", None, cron="0 9 * * *", timezone="America/New_York", key="k")
    info = wf.get_schedule("k")
    assert info is not None and info.timezone == "America/New_York"
    assert info.next_fire_at == datetime(2026, 3, 1, 14, 0, tzinfo=UTC)


def test_on_conflict_error_raises_and_changes_nothing(wf: Engine, clock: FakeClock) -> None:
    """on_conflict="error" with another definition raises ScheduleConflict."""
    wf.schedule("job", {"n": 1}, every="1h", key="k")
    before = wf.get_schedule("k")
    clock.advance("1m")
    with pytest.raises(ScheduleConflict) as info:
        wf.schedule("job", {"n": 2}, every="2h", key="k", on_conflict="error")
    assert info.value.code == "SCHEDULE_CONFLICT"
    assert wf.get_schedule("k") == before
    # the same definition is not a conflict
    assert wf.schedule("job", {"n": 1}, every="1h", key="k", on_conflict="error") == "k"


def test_on_conflict_keep_returns_the_key_and_changes_nothing(wf: Engine, clock: FakeClock) -> None:
    """on_conflict="keep" with another definition keeps the stored one."""
    wf.schedule("job", {"n": 1}, every="1h", key="k")
    before = wf.get_schedule("k")
    clock.advance("1m")
    assert wf.schedule("job", {"n": 2}, every="2h", key="k", on_conflict="keep") == "k"
    assert wf.get_schedule("k") == before


def test_each_run_records_the_schedule_revision_it_was_created_under(
    wf: Engine, clock: FakeClock
) -> None:
    """Runs fired before an update carry revision 1, after it revision 2."""
    wf.schedule("job", {"n": 1}, every="1h", key="k")
    clock.advance("1h")
    (first,) = wf.tick()
    wf.schedule("job", {"n": 2}, every="1h", key="k")
    clock.advance("1h")
    (second,) = wf.tick()
    runs = {r.id: r for r in wf.list_runs(schedule_key="k")}
    assert runs[first].schedule_revision == 1 and runs[first].input == {"n": 1}
    assert runs[second].schedule_revision == 2 and runs[second].input == {"n": 2}


# -- 3. the first occurrence ------------------------------------------------------------


def test_interval_first_fires_one_interval_after_registration(wf: Engine, clock: FakeClock) -> None:
    """every=1h registered at 12:00 fires first at 13:00, not at 12:00."""
    wf.schedule("job", None, every="1h", key="k")
    assert wf.tick() == []
    info = wf.get_schedule("k")
    assert info is not None and info.next_fire_at == START + timedelta(hours=1)
    clock.advance(timedelta(hours=1) - timedelta(milliseconds=1))
    assert wf.tick() == []
    clock.advance("1ms")
    assert wf.tick() == ["k@2026-03-01T13:00:00.000Z"]


def test_cron_first_fires_at_the_first_match_after_registration(
    wf: Engine, clock: FakeClock
) -> None:
    """cron "*/15" registered at 12:07 fires first at 12:15."""
    clock.advance("7m")
    wf.schedule("job", None, cron="*/15 * * * *", key="k")
    info = wf.get_schedule("k")
    assert info is not None and info.next_fire_at == START + timedelta(minutes=15)


def test_cron_registered_on_a_match_instant_waits_for_the_next_match(
    wf: Engine, clock: FakeClock
) -> None:
    """Registered exactly at 12:00 for "0 * * * *": the first occurrence is 13:00."""
    wf.schedule("job", None, cron="0 * * * *", key="k")
    assert wf.tick() == []
    info = wf.get_schedule("k")
    assert info is not None and info.next_fire_at == START + timedelta(hours=1)
    clock.advance("1h")
    assert wf.tick() == ["k@2026-03-01T13:00:00.000Z"]


def test_future_start_at_delays_an_interval(wf: Engine, clock: FakeClock) -> None:
    """every=1h from start_at=15:00: nothing before 16:00."""
    wf.schedule("job", None, every="1h", key="k", start_at=START + timedelta(hours=3))
    info = wf.get_schedule("k")
    assert info is not None and info.next_fire_at == START + timedelta(hours=4)
    for _ in range(3):
        clock.advance("1h")
        assert wf.tick() == []
    clock.advance("59m")
    assert wf.tick() == []
    clock.advance("1m")
    assert wf.tick() == ["k@2026-03-01T16:00:00.000Z"]


def test_future_start_at_delays_a_cron(wf: Engine, clock: FakeClock) -> None:
    """An hourly cron with start_at=15:30 first fires at 16:00."""
    wf.schedule("job", None, cron="0 * * * *", key="k", start_at=START + timedelta(hours=3.5))
    info = wf.get_schedule("k")
    assert info is not None and info.next_fire_at == START + timedelta(hours=4)
    clock.advance("3h")
    assert wf.tick() == []


def test_cron_start_at_on_a_match_instant_includes_it(wf: Engine) -> None:
    """start_at bounds occurrences: a match exactly at start_at is the first one."""
    wf.schedule("job", None, cron="0 * * * *", key="k", start_at=START + timedelta(hours=3))
    info = wf.get_schedule("k")
    assert info is not None and info.next_fire_at == START + timedelta(hours=3)


def test_end_at_stops_the_schedule(wf: Engine, clock: FakeClock) -> None:
    """Occurrences after end_at never run and next_fire_at becomes None."""
    wf.schedule("job", None, every="1h", key="k", end_at=START + timedelta(hours=2, minutes=30))
    started = []
    for _ in range(6):
        clock.advance("1h")
        started += wf.tick()
    assert started == ["k@2026-03-01T13:00:00.000Z", "k@2026-03-01T14:00:00.000Z"]
    info = wf.get_schedule("k")
    assert info is not None and info.next_fire_at is None


def test_end_at_before_the_first_occurrence_never_fires(wf: Engine, clock: FakeClock) -> None:
    """A schedule whose window closes before its first occurrence has no next fire."""
    wf.schedule("job", None, every="1h", key="k", end_at=START + timedelta(minutes=30))
    info = wf.get_schedule("k")
    assert info is not None and info.next_fire_at is None
    clock.advance("5h")
    assert wf.tick() == []
    assert wf.list_runs() == []


def test_extending_end_at_revives_an_ended_schedule(wf: Engine, clock: FakeClock) -> None:
    """Re-registering with a later end_at lets the schedule fire again."""
    wf.schedule("job", None, every="1h", key="k", end_at=START + timedelta(minutes=90))
    clock.advance("2h")
    assert wf.tick() == ["k@2026-03-01T13:00:00.000Z"]
    info = wf.get_schedule("k")
    assert info is not None and info.next_fire_at is None
    wf.schedule("job", None, every="1h", key="k", end_at=START + timedelta(hours=10))
    info = wf.get_schedule("k")
    assert info is not None and info.revision == 2
    assert info.next_fire_at == START + timedelta(hours=3)
    clock.advance("1h")
    assert wf.tick() == ["k@2026-03-01T15:00:00.000Z"]


def test_moving_end_at_earlier_stops_later_occurrences(wf: Engine, clock: FakeClock) -> None:
    """Re-registering with an earlier end_at: occurrences after it never run."""
    wf.schedule("job", None, every="1h", key="k")
    wf.schedule("job", None, every="1h", key="k", end_at=START + timedelta(minutes=90))
    started = []
    for _ in range(4):
        clock.advance("1h")
        started += wf.tick()
    assert started == ["k@2026-03-01T13:00:00.000Z"]
