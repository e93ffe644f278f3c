"""Bad input gets the typed errors of DESIGN §6 and changes nothing stored."""

from __future__ import annotations

import re
import sqlite3
from contextlib import ExitStack
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import pydantic
import pytest
from click.testing import CliRunner
from tests.browser import Browser

from tickwork import (
    ConfigError,
    Context,
    Engine,
    InputValidationError,
    On,
    Retry,
    StoreUnreachable,
    UnknownWorkflowError,
)
from tickwork.cli import main
from tickwork.server import create_app
from tickwork.testing import FakeClock

HOUR = timedelta(hours=1)


class Order(pydantic.BaseModel):
    id: int
    total: float


@pytest.fixture
def typed(engine: Engine) -> Engine:
    @engine.workflow("typed")
    def typed(ctx: Context, input: Order) -> float:
        assert isinstance(input, Order)  # the function receives the annotated type
        return input.total

    @engine.workflow("no-input")
    def no_input(ctx: Context) -> None:
        return None

    @engine.workflow("anything")
    def anything(ctx: Context, input: Any) -> Any:
        return input

    return engine


def test_validated_input_reaches_the_function_as_its_annotated_type(typed: Engine) -> None:
    handle = typed.start("typed", {"id": 1, "total": 9.5})
    typed.run_until_idle()
    assert handle.result() == 9.5


@pytest.mark.parametrize(
    ("workflow", "value"),
    [
        ("typed", {"id": "not a number", "total": 1}),
        ("typed", {"total": 1}),
        ("typed", None),
        ("no-input", {"unexpected": True}),
        ("anything", {1, 2}),
        ("anything", float("nan")),
        ("anything", {"when": object()}),
    ],
)
def test_invalid_input_is_rejected_before_anything_is_stored(
    typed: Engine, workflow: str, value: object
) -> None:
    with pytest.raises(InputValidationError):
        typed.start(workflow, value)
    assert typed.list_runs() == []


def test_unknown_workflow_is_rejected(typed: Engine) -> None:
    with pytest.raises(UnknownWorkflowError) as info:
        typed.start("nope", None)
    assert info.value.code == "UNKNOWN_WORKFLOW"
    assert isinstance(info.value, ConfigError) and isinstance(info.value, ValueError)
    assert typed.list_runs() == []


@pytest.mark.parametrize(
    "options",
    [
        {"run_id": ""},
        {"run_id": "x" * 201},
        {"run_id": 5},
        {"priority": "high"},
        {"priority": True},
        {"pool": ""},
        {"delay": 0},
        {"delay": "-1s"},
        {"delay": "soon"},
    ],
)
def test_invalid_start_options_are_rejected(typed: Engine, options: dict[str, Any]) -> None:
    with pytest.raises(ConfigError):
        typed.start("no-input", **options)
    assert typed.list_runs() == []


@pytest.mark.parametrize(
    "url",
    [
        "mysql://localhost/db",
        "sqlite://relative.db",
        "sqlite:///",
        "sqlite:///x.db?synchronous=sometimes",
        "sqlite:///x.db?colour=blue",
        "nonsense",
    ],
)
def test_bad_database_url_is_a_config_error(url: str) -> None:
    with pytest.raises(ConfigError):
        Engine(url)


def test_missing_folder_of_sqlite_file_is_said_at_first_use(tmp_path: Path) -> None:
    engine = Engine(f"sqlite:///{tmp_path / 'missing' / 'x.db'}")
    with pytest.raises(StoreUnreachable, match=r"folder .* does not exist"):
        engine.migrate()
    assert not (tmp_path / "missing").exists()


@pytest.mark.parametrize(
    "options",
    [
        {"lease": 0},
        {"lease": "forever"},
        {"pools": []},
        {"pools": "default"},
        {"pools": [""]},
        {"clock": "now"},
        {"on_error": "print"},
    ],
)
def test_invalid_engine_options_are_rejected(db_url: str, options: dict[str, Any]) -> None:
    with pytest.raises(ConfigError):
        Engine(db_url, **options)


