"""The schedule spec: one validated value that every face builds, so an option is added in
one place and every face refuses a bad value the same way, before anything is stored."""

from __future__ import annotations

import dataclasses
import inspect
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from pydantic import TypeAdapter

from tickwork import Client, Cron, Engine, Every, Retry
from tickwork._edge.declared import load_config
from tickwork._rules.spec import (
    MAX_CATCHUP,
    MAX_KEY,
    MAX_RUNS,
    ScheduleOptions,
    ScheduleSpec,
    option_names,
    spec_from,
)
from tickwork._values.models import Overlap
from tickwork._values.records import ScheduleRecord
from tickwork.errors import ConfigError, CronError
from tickwork.server.openapi import openapi_document

#: a valid value for every option, as a user would pass it
SAMPLE: dict[str, Any] = {
    "workflow": "report",
    "input": {"day": "today"},
    "every": "15m",
    "cron": None,
    "timezone": "Europe/London",
    "key": "report-15m",
    "overlap": "skip",
    "catchup": 3,
    "catchup_window": "1h",
    "jitter": "30s",
    "paused": False,
    "pool": "reports",
    "priority": 5,
    "retry": Retry(max_attempts=2),
    "start_at": datetime(2026, 1, 1, tzinfo=UTC),
    "end_at": datetime(2027, 1, 1, tzinfo=UTC),
    "pause_after_failures": 3,
    "dst_gap": "skip",
    "dst_repeat": "both",
    "calendar": "uk",
    "on_holiday": "next",
    "max_runs": 10,
    "deadline": "15m",
    "on_conflict": "keep",
}


def test_sample_names_every_option_of_the_spec() -> None:
    assert set(SAMPLE) == set(option_names())


@pytest.mark.parametrize("face", [Engine.schedule, Client.schedule])
def test_each_option_is_a_parameter_of_engine_and_client_schedule_with_the_same_default(
    face: Any,
) -> None:
    parameters = inspect.signature(face).parameters
    for field in dataclasses.fields(ScheduleSpec):
        assert field.name in parameters, f"{face.__qualname__} lacks {field.name}"
        if field.name != "workflow":  # positional and required on the faces
            assert parameters[field.name].default == field.default, field.name


#: what a JSON Schema says of the values a property takes (besides its type)
BOUNDS = ("minimum", "maximum", "minLength", "maxLength", "pattern", "enum", "const")


def bounds(schema: dict[str, Any], document: dict[str, Any]) -> list[dict[str, Any]]:
    """The bounds of each value a property's schema allows: one entry per kind of value
    (an ``anyOf`` member; null aside), ``$ref``s followed, in a stable order."""
    if "$ref" in schema:
        name = schema["$ref"].rsplit("/", 1)[-1]
        defs = document.get("$defs") or document["components"]["schemas"]
        return bounds(defs[name], document)
    if "anyOf" in schema:
        members = [member for member in schema["anyOf"] if member.get("type") != "null"]
        return sorted((b for member in members for b in bounds(member, document)), key=repr)
    return [{name: schema[name] for name in BOUNDS if name in schema}]


def spec_schema() -> dict[str, Any]:
    return TypeAdapter(ScheduleSpec).json_schema()


def test_each_option_is_a_property_of_the_http_body() -> None:
    schemas = openapi_document()["components"]["schemas"]
    properties = schemas["ScheduleCreate"]["properties"]
    assert set(option_names()) == set(properties)


@pytest.mark.parametrize("name", option_names())
def test_the_http_body_documents_each_options_bounds_and_default_as_the_spec_declares(
    name: str,
) -> None:
    """The API's schema says what the spec enforces: 1 to 1,000 for catchup, the key's
    length and characters... (the body's shape differs only where JSON must: durations
    and instants as strings, the retry policy as an object)."""
    document = openapi_document()
    http = document["components"]["schemas"]["ScheduleCreate"]["properties"][name]
    spec = spec_schema()
    declared = spec["properties"][name]
    durations = ("every", "catchup_window", "jitter", "deadline")
    if name not in (*durations, "retry", "start_at", "end_at"):
        assert bounds(http, document) == bounds(declared, spec)
    if name != "workflow":  # required in the body, bound later in a declaration
        assert http.get("default") == declared.get("default")


