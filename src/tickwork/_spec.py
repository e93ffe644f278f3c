"""The schedule spec: ``engine.schedule``'s options as one frozen, validated value.

Every face builds one and hands it on: ``Engine.schedule`` and ``Client.schedule`` from
their keyword arguments, the HTTP API from its JSON body, ``Cron``/``Every`` from a
declaration, ``Engine(schedules=...)`` and tickwork.toml from their tables. So an option
is added here, as one field and its check, and every face refuses a bad value with the
same ``ConfigError`` before anything is stored (STYLE habit 9: typed, frozen,
keyword-only configuration converted once at the edge).

What needs the workflow's definition (that it exists, the input against its annotation,
the default pool and priority) is checked when the spec is registered.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Mapping
from datetime import datetime
from typing import Any

from . import _clock, cron
from ._durations import Duration, describe_duration, parse_duration, to_ms
from ._models import Overlap
from ._registry import check_name, check_pool, check_priority
from ._retry import Retry
from .errors import ConfigError

__all__ = ["MAX_KEY", "ON_CONFLICT", "ScheduleSpec", "check_key", "option_names", "spec_from"]

ON_CONFLICT = ("update", "error", "keep")
#: the most missed occurrences ``catchup=N`` starts (``"all"`` starts any number in batches)
MAX_CATCHUP = 1000
#: the longest jitter a cron schedule takes
MAX_CRON_JITTER_MS = 86_400_000
MAX_KEY = 150
#: the most failed runs in a row ``pause_after_failures`` waits for
MAX_PAUSE_AFTER_FAILURES = 10_000
_KEY_CHARS = re.compile(r"^[^\s\x00-\x1f\x7f-\x9f/]+$")


@dataclasses.dataclass(frozen=True, kw_only=True)
class ScheduleSpec:
    """A schedule's definition as a user wrote it, checked and normalised.

    Durations are kept as ``timedelta``, ``overlap`` as ``Overlap``, ``cron`` with its
    whitespace folded; ``workflow`` is None only in a declaration not yet bound to its
    workflow (``Cron(...)``/``Every(...)`` before ``@engine.workflow`` takes it).
    """

    workflow: str | None = None
    input: Any = None
    every: Duration | None = None
    cron: str | None = None
    timezone: str = "UTC"
    key: str | None = None
    overlap: Overlap | str = Overlap.ALLOW
    catchup: int | str = 1
    catchup_window: Duration | None = None
    jitter: Duration | None = None
    paused: bool | None = None
    pool: str | None = None
    priority: int | None = None
    retry: Retry | None = None
    start_at: datetime | None = None
    end_at: datetime | None = None
    pause_after_failures: int | None = None
    on_conflict: str = "update"

    def __post_init__(self) -> None:
        if self.workflow is not None:
            check_name(self.workflow, "A workflow name")
        if (self.every is None) == (self.cron is None):
            raise ConfigError("Pass exactly one of every= or cron=")
        if not isinstance(self.timezone, str):
            raise ConfigError(f"timezone must be an IANA zone name, not {self.timezone!r}")
        cron.load_zone(self.timezone)
        if self.cron is not None:
            if not isinstance(self.cron, str):
                raise ConfigError(f"cron must be a string, not {self.cron!r}")
            self._set("cron", " ".join(self.cron.split()))
            cron.parse(self.cron, self.timezone)
        for name in ("every", "catchup_window", "jitter"):
            value = getattr(self, name)
            if value is not None:
                try:
                    self._set(name, parse_duration(value))
                except ConfigError as exc:
                    raise ConfigError(f"{name}: {exc}") from None
        if self.key is not None:
            check_key(self.key)
        try:
            self._set("overlap", Overlap(self.overlap))
        except ValueError:
            raise ConfigError(
                f"Unknown overlap {self.overlap!r}: expected one of {[o.value for o in Overlap]}"
            ) from None
        if self.catchup != "all" and (
            isinstance(self.catchup, bool)
            or not isinstance(self.catchup, int)
            or not 1 <= self.catchup <= MAX_CATCHUP
        ):
            raise ConfigError(
                f'catchup must be an int from 1 to {MAX_CATCHUP} or "all", not {self.catchup!r}'
            )
        self._check_jitter()
        if self.paused is not None and not isinstance(self.paused, bool):
            raise ConfigError(f"paused must be True, False or None, not {self.paused!r}")
        if self.pool is not None:
            check_pool(self.pool)
        if self.priority is not None:
            check_priority(self.priority)
        if self.retry is not None and not isinstance(self.retry, Retry):
            raise ConfigError(f"retry must be a tickwork.Retry, not {self.retry!r}")
        start_ms, end_ms = self.start_ms, self.end_ms
        if start_ms is not None and end_ms is not None and end_ms <= start_ms:
            raise ConfigError("end_at must be later than start_at")
        if self.pause_after_failures is not None and (
            isinstance(self.pause_after_failures, bool)
            or not isinstance(self.pause_after_failures, int)
            or not 1 <= self.pause_after_failures <= MAX_PAUSE_AFTER_FAILURES
        ):
            raise ConfigError(
                f"pause_after_failures must be None or an int from 1 to "
                f"{MAX_PAUSE_AFTER_FAILURES}, not {self.pause_after_failures!r}"
            )
        if self.on_conflict not in ON_CONFLICT:
            raise ConfigError(f"on_conflict must be one of {ON_CONFLICT}, not {self.on_conflict!r}")

    def _check_jitter(self) -> None:
        """A jitter must leave each run inside its own interval: shorter than ``every``, and
        at most a day for a cron cadence."""
        if self.jitter is None:
            return
        jitter = parse_duration(self.jitter)
        every = None if self.every is None else parse_duration(self.every)
        if every is not None and jitter >= every:
            raise ConfigError(
                f"jitter must be shorter than every= ({describe_duration(every)}), "
                f"not {describe_duration(jitter)}"
            )
        if every is None and to_ms(jitter) > MAX_CRON_JITTER_MS:
            raise ConfigError(
                f"jitter of a cron schedule must be at most 1 d, not {describe_duration(jitter)}"
            )

    def _set(self, name: str, value: object) -> None:
        object.__setattr__(self, name, value)

    # -- the values as the store keeps them ------------------------------------------------

    @property
    def every_ms(self) -> int | None:
        return None if self.every is None else to_ms(self.every)

    @property
    def catchup_window_ms(self) -> int | None:
        return None if self.catchup_window is None else to_ms(self.catchup_window)

    @property
    def jitter_ms(self) -> int | None:
        return None if self.jitter is None else to_ms(self.jitter)

    @property
    def catchup_count(self) -> int | None:
        """``catchup`` as an int, None for "all"."""
        return None if self.catchup == "all" else int(self.catchup)

    @property
    def start_ms(self) -> int | None:
        return _instant_ms(self.start_at, "start_at")

    @property
    def end_ms(self) -> int | None:
        return _instant_ms(self.end_at, "end_at")

    def options(self) -> dict[str, Any]:
        """The fields that differ from their defaults, by name (what a declaration shows)."""
        return {
            field.name: getattr(self, field.name)
            for field in dataclasses.fields(self)
            if getattr(self, field.name) != field.default
        }


def option_names() -> tuple[str, ...]:
    """The names of the spec's fields: every option ``schedule()`` takes, in order."""
    return tuple(field.name for field in dataclasses.fields(ScheduleSpec))