@pytest.mark.parametrize(
    "options",
    [
        {"concurrency": 0},
        {"concurrency": "2"},
        {"priority": 1.5},
        {"pool": None},
        {"timeout": "0s"},
        {"retry": 3},
        {"version": ""},
    ],
)
def test_invalid_workflow_options_are_rejected(engine: Engine, options: dict[str, Any]) -> None:
    with pytest.raises(ConfigError):

        @engine.workflow("bad", **options)
        def bad(ctx: Context) -> None:
            return None

    assert engine.workflows() == []


@pytest.mark.parametrize(
    "options",
    [{"max_attempts": 0}, {"backoff": "0s"}, {"factor": 0.5}, {"max_backoff": -1}],
)
def test_invalid_retry_is_rejected(options: dict[str, Any]) -> None:
    with pytest.raises(ConfigError):
        Retry(**options)


def test_workflow_must_take_ctx_and_at_most_one_input(engine: Engine) -> None:
    with pytest.raises(ConfigError):

        @engine.workflow()
        def too_many(ctx: Context, a: int, b: int) -> None:
            return None

    with pytest.raises(ConfigError):
        engine.workflow()(lambda: None)


def test_registering_two_functions_under_one_name_is_refused(engine: Engine) -> None:
    @engine.workflow("same")
    def first(ctx: Context) -> None:
        return None

    with pytest.raises(ConfigError):

        @engine.workflow("same")
        def second(ctx: Context) -> None:
            return None


def test_bare_decorator_uses_the_function_name(db_url: str, clock: FakeClock) -> None:
    with Engine(db_url, clock=clock) as engine:

        @engine.workflow
        def plain(ctx: Context) -> str:
            return "plain"

        assert engine.workflows() == ["plain"]
        handle = engine.start(plain)
        engine.run_until_idle()
        assert handle.result() == "plain"


def test_bad_list_runs_filters_are_rejected(engine: Engine) -> None:
    with pytest.raises(ConfigError):
        engine.list_runs(status="sleepy")
    with pytest.raises(ConfigError):
        engine.list_runs(limit=0)


# -- values that could not be stored or shown safely (issue 13's smaller breaks) -----------


@pytest.mark.parametrize("value", [float("inf"), float("-inf"), float("nan"), 1e400])
def test_a_non_finite_number_in_an_annotated_input_is_refused_not_stored_as_null(
    engine: Engine, value: float
) -> None:
    @engine.workflow("plain-dict")
    def plain_dict(ctx: Context, input: dict) -> None:  # type: ignore[type-arg]
        return None

    with pytest.raises(InputValidationError, match="inf or nan"):
        engine.start("plain-dict", {"x": [value]})
    with pytest.raises(InputValidationError):
        engine.schedule("plain-dict", {"x": value}, every="1h")
    assert engine.list_runs() == [] and engine.list_schedules() == []


@pytest.mark.parametrize(
    "changes",
    [
        {"run_id": "a\x00b"},
        {"run_id": "ring\x07"},
        {"run_id": "\x1b[31mred"},
        {"pool": "p\x00"},
        {"priority": 2**63},
        {"priority": -(2**63) - 1},
    ],
)
def test_ids_pools_and_priorities_that_cannot_be_stored_or_shown_are_refused(
    typed: Engine, changes: dict[str, Any]
) -> None:
    with pytest.raises(ConfigError):
        typed.start("no-input", **changes)
    assert typed.list_runs() == []


@pytest.mark.parametrize(
    "build",
    [
        lambda e: e.schedule("no-input", key="k\x00", every="1m"),
        lambda e: e.schedule("no-input", key="k\x9b", every="1m"),
        lambda e: e.schedule("no-input", every="1m", pool="\x1b[2J"),
        lambda e: e.schedule("no-input", every="1m", jitter="1m"),
        lambda e: e.schedule("no-input", every="1m", jitter="2m"),
        lambda e: e.schedule("no-input", cron="0 * * * *", jitter="25h"),
        lambda e: e.schedule("no-input", every="1m", catchup=10**9),
        lambda e: e.schedule("no-input", every="1m", retry=Retry(max_attempts=10**12)),
        lambda e: e.create_api_key("ci\x1b[0m"),
    ],
)
def test_option_values_that_make_no_sense_are_refused(typed: Engine, build: Any) -> None:
    with pytest.raises(ConfigError):
        build(typed)
    assert typed.list_schedules() == [] and typed.list_api_keys() == []


