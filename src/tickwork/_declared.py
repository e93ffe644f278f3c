"""Declared schedules: beside a workflow, in ``Engine(schedules=...)`` or in tickwork.toml.

Each declaration becomes the keyword arguments of one ``engine.schedule(...)`` call. A
workflow's own declarations are keyed by the workflow name (``name:i`` for several); a
deployment's (``Engine(schedules=...)``, then the config file) win over them by key.
"""

from __future__ import annotations

import os
import tomllib
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from ._cadence import Cron, Every
from ._retry import Retry
from .errors import ConfigError

__all__ = [
    "SCHEDULE_OPTIONS",
    "config_path",
    "deployment_schedules",
    "load_config",
    "merge",
    "workflow_schedules",
]

#: the keyword arguments of ``engine.schedule`` a declaration may carry
SCHEDULE_OPTIONS = frozenset(
    {
        "input",
        "every",
        "cron",
        "timezone",
        "key",
        "overlap",
        "catchup",
        "catchup_window",
        "jitter",
        "paused",
        "pool",
        "priority",
        "retry",
        "start_at",
        "end_at",
        "on_conflict",
    }
)


def workflow_schedules(workflow: str, declared: object) -> list[dict[str, Any]]:
    """The ``schedule=`` of ``@engine.workflow`` as ``schedule()`` calls, keyed by default
    by the workflow name (or ``name:i`` when there are several)."""
    if declared is None:
        return []
    items = list(declared) if isinstance(declared, list | tuple) else [declared]
    calls = []
    for index, item in enumerate(items):
        call = _from_cadence(item)
        if call.get("key") is None:
            call["key"] = workflow if len(items) == 1 else f"{workflow}:{index}"
        calls.append({"workflow": workflow, **call})
    return calls


def _from_cadence(item: object) -> dict[str, Any]:
    if isinstance(item, Cron):
        return {"cron": item.expr, "timezone": item.timezone, "key": item.key, **item.options}
    if isinstance(item, Every):
        return {"every": item.every, "timezone": item.timezone, "key": item.key, **item.options}
    raise ConfigError(
        f"schedule= takes tickwork.Cron(...), tickwork.Every(...) or a list of them, not {item!r}"
    )


def deployment_schedules(entries: Iterable[object], source: str) -> list[dict[str, Any]]:
    """Schedules declared for a deployment: mappings with ``workflow`` and ``schedule()``
    options, as in ``Engine(schedules=[...])`` or a config file's ``[[schedules]]``."""
    calls = []
    for position, entry in enumerate(entries, start=1):
        where = f"{source}, schedule {position}"
        if not isinstance(entry, Mapping):
            raise ConfigError(f"{where}: expected a table of schedule options, not {entry!r}")
        call = dict(entry)
        workflow = call.pop("workflow", None)
        if not isinstance(workflow, str) or not workflow:
            raise ConfigError(f"{where}: 'workflow' (the workflow's name) is required")
        unknown = set(call) - SCHEDULE_OPTIONS
        if unknown:
            raise ConfigError(f"{where}: unknown option(s) {sorted(unknown)}")
        if isinstance(call.get("retry"), Mapping):
            call["retry"] = Retry(**call["retry"])
        calls.append({"workflow": workflow, **call})
    return calls


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


def load_config(path: Path) -> list[dict[str, Any]]:
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
    declared: Sequence[dict[str, Any]], *deployments: Sequence[dict[str, Any]]
) -> list[dict[str, Any]]:
    """Declarations by key, later sources winning; keyless deployment entries kept as is."""
    by_key: dict[str, dict[str, Any]] = {}
    keyless: list[dict[str, Any]] = []
    for source in (declared, *deployments):
        for call in source:
            key = call.get("key")
            if key is None:
                keyless.append(call)
            else:
                by_key[key] = call
    return [*by_key.values(), *keyless]