def test_the_spec_declares_the_bounds_it_enforces() -> None:
    """What the parity tests compare is the real bound: the spec refuses past it."""
    properties = spec_schema()["properties"]
    for name, limit in (
        ("catchup", MAX_CATCHUP),
        ("pause_after_failures", 10_000),
        ("max_runs", MAX_RUNS),
    ):
        assert {"minimum": 1, "maximum": limit} in bounds(properties[name], {})
        ScheduleSpec(**{**SAMPLE, name: limit})
        with pytest.raises(ConfigError, match=f"^{name} must be an int from 1 to {limit}\\b"):
            ScheduleSpec(**{**SAMPLE, name: limit + 1})
    assert properties["key"]["anyOf"][0]["maxLength"] == MAX_KEY


def test_the_config_file_refuses_past_the_bound_as_the_spec_does(tmp_path: Path) -> None:
    path = tmp_path / "tickwork.toml"
    path.write_text(f'[[schedules]]\nworkflow = "w"\nevery = "1m"\ncatchup = {MAX_CATCHUP}\n')
    (spec,) = load_config(path)
    assert spec.catchup == MAX_CATCHUP
    path.write_text(f'[[schedules]]\nworkflow = "w"\nevery = "1m"\ncatchup = {MAX_CATCHUP + 1}\n')
    with pytest.raises(ConfigError, match=r"schedule 1: catchup must be an int from 1 to 1000"):
        load_config(path)


def test_cron_and_every_take_the_specs_defaults_for_their_own_arguments() -> None:
    defaults = {field.name: field.default for field in dataclasses.fields(ScheduleSpec)}
    for declaration in (Cron, Every):
        parameters = inspect.signature(declaration).parameters
        for name in ("timezone", "key"):
            assert parameters[name].default == defaults[name], (declaration, name)
    assert Every("1m").spec == ScheduleSpec(every="1m")
    assert Cron("* * * * *").spec == ScheduleSpec(cron="* * * * *")


def test_each_option_but_the_cadence_and_key_is_a_keyword_of_cron_and_every() -> None:
    options = {
        name: value
        for name, value in SAMPLE.items()
        if name not in ("workflow", "every", "cron", "timezone", "key")
    }
    declared = Cron("0 9 * * *", timezone="Europe/London", key="k", **options)
    assert declared.spec.overlap == "skip" and declared.spec.jitter == timedelta(seconds=30)
    assert Every("15m", key="k", **options).spec.retry == Retry(max_attempts=2)


def test_each_option_is_a_key_of_a_config_file_table(tmp_path: Path) -> None:
    lines = ["[[schedules]]"]
    for name, value in SAMPLE.items():
        if value is None:
            continue
        if isinstance(value, Retry):
            lines.append(f"{name} = {{ max_attempts = {value.max_attempts} }}")
        elif isinstance(value, datetime):
            lines.append(f"{name} = {value.isoformat()}")
        elif isinstance(value, bool):
            lines.append(f"{name} = {str(value).lower()}")
        elif isinstance(value, dict):
            lines.append(f'{name} = {{ day = "{value["day"]}" }}')
        elif isinstance(value, int):
            lines.append(f"{name} = {value}")
        else:
            lines.append(f'{name} = "{value}"')
    path = tmp_path / "tickwork.toml"
    path.write_text("\n".join(lines) + "\n")
    (spec,) = load_config(path)
    assert spec == ScheduleSpec(**SAMPLE)


