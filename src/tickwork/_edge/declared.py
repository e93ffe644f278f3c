"""Declared schedules: beside a workflow, in ``Engine(schedules=...)`` or in tickwork.toml.

``Cron`` and ``Every`` are what ``@engine.workflow(schedule=...)`` and
``Engine(schedules=...)`` take: each builds its ``ScheduleSpec`` when it is built, so a bad
declaration fails at import time rather than when a worker starts, with the same checks
as ``engine.schedule``. A workflow's own declarations are keyed by the workflow name
(``name:i`` for several); a deployment's (``Engine(schedules=...)``, then the config file)
win over them by key.
"""

from __future__ import annotations

import dataclasses
import os
import tomllib
from collections.abc import Iterable, Mapping, Sequence
from datetime import timedelta
from pathlib import Path
from types import MappingProxyType
from typing import Any

from .._rules.registry import Registry, WorkflowDef
from .._rules.spec import ScheduleSpec, option_names, spec_from
from .._values.durations import Duration, format_duration, to_ms
from ..errors import ConfigError, InputValidationError

__all__ = [
    "Cron",
    "Declarations",
    "Every",
    "config_path",
    "deployment_schedules",
    "load_config",
    "merge",
    "workflow_schedules",
]

# What ``Cron``/``Every`` take as arguments of their own; the rest of the spec's fields
# are their keyword options.
_OWN = frozenset({"workflow", "cron", "every", "timezone", "key"})


def _declared_spec(options: Mapping[str, Any], **own: Any) -> ScheduleSpec:
    unknown = sorted(set(options) - (set(option_names()) - _OWN))
    if unknown:
        known = sorted(set(option_names()) - _OWN)
        raise ConfigError(f"Unknown schedule option(s) {unknown}: expected some of {known}")
    return ScheduleSpec(**own, **options)


def _repr(name: str, first: object, named: Mapping[str, object], options: Mapping[str, Any]) -> str:
    parts = [repr(first)]
    parts += [f"{key}={value!r}" for key, value in named.items()]
    parts += [f"{key}={value!r}" for key, value in options.items()]
    return f"{name}({', '.join(parts)})"


@dataclasses.dataclass(frozen=True, init=False, repr=False)
class Cron:
    """A cron cadence: ``Cron("0 2 * * *", timezone="America/Sao_Paulo", key=None)``.

    Further keyword arguments are ``engine.schedule`` options (``overlap="skip"``,
    ``catchup=3``, ``input={...}``...), kept in ``options``; ``spec`` is the whole
    validated definition.
    """

    expr: str
    spec: ScheduleSpec = dataclasses.field(hash=False, compare=False)
    timezone: str = "UTC"
    key: str | None = None
    options: Mapping[str, Any] = dataclasses.field(default_factory=dict, hash=False)

    def __init__(
        self, expr: str, timezone: str = "UTC", key: str | None = None, **options: Any
    ) -> None:
        spec = _declared_spec(options, cron=expr, timezone=timezone, key=key)
        object.__setattr__(self, "expr", expr)
        object.__setattr__(self, "timezone", timezone)
        object.__setattr__(self, "key", key)
        object.__setattr__(self, "options", MappingProxyType(dict(options)))
        object.__setattr__(self, "spec", spec)

    def __repr__(self) -> str:
        named = {"timezone": self.timezone, "key": self.key}
        return _repr("Cron", self.expr, named, self.options)


@dataclasses.dataclass(frozen=True, init=False, repr=False)
class Every:
    """An interval cadence: ``Every("15m", key=None)``; ``every`` is kept as a timedelta.

    ``every`` takes any duration form (``"1h30m"``, ms, timedelta, dict). Further keyword
    arguments are ``engine.schedule`` options, kept in ``options``.
    """

    every: timedelta
    spec: ScheduleSpec = dataclasses.field(hash=False, compare=False)
    key: str | None = None
    timezone: str = "UTC"
    options: Mapping[str, Any] = dataclasses.field(default_factory=dict, hash=False)

    def __init__(
        self, every: Duration, key: str | None = None, timezone: str = "UTC", **options: Any
    ) -> None:
        step = timedelta(milliseconds=to_ms(every, "every"))  # ConfigError
        spec = _declared_spec(options, every=step, timezone=timezone, key=key)
        object.__setattr__(self, "every", step)
        object.__setattr__(self, "key", key)
        object.__setattr__(self, "timezone", timezone)
        object.__setattr__(self, "options", MappingProxyType(dict(options)))
        object.__setattr__(self, "spec", spec)

    def __repr__(self) -> str:
        named = {"key": self.key, "timezone": self.timezone}
        return _repr("Every", format_duration(self.every), named, self.options)