def test_a_jitter_within_the_interval_and_a_day_for_cron_is_accepted(typed: Engine) -> None:
    typed.schedule("no-input", every="1h", jitter="59m", key="hourly")
    typed.schedule("no-input", cron="0 0 * * *", jitter="1d", key="daily")
    assert [s.key for s in typed.list_schedules()] == ["daily", "hourly"]


def test_revoking_by_a_name_that_is_another_keys_id_revokes_only_the_key_with_that_id(
    engine: Engine,
) -> None:
    first = engine.create_api_key("first")
    first_id = engine.verify_api_key(first)
    assert first_id is not None
    second = engine.create_api_key(first_id)  # named after the first key's id
    assert engine.revoke_api_key(first_id)
    assert engine.verify_api_key(first) is None
    assert engine.verify_api_key(second) is not None  # not revoked with it
    assert engine.revoke_api_key(first_id)  # now the name: the second key
    assert engine.verify_api_key(second) is None


# -- the last instant: 9999-12-31T23:59:59.999Z (docs/behaviour.md) ------------------------

#: a duration that, added to the tests' START (2026), passes year 9999
PAST_9999 = "3000000d"


def test_a_start_delayed_past_year_9999_is_refused_before_anything_is_stored(
    typed: Engine,
) -> None:
    with pytest.raises(ConfigError, match=r"delay: '3000000d' ends past 9999-12-31T23:59:59\.999Z"):
        typed.start("no-input", delay=PAST_9999)
    assert typed.list_runs() == []


@pytest.mark.parametrize(
    ("checkpoint", "said"),
    [
        (lambda ctx: ctx.sleep("nap", PAST_9999), "sleep 'nap': '3000000d' ends past 9999"),
        (
            lambda ctx: ctx.sleep_until("nap", datetime.max.replace(tzinfo=timezone(-HOUR))),
            "sleep_until 'nap': .* ends past 9999",
        ),
        (
            lambda ctx: ctx.wait_for_event("paid", timeout=PAST_9999),
            "timeout: '3000000d' ends past 9999",
        ),
    ],
    ids=["sleep", "sleep_until", "wait_for_event"],
)
def test_a_checkpoint_ending_past_year_9999_fails_its_run_as_a_bad_sleep_does(
    engine: Engine, checkpoint: Any, said: str
) -> None:
    """As ``ctx.sleep("nap", 5)`` does: the run fails with the ConfigError, and nothing
    that could not be read back as a datetime is stored (its page still reads)."""

    @engine.workflow("far")
    def far(ctx: Context) -> None:
        checkpoint(ctx)

    handle = engine.start("far")
    engine.run_until_idle()
    info = engine.get_run(handle.id)
    assert info is not None and info.status == "failed"
    assert info.error is not None and re.search(f"ConfigError: {said}", info.error)
    assert engine.list_steps(handle.id) == []


def test_a_schedule_whose_occurrences_reach_past_year_9999_ends_as_past_its_end(
    db_url: str,
) -> None:
    """Under a clock near the end of 9999 an interval's next occurrence passes it: the
    schedule has no occurrence left (as past ``end_at``), and every face reads it."""
    clock = FakeClock(datetime(9999, 12, 31, 23, 0, tzinfo=UTC))
    with Engine(db_url, clock=clock) as engine:

        @engine.workflow("job")
        def job(ctx: Context) -> None:
            return None

        engine.schedule("job", every="20m", key="late")
        clock.advance("40m")
        assert engine.tick() == ["late@9999-12-31T23:40:00.000Z"]
        (schedule,) = engine.list_schedules()
        assert schedule.next_fire_at is None
        assert engine.tick() == []