def spec_from(options: Mapping[str, Any], where: str) -> ScheduleSpec:
    """A spec from a table of options (a declaration, ``Engine(schedules=...)``, a config
    file), refusing unknown names with a message that lists the known ones."""
    unknown = sorted(set(options) - set(option_names()))
    if unknown:
        raise ConfigError(
            f"{where}: unknown option(s) {unknown}: expected some of {sorted(option_names())}"
        )
    values = dict(options)
    try:
        if isinstance(values.get("retry"), Mapping):
            values["retry"] = Retry(**values["retry"])
        return ScheduleSpec(**values)
    except ConfigError as exc:
        if type(exc) is not ConfigError:  # a CronError keeps its class and attributes
            raise
        raise ConfigError(f"{where}: {exc}") from None


def check_key(key: object) -> str:
    """A schedule key: 1 to 150 characters without spaces, control characters or '/'
    (it is a path segment of the API and a word of the CLI)."""
    if not isinstance(key, str) or not key or len(key) > MAX_KEY or not _KEY_CHARS.match(key):
        raise ConfigError(
            f"A schedule key must be 1 to {MAX_KEY} characters without spaces, control "
            f"characters or '/', not {key!r}"
        )
    return key


def _instant_ms(value: object, name: str) -> int | None:
    if value is None:
        return None
    if not isinstance(value, datetime) or value.tzinfo is None:
        raise ConfigError(f"{name} must be an aware datetime, not {value!r}")
    return _clock.to_ms(value)