def workflow_schedules(definition: WorkflowDef) -> list[ScheduleSpec]:
    """The ``schedule=`` of ``@engine.workflow`` as specs bound to the workflow, keyed by
    default by the workflow name (or ``name:i`` when there are several).

    Each declaration's input is checked against the workflow's now, at decoration time: a
    workflow whose input is required (annotated, without a default) needs ``input=`` in
    its ``Cron``/``Every``, else every occurrence would be refused when a worker starts.
    """
    workflow, declared = definition.name, definition.schedule
    if declared is None:
        return []
    items = list(declared) if isinstance(declared, list | tuple) else [declared]
    specs = []
    for index, item in enumerate(items):
        if not isinstance(item, Cron | Every):
            raise ConfigError(
                "schedule= takes tickwork.Cron(...), tickwork.Every(...) or a list of them, "
                f"not {item!r}"
            )
        _check_input(definition, item)
        key = item.key
        if key is None:
            key = workflow if len(items) == 1 else f"{workflow}:{index}"
        specs.append(dataclasses.replace(item.spec, workflow=workflow, key=key))
    return specs


def _check_input(definition: WorkflowDef, item: Cron | Every) -> None:
    """``InputValidationError`` when the declaration's input does not fit the workflow."""
    try:
        definition.validate_input(item.spec.input)
    except InputValidationError as exc:
        kind = type(item).__name__
        if item.spec.input is None:
            raise InputValidationError(
                f"Workflow {definition.name!r} needs an input, but its declared schedule "
                f"{item!r} has none: pass input=... to {kind}(...), e.g. "
                f"{kind}(..., input={{...}})"
            ) from exc
        raise InputValidationError(f"The declared schedule {item!r}: {exc}") from exc


def deployment_schedules(entries: Iterable[object], source: str) -> list[ScheduleSpec]:
    """Schedules declared for a deployment: mappings with ``workflow`` and ``schedule()``
    options, as in ``Engine(schedules=[...])`` or a config file's ``[[schedules]]``."""
    specs = []
    for position, entry in enumerate(entries, start=1):
        where = f"{source}, schedule {position}"
        if not isinstance(entry, Mapping):
            raise ConfigError(f"{where}: expected a table of schedule options, not {entry!r}")
        workflow = entry.get("workflow")
        if not isinstance(workflow, str) or not workflow:
            raise ConfigError(f"{where}: 'workflow' (the workflow's name) is required")
        specs.append(spec_from(entry, where))
    return specs


def config_path(explicit: str | os.PathLike[str] | None) -> Path | None:
    """The config file to read: ``explicit``, else ``$TICKWORK_CONFIG``, else
    ``tickwork.toml`` in the current folder when it exists."""
    if explicit is not None:
        return Path(explicit)
    from_env = os.environ.get("TICKWORK_CONFIG")
    if from_env:
        return Path(from_env)
    default = Path("tickwork.toml")
    return default if default.is_file() else None


def load_config(path: Path) -> list[ScheduleSpec]:
    """The ``[[schedules]]`` of a tickwork.toml."""
    try:
        data = tomllib.loads(path.read_text("utf-8"))
    except FileNotFoundError:
        raise ConfigError(f"Config file {str(path)!r} does not exist") from None
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise ConfigError(f"Cannot read config file {str(path)!r}: {exc}") from exc
    unknown = set(data) - {"schedules"}
    if unknown:
        raise ConfigError(f"{path}: unknown section(s) {sorted(unknown)}")
    schedules = data.get("schedules", [])
    if not isinstance(schedules, list):
        raise ConfigError(f"{path}: 'schedules' must be an array of tables ([[schedules]])")
    return deployment_schedules(schedules, str(path))


def merge(
    declared: Sequence[ScheduleSpec], *deployments: Sequence[ScheduleSpec]
) -> list[ScheduleSpec]:
    """Declarations by key, later sources winning; keyless deployment entries kept as is."""
    by_key: dict[str, ScheduleSpec] = {}
    keyless: list[ScheduleSpec] = []
    for source in (declared, *deployments):
        for spec in source:
            if spec.key is None:
                keyless.append(spec)
            else:
                by_key[spec.key] = spec
    return [*by_key.values(), *keyless]


class Declarations:
    """Where an engine's declared schedules come from, merged in order (later wins by key):
    ``@engine.workflow(schedule=...)``, ``Engine(schedules=[...])`` (checked when the engine
    is built), the config file (``Engine(config=...)``, ``$TICKWORK_CONFIG`` or
    ./tickwork.toml, read at each sync so that an edit is picked up by the next start)."""

    def __init__(self, deployment: Iterable[object], config: str | os.PathLike[str] | None) -> None:
        self._deployment = deployment_schedules(deployment, "Engine(schedules=...)")
        self._config = config

    def specs(self, registry: Registry) -> list[ScheduleSpec]:
        declared = [spec for d in registry for spec in workflow_schedules(d)]
        path = config_path(self._config)
        from_file = load_config(path) if path is not None else []
        return merge(declared, self._deployment, from_file)