def test_an_instant_past_year_9999_already_stored_is_shown_not_a_crash(
    sqlite_url: str, clock: FakeClock
) -> None:
    """A database written before the bound may hold one: ``runs show`` and the run's
    page read it as the last instant."""
    with Engine(sqlite_url, clock=clock) as engine:

        @engine.workflow("nap")
        def nap(ctx: Context) -> None:
            ctx.sleep("long", "1d")

        run_id = engine.start("nap").id
        engine.run_until_idle()
    far = 316_000_000_000_000  # year 11983
    with sqlite3.connect(sqlite_url.removeprefix("sqlite:///")) as db:
        db.execute("UPDATE tickwork_steps SET result = ? WHERE kind = 'sleep'", (str(far),))
    shown = CliRunner().invoke(main, ["runs", "show", run_id, "--database", sqlite_url])
    assert shown.exit_code == 0, shown.output
    assert "9999-12-31" in shown.output
    with Engine(sqlite_url, clock=clock) as engine, ExitStack() as stack:
        browser = Browser(create_app(engine), stack)
        key = engine.create_api_key("look")
        assert browser.login(key).status_code == 303
        page = browser.get("/run", params={"id": run_id})
        api = browser.get(f"/api/v1/runs/{run_id}", headers={"Authorization": f"Bearer {key}"})
    assert page.status_code == 200 and "9999-12-31" in page.text
    assert api.status_code == 200, api.text


# -- events and inputs: every face typed (docs/events.md, docs/behaviour.md) ---------------


def nested(depth: int) -> Any:
    """A JSON value of ``depth`` lists, one inside the other."""
    value: Any = []
    for _ in range(depth - 1):
        value = [value]
    return value


@pytest.mark.parametrize("depth", [101, 100_000])
def test_a_payload_or_input_nested_deeper_than_100_levels_is_refused_before_anything_is_stored(
    typed: Engine, depth: int
) -> None:
    with pytest.raises(ConfigError, match="payload nests deeper than 100 levels"):
        typed.emit("deep", nested(depth))
    with pytest.raises(InputValidationError, match="nests deeper than 100 levels"):
        typed.start("anything", nested(depth))
    assert typed.list_events() == [] and typed.list_runs() == []


def test_a_payload_and_an_input_100_levels_deep_are_kept_whole(typed: Engine) -> None:
    typed.emit("deep", nested(100), id="deep")
    event = typed.get_event("deep")
    assert event is not None and event.payload == nested(100)
    handle = typed.start("anything", nested(100))
    typed.run_until_idle()
    assert handle.result() == nested(100)


@pytest.mark.parametrize(
    "emit",
    [
        lambda e: e.emit("lone\udcff"),
        lambda e: e.emit("ok", id="\udcff"),  # what a CLI reads from a non-UTF-8 --id
        lambda e: e.emit("ok", {"a": "\ud800"}),
        lambda e: e.emit("ok", {"\udfff": 1}),
        lambda e: e.start("anything", {"a": "x\ud800y"}),
        lambda e: e.start("anything", ["\udc80"]),
    ],
    ids=["event-name", "event-id", "payload-value", "payload-key", "input", "input-list"],
)
def test_a_lone_surrogate_in_an_event_or_an_input_is_a_config_error_and_nothing_is_stored(
    typed: Engine, emit: Any
) -> None:
    with pytest.raises(ConfigError, match="surrogate"):
        emit(typed)
    assert typed.list_events() == [] and typed.list_runs() == []


def test_a_character_beyond_the_basic_plane_is_no_lone_surrogate(typed: Engine) -> None:
    typed.emit("ok", {"smile": "\U0001f600", "escaped": "\\ud800"}, id="plane-1")
    event = typed.get_event("plane-1")
    assert event is not None and event.payload == {"smile": "\U0001f600", "escaped": "\\ud800"}


#: characters that spoof what the CLI and the dashboard show: bidi embeddings, overrides,
#: isolates; line and paragraph separators
SPOOFING = ["\u202a", "\u202b", "\u202c", "\u202d", "\u202e", "\u2066", "\u2067", "\u2068",
            "\u2069", "\u2028", "\u2029"]  # fmt: skip