@pytest.mark.parametrize(
    ("changes", "error", "words"),
    [
        ({"every": None}, ConfigError, "exactly one of every= or cron="),
        ({"cron": "0 9 * * *"}, ConfigError, "exactly one of every= or cron="),
        ({"every": None, "cron": "0 25 * * *"}, CronError, "hour"),
        ({"timezone": "Mars/Olympus"}, ConfigError, "Mars/Olympus"),
        ({"every": "0s"}, ConfigError, "every|duration|positive|zero"),
        ({"key": "a b"}, ConfigError, "schedule key"),
        ({"key": "a/b"}, ConfigError, "schedule key"),
        ({"key": "x" * 151}, ConfigError, "schedule key"),
        ({"overlap": "sometimes"}, ConfigError, "Unknown overlap"),
        ({"catchup": 0}, ConfigError, "catchup"),
        ({"catchup": True}, ConfigError, "catchup"),
        ({"paused": "yes"}, ConfigError, "paused"),
        ({"pool": ""}, ConfigError, "pool"),
        ({"priority": 1.5}, ConfigError, "priority"),
        ({"retry": {"max_attempts": 2}}, ConfigError, "retry"),
        ({"start_at": datetime(2026, 1, 1)}, ConfigError, "start_at"),
        ({"end_at": datetime(2025, 1, 1, tzinfo=UTC)}, ConfigError, "end_at"),
        ({"on_conflict": "merge"}, ConfigError, "on_conflict"),
        ({"workflow": ""}, ConfigError, "workflow"),
        ({"pause_after_failures": 0}, ConfigError, "pause_after_failures"),
        ({"pause_after_failures": True}, ConfigError, "pause_after_failures"),
        ({"pause_after_failures": "3"}, ConfigError, "pause_after_failures"),
        ({"pause_after_failures": 10_001}, ConfigError, "pause_after_failures"),
        ({"max_runs": 0}, ConfigError, "max_runs"),
        ({"max_runs": True}, ConfigError, "max_runs"),
        ({"max_runs": "10"}, ConfigError, "max_runs"),
        ({"max_runs": 10**9 + 1}, ConfigError, "max_runs"),
        ({"deadline": "8d"}, ConfigError, "deadline must be at most 7 d"),
        ({"deadline": 15}, ConfigError, "deadline"),
        ({"deadline": "0s"}, ConfigError, "deadline|zero|positive"),
        ({"catchup": 1001}, ConfigError, "catchup"),
        ({"catchup": "some"}, ConfigError, "catchup"),
        ({"priority": 2**63}, ConfigError, "priority"),
        ({"timezone": 3}, ConfigError, "timezone"),
        ({"cron": 3, "every": None}, ConfigError, "cron"),
    ],
)
def test_a_bad_option_is_refused_with_a_config_error_naming_it(
    changes: dict[str, Any], error: type[Exception], words: str
) -> None:
    with pytest.raises(error, match=words):
        ScheduleSpec(**{**SAMPLE, **changes})


def test_the_spec_is_normalised_once_frozen_and_hashable() -> None:
    spec = ScheduleSpec(**{**SAMPLE, "every": None, "cron": "0   9 * *  MON-FRI"})
    assert spec.cron == "0 9 * * MON-FRI"
    assert spec.jitter == timedelta(seconds=30) and spec.jitter_ms == 30_000
    assert spec.overlap == "skip" and spec.catchup_count == 3
    with pytest.raises(dataclasses.FrozenInstanceError):
        spec.key = "other"  # type: ignore[misc]
    assert spec == ScheduleSpec(**{**SAMPLE, "every": None, "cron": "0 9 * * MON-FRI"})
    assert ScheduleSpec(every="1m", catchup="all").catchup_count is None


def test_unknown_options_in_a_table_are_named_with_the_known_ones() -> None:
    with pytest.raises(ConfigError, match=r"somewhere: unknown option\(s\) \['color'\]"):
        spec_from({"workflow": "w", "every": "1m", "color": "red"}, "somewhere")


@pytest.mark.parametrize(
    "build",
    [
        lambda: Cron("* * * * *", key="a b"),
        lambda: Every("1m", key="a b"),
        lambda: spec_from({"workflow": "w", "every": "1m", "key": "a b"}, "tickwork.toml"),
    ],
)
def test_a_key_refused_by_engine_is_refused_by_every_declared_form_when_built(build: Any) -> None:
    with pytest.raises(ConfigError, match="schedule key"):
        build()


def test_the_typed_options_name_every_option_of_the_spec() -> None:
    """``ScheduleOptions`` types ``**options`` for type checkers and editors: a field added
    to the spec without its line there would go untyped, so this keeps them equal."""
    assert list(ScheduleOptions.__annotations__) == [
        name for name in option_names() if name not in ("workflow", "input")
    ]


def test_an_unknown_keyword_is_refused_as_python_refuses_one_with_the_closest_option() -> None:
    engine = Engine("sqlite:///:memory:")
    engine.workflow("job")(lambda ctx: None)
    with pytest.raises(TypeError, match=r"unexpected keyword argument 'catchp'.*'catchup'"):
        engine.schedule("job", every="1h", catchp=3)  # type: ignore[call-arg]
    assert engine.list_schedules() == []


def test_an_option_without_a_column_is_read_back_from_the_definition() -> None:
    record = ScheduleRecord(
        key="k", workflow="w", version="1", input_json=None, cron=None, every_ms=1000,
        timezone="UTC", overlap=Overlap.ALLOW, catchup=1, catchup_window_ms=None,
        jitter_ms=None, pool="default", priority=0, retry_json=None, start_ms=None,
        end_ms=None, definition='{"every_ms": 1000, "options": {"colour": "red"}}',
    )  # fmt: skip
    assert record.option("colour") == "red"
    assert record.option("size", "M") == "M"
    assert replace(record, definition='{"every_ms": 1000}').option("colour") is None