USES = ["event-name", "event-id", "run-id", "pool", "schedule-key", "subscription-key",
        "match-path", "api-key-name", "note"]  # fmt: skip


@pytest.mark.parametrize("char", SPOOFING, ids=[f"U+{ord(c):04X}" for c in SPOOFING])
@pytest.mark.parametrize(
    "use",
    [
        lambda e, t: e.emit(t),
        lambda e, t: e.emit("ok", id=t),
        lambda e, t: e.start("no-input", run_id=t),
        lambda e, t: e.start("no-input", pool=t),
        lambda e, t: e.schedule("no-input", every="1h", key=t),
        lambda e, t: e.subscribe("anything", "ok", key=t),
        lambda e, t: e.subscribe("anything", "ok", match={t: 1}),
        lambda e, t: e.create_api_key(t),
        lambda e, t: e.pause("hourly", note=t),
    ],
    ids=USES,
)
def test_bidi_controls_and_line_separators_are_refused_like_control_characters(
    typed: Engine, use: Any, char: str
) -> None:
    typed.schedule("no-input", every="1h", key="hourly")
    with pytest.raises(ConfigError, match="bidi controls, line separators"):
        use(typed, f"invoice{char}fdp.exe")
    assert typed.list_events() == [] and typed.list_runs() == []
    assert [s.key for s in typed.list_schedules()] == ["hourly"]
    assert typed.list_subscriptions() == [] and typed.list_api_keys() == []
    assert typed.schedule_history("hourly") == []


@pytest.mark.parametrize(
    "build",
    [
        lambda path: On("paid", match={path: 1}),
        lambda path: On("paid", debounce="1m", key=path),
        lambda path: On("paid", input={"order": path}),
        lambda path: On("paid", input={path: "order.id"}),
    ],
    ids=["match", "key", "input-path", "input-key"],
)
def test_a_payload_path_longer_than_200_characters_is_refused(build: Any) -> None:
    build("a." * 99 + "bc")  # 200 characters: kept
    with pytest.raises(ConfigError, match="200 characters"):
        build("a." * 100 + "b")


def test_a_subscription_with_a_too_long_match_path_is_not_stored(typed: Engine) -> None:
    with pytest.raises(ConfigError, match="at most 200 characters"):
        typed.subscribe("anything", "paid", match={"x" * 201: 1})
    assert typed.list_subscriptions() == []


@pytest.mark.parametrize(
    "payload", [nested(101), {"a": "\ud800"}], ids=["too-deep", "lone-surrogate"]
)
def test_a_bad_payload_given_to_ctx_emit_fails_the_run_and_emits_nothing(
    engine: Engine, payload: Any
) -> None:
    @engine.workflow("emitter")
    def emitter(ctx: Context) -> None:
        ctx.emit("out", payload)

    handle = engine.start("emitter")
    engine.run_until_idle()
    info = engine.get_run(handle.id)
    assert info is not None and info.status == "failed"
    assert info.error is not None and info.error.startswith("ConfigError: An event's payload")
    assert engine.list_events() == []


def test_a_retry_whose_back_off_ends_past_year_9999_waits_until_the_last_instant(
    engine: Engine, clock: FakeClock
) -> None:
    """A back-off accepted as a duration, added to now, is capped at the last instant:
    the run waits there (pending), and an engine still reads when it is next due."""
    far = Retry(max_attempts=2, backoff=PAST_9999, max_backoff=PAST_9999)

    @engine.workflow("flaky", retry=far)
    def flaky(ctx: Context) -> None:
        raise RuntimeError("down")

    handle = engine.start("flaky")
    assert engine.run_until_idle() == 1
    info = engine.get_run(handle.id)
    assert info is not None and info.status == "pending" and info.attempt == 2
    clock.set(datetime.max.replace(tzinfo=UTC))
    assert engine.run_until_idle() == 1  # due at the last instant, not never readable
    info = engine.get_run(handle.id)
    assert info is not None and info.status == "failed"
