"""The schedule spec: ``engine.schedule``'s options as one frozen, validated value.

Every face builds one and hands it on: ``Engine.schedule`` and ``Client.schedule`` from
their keyword arguments, the HTTP API from its JSON body, ``Cron``/``Every`` from a
declaration, ``Engine(schedules=...)`` and tickwork.toml from their tables. So an option
is added here, as one field typed as its converted value, with its converter and bound
declared beside it (``Annotated``); pydantic runs them, and every face refuses a bad value
with the same ``ConfigError`` naming the field before anything is stored (STYLE habit 9:
typed, frozen, keyword-only configuration converted once at the edge). The HTTP body's
bounds are these ones (``server/schemas.py`` takes the annotations from here).

What needs the workflow's definition (that it exists, the input against its annotation,
the default pool and priority) is checked when the spec is registered.
"""

from __future__ import annotations

import dataclasses
import enum
import functools
import inspect
import re
from collections.abc import Callable, Mapping
from datetime import datetime, timedelta
from typing import Annotated, Any, Literal, TypedDict, TypeVar

import pydantic
from pydantic import AwareDatetime, BeforeValidator, ConfigDict, Field, InstanceOf

from .. import cron
from .._values import clock as _clock
from .._values.business_days import BusinessDays
from .._values.checks import CONTROL_SAID, MAX_NAME, check_name, check_pool, has_control
from .._values.durations import describe_duration, parse_duration, to_ms
from .._values.hints import close_names, did_you_mean
from .._values.models import DstGap, DstRepeat, OnHoliday, Overlap
from .._values.retry import Retry
from ..errors import ConfigError

__all__ = [
    "MAX_CATCHUP",
    "MAX_DEADLINE",
    "MAX_KEY",
    "MAX_PAUSE_AFTER_FAILURES",
    "MAX_RUNS",
    "CalendarName",
    "Catchup",
    "Deadline",
    "Key",
    "MaxRuns",
    "OnConflict",
    "PauseAfterFailures",
    "Pool",
    "Priority",
    "ScheduleOptions",
    "ScheduleSpec",
    "WorkflowName",
    "aware_ms",
    "check_key",
    "check_option_names",
    "make_spec",
    "option_names",
    "spec_from",
    "stored_value",
    "takes_schedule_options",
    "to_overlap",
]

#: the most missed occurrences ``catchup=N`` starts (``"all"`` starts any number in batches)
MAX_CATCHUP = 1000
#: the longest jitter a cron schedule takes
MAX_CRON_JITTER_MS = 86_400_000
MAX_KEY = 150
#: the most failed runs in a row ``pause_after_failures`` waits for
MAX_PAUSE_AFTER_FAILURES = 10_000
#: the most runs ``max_runs`` allows (a bound a count can reach, far below int64's)
MAX_RUNS = 10**9
#: the longest ``deadline``: a week after the occurrence (a run still unfinished then is
#: an incident, not a deadline)
MAX_DEADLINE = timedelta(days=7)
#: priorities are stored as 64-bit integers
INT64_MIN, INT64_MAX = -(2**63), 2**63 - 1
#: no spaces, control characters or '/': a key is a path segment of the API, a CLI word
KEY_PATTERN = r"^[^\s\x00-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069/]+$"
#: a calendar's name, as ``engine.calendar`` takes it
CALENDAR_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,99}$"
CALENDAR_NAME = re.compile(CALENDAR_PATTERN)
_KEY_CHARS = re.compile(KEY_PATTERN)


# -- converters: each turns what a user wrote into the field's type, or says why not ----


def check_key(key: object) -> str:
    """A schedule key: 1 to 150 characters without spaces, control characters or '/'
    (it is a path segment of the API and a word of the CLI)."""
    if (
        not isinstance(key, str)
        or not key
        or len(key) > MAX_KEY
        or not _KEY_CHARS.match(key)
        or has_control(key)  # what the pattern cannot say to OpenAPI: lone surrogates
    ):
        raise ConfigError(
            f"A schedule key must be 1 to {MAX_KEY} characters without spaces, '/' or "
            f"{CONTROL_SAID}, not {key!r}"
        )
    return key


def to_overlap(value: object) -> Overlap:
    """An ``Overlap`` from its name ("skip") or itself; else ``ConfigError``."""
    try:
        return Overlap(value if isinstance(value, str) else "")
    except ValueError:
        raise ConfigError(
            f"Unknown overlap {value!r}: expected one of {[o.value for o in Overlap]}"
        ) from None


def aware_ms(value: object, name: str) -> int:
    """An aware datetime in epoch milliseconds; else ``ConfigError`` naming ``name``."""
    if not isinstance(value, datetime) or value.tzinfo is None:
        raise ConfigError(f"{name} must be an aware datetime, not {value!r}")
    return _clock.to_ms(value)


def _zone(value: object) -> str:
    if not isinstance(value, str):
        raise ConfigError(f"timezone must be an IANA zone name, not {value!r}")
    cron.load_zone(value)
    return value


def _folded(value: object) -> str:
    """A cron expression with its whitespace folded (parsed once the zone is known)."""
    if not isinstance(value, str):
        raise ConfigError(f"cron must be a string, not {value!r}")
    return " ".join(value.split())


def _choice(kind: type[DstGap] | type[DstRepeat] | type[OnHoliday], name: str) -> Any:
    """A converter from a policy's name (or itself) to its enum, refusing anything else
    with the allowed names."""

    def check(value: object) -> object:
        try:
            return kind(value if isinstance(value, str) else "")
        except ValueError:
            allowed = ", ".join(repr(member.value) for member in kind)
            raise ConfigError(f"{name} must be one of {allowed}, not {value!r}") from None

    return BeforeValidator(check)


def _calendar(value: object) -> object:
    if value is not None and (not isinstance(value, str) or not CALENDAR_NAME.fullmatch(value)):
        raise ConfigError(
            f"calendar must be the name of a stored calendar (1-100 letters, digits, '_', "
            f"'.' or '-'), not {value!r}"
        )
    return value


def _workflow(value: object) -> str:
    return check_name(value, "A workflow name")


def _deadline(value: Any) -> timedelta:
    """A duration of at most ``MAX_DEADLINE``."""
    deadline = parse_duration(value)
    if deadline > MAX_DEADLINE:
        raise ConfigError(
            f"deadline must be at most {describe_duration(MAX_DEADLINE)} after the "
            f"occurrence, not {describe_duration(deadline)}"
        )
    return deadline


def _int_from(name: str, low: int, high: int, *, also: str = "") -> Any:
    """A converter that refuses anything but an int from ``low`` to ``high`` (or the word
    ``also``) in words a user reads, where pydantic's would say it twice over a union."""

    def check(value: object) -> object:
        if value is None or (also and value == also):
            return value
        if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
            either = f' or "{also}"' if also else ""
            raise ConfigError(f"{name} must be an int from {low} to {high}{either}, not {value!r}")
        return value

    return BeforeValidator(check)


# -- the fields' types: the converted value, its converter and its bound ------------------

Duration = Annotated[timedelta, BeforeValidator(parse_duration)]
Zone = Annotated[str, BeforeValidator(_zone)]
Cadence = Annotated[str, BeforeValidator(_folded)]
WorkflowName = Annotated[str, Field(min_length=1, max_length=MAX_NAME), BeforeValidator(_workflow)]
Key = Annotated[
    str, Field(min_length=1, max_length=MAX_KEY, pattern=KEY_PATTERN), BeforeValidator(check_key)
]
OverlapPolicy = Annotated[Overlap, BeforeValidator(to_overlap)]
Catchup = Annotated[int, Field(ge=1, le=MAX_CATCHUP)]
CatchupOrAll = Annotated[Catchup | Literal["all"], _int_from("catchup", 1, MAX_CATCHUP, also="all")]
Pool = Annotated[str, Field(min_length=1, max_length=MAX_NAME), BeforeValidator(check_pool)]
Priority = Annotated[
    int, Field(ge=INT64_MIN, le=INT64_MAX), _int_from("priority", INT64_MIN, INT64_MAX)
]
PauseAfterFailures = Annotated[
    int,
    Field(
        ge=1,
        le=MAX_PAUSE_AFTER_FAILURES,
        description="Pause the schedule after this many of its runs in a row failed; null: never.",
    ),
    _int_from("pause_after_failures", 1, MAX_PAUSE_AFTER_FAILURES),
]
MaxRuns = Annotated[
    int,
    Field(
        ge=1,
        le=MAX_RUNS,
        description="Start at most this many runs (occurrences and backfills; a person's "
        "trigger does not count), then deactivate; null: no limit.",
    ),
    _int_from("max_runs", 1, MAX_RUNS),
]
Deadline = Annotated[timedelta, BeforeValidator(_deadline)]
OnConflict = Literal["update", "error", "keep"]
GapPolicy = Annotated[DstGap, _choice(DstGap, "dst_gap")]
RepeatPolicy = Annotated[DstRepeat, _choice(DstRepeat, "dst_repeat")]
HolidayPolicy = Annotated[OnHoliday, _choice(OnHoliday, "on_holiday")]
CalendarName = Annotated[
    str,
    Field(
        min_length=1,
        max_length=100,
        pattern=CALENDAR_PATTERN,
        description="A stored business calendar: on_holiday decides its days off, and "
        "'nBD'/'LBD' in the cron count its business days; null: none.",
    ),
    BeforeValidator(_calendar),
]


@pydantic.dataclasses.dataclass(
    frozen=True,
    kw_only=True,
    config=ConfigDict(strict=True, extra="forbid", regex_engine="python-re"),
)
class ScheduleSpec:
    """A schedule's definition as a user wrote it, checked and converted.

    Durations are ``timedelta``, ``overlap`` an ``Overlap``, ``cron`` with its whitespace
    folded; ``workflow`` is None only in a declaration not yet bound to its workflow
    (``Cron(...)``/``Every(...)`` before ``@engine.workflow`` takes it). A bad value raises
    ``ConfigError`` naming its field (a bad cron expression, ``CronError``).
    """

    workflow: WorkflowName | None = None
    input: Any = None
    every: Duration | None = None
    cron: Cadence | None = None
    timezone: Zone = "UTC"
    key: Key | None = None
    overlap: OverlapPolicy = Overlap.ALLOW
    catchup: CatchupOrAll = 1
    catchup_window: Duration | None = None
    jitter: Duration | None = None
    paused: bool | None = None
    pool: Pool | None = None
    priority: Priority | None = None
    retry: InstanceOf[Retry] | None = None
    start_at: AwareDatetime | None = None
    end_at: AwareDatetime | None = None
    pause_after_failures: PauseAfterFailures | None = None
    #: DST policy of a fixed-time cron (DESIGN §2): Debian cron's by default
    dst_gap: GapPolicy = DstGap.SHIFT
    dst_repeat: RepeatPolicy = DstRepeat.FIRST
    #: a stored business calendar (checked to exist when registered) and what an
    #: occurrence on one of its days off does
    calendar: CalendarName | None = None
    on_holiday: HolidayPolicy = OnHoliday.SKIP
    #: the most runs the schedule starts (occurrences and backfills), then it deactivates
    max_runs: MaxRuns | None = None
    #: how long after its occurrence a fired run must have completed
    deadline: Deadline | None = None
    on_conflict: OnConflict = "update"

    def __post_init__(self) -> None:
        """What one field cannot say alone."""
        if (self.every is None) == (self.cron is None):
            raise ConfigError("Pass exactly one of every= or cron=")
        if self.cron is not None:
            # The calendar's days are known when the spec is registered; its name is
            # enough here for "nBD"/"LBD" to read (without one they are refused).
            days = None if self.calendar is None else BusinessDays(self.calendar)
            cron.parse(
                self.cron, self.timezone, dst_gap=self.dst_gap, dst_repeat=self.dst_repeat,
                calendar=days,
            )  # fmt: skip
        if self.calendar is None and self.on_holiday is not OnHoliday.SKIP:
            raise ConfigError(f"on_holiday={self.on_holiday.value!r} needs a calendar=")
        self._check_jitter()
        start_ms, end_ms = self.start_ms, self.end_ms
        if start_ms is not None and end_ms is not None and end_ms <= start_ms:
            raise ConfigError("end_at must be later than start_at")

    def _check_jitter(self) -> None:
        """A jitter must leave each run inside its own interval: shorter than ``every``, and
        at most a day for a cron cadence."""
        if self.jitter is None:
            return
        if self.every is not None and self.jitter >= self.every:
            raise ConfigError(
                f"jitter must be shorter than every= ({describe_duration(self.every)}), "
                f"not {describe_duration(self.jitter)}"
            )
        if self.every is None and to_ms(self.jitter) > MAX_CRON_JITTER_MS:
            jitter = describe_duration(self.jitter)
            raise ConfigError(f"jitter of a cron schedule must be at most 1 d, not {jitter}")

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
        return None if self.catchup == "all" else self.catchup

    @property
    def deadline_ms(self) -> int | None:
        return None if self.deadline is None else to_ms(self.deadline)

    @property
    def start_ms(self) -> int | None:
        return None if self.start_at is None else _clock.to_ms(self.start_at)

    @property
    def end_ms(self) -> int | None:
        return None if self.end_at is None else _clock.to_ms(self.end_at)

    def options(self, among: tuple[tuple[str, Any], ...] | None = None) -> dict[str, Any]:
        """The fields that differ from their defaults, by name (what a declaration shows);
        only those ``among`` (names and defaults, as ``option_defaults`` gives) if given."""
        found = {}
        for name, default in option_defaults() if among is None else among:
            value = getattr(self, name)
            if value != default:
                found[name] = value
        return found


def _raising_config_errors(init: Any) -> Any:
    """pydantic's ``__init__``, its ``ValidationError`` turned into a ``ConfigError``."""

    def __init__(self: ScheduleSpec, **values: Any) -> None:
        try:
            init(self, **values)
        except pydantic.ValidationError as exc:
            raise config_error(exc) from None

    return __init__


ScheduleSpec.__init__ = _raising_config_errors(ScheduleSpec.__init__)  # type: ignore[method-assign]


def config_error(exc: pydantic.ValidationError) -> ConfigError:
    """The first problem pydantic found as a ``ConfigError`` naming its field: a converter's
    own ``ConfigError`` as it is (a ``CronError`` keeps its class), else pydantic's words
    with the value given."""
    errors = exc.errors(include_url=False)
    first = errors[0]
    field = str(first["loc"][0]) if first["loc"] else ""
    original = first.get("ctx", {}).get("error")
    if isinstance(original, ConfigError):
        if type(original) is not ConfigError or not field or field in str(original):
            return original
        return ConfigError(f"{field}: {original}")
    # A union (``catchup``: an int or "all") fails once per member: say each.
    said = dict.fromkeys(e["msg"] for e in errors if e["loc"][:1] == first["loc"][:1])
    return ConfigError(f"{field}: {' or '.join(said)}, not {first['input']!r}")


def make_spec(**options: Any) -> ScheduleSpec:
    """A spec from options as a user passed them (``Engine.schedule``'s keywords): the
    fields' types are the converted values, which the options need not be yet."""
    return ScheduleSpec(**options)


# The fields are read once: registering one schedule asked for them five times, and
# ``dataclasses.fields`` builds its tuple each time.
@functools.cache
def option_names() -> tuple[str, ...]:
    """The names of the spec's fields: every option ``schedule()`` takes, in order."""
    return tuple(field.name for field in dataclasses.fields(ScheduleSpec))


@functools.cache
def option_defaults() -> tuple[tuple[str, Any], ...]:
    """Each field's name and default, in order."""
    return tuple((field.name, field.default) for field in dataclasses.fields(ScheduleSpec))


def spec_from(options: Mapping[str, Any], where: str) -> ScheduleSpec:
    """A spec from a table of options (a declaration, ``Engine(schedules=...)``, a config
    file, the API's body), refusing unknown names with a message that lists the known
    ones; a ``retry`` table is ``Retry``'s arguments."""
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


# -- the options as the faces take them ------------------------------------------------

#: the spec's fields that are the faces' positional arguments rather than options
_POSITIONAL = ("workflow", "input")


class ScheduleOptions(TypedDict, total=False):
    """``engine.schedule``'s keyword options as a user may write them, for type checkers
    and editors (PEP 692's ``**options: Unpack[ScheduleOptions]``).

    What runs is the spec: ``Engine.schedule`` and ``Client.schedule`` hand every keyword
    to it, so an option added as a field is taken by both at once. This mirror only
    types them; ``tests/unit/test_schedule_spec.py`` keeps its names equal to the fields.
    """

    every: timedelta | str | dict[str, Any] | None
    cron: str | None
    timezone: str
    key: str | None
    overlap: str
    catchup: int | str
    catchup_window: timedelta | str | dict[str, Any] | None
    jitter: timedelta | str | dict[str, Any] | None
    paused: bool | None
    pool: str | None
    priority: int | None
    retry: Retry | None
    start_at: datetime | None
    end_at: datetime | None
    pause_after_failures: int | None
    dst_gap: str
    dst_repeat: str
    calendar: str | None
    on_holiday: str
    max_runs: int | None
    deadline: timedelta | str | dict[str, Any] | None
    on_conflict: str


@functools.cache
def option_fields() -> tuple[dataclasses.Field[Any], ...]:
    """The spec's fields that are keyword options of ``schedule()`` (all but the workflow
    and its input)."""
    return tuple(f for f in dataclasses.fields(ScheduleSpec) if f.name not in _POSITIONAL)


def check_option_names(options: Mapping[str, Any], where: str) -> None:
    """Refuse a keyword that is no option as Python refuses one (``TypeError``), with the
    closest option's name: ``schedule() got an unexpected keyword argument 'catchp'``."""
    known = _keyword_names()
    for name in options:
        if name not in known:
            hint = did_you_mean(close_names(name, [f.name for f in option_fields()]))
            raise TypeError(
                f"{where}() got an unexpected keyword argument {name!r}"
                + (f"; {hint}" if hint else "")
            )


@functools.cache
def _keyword_names() -> frozenset[str]:
    return frozenset(f.name for f in option_fields())


F = TypeVar("F", bound=Callable[..., Any])


def takes_schedule_options(method: F) -> F:
    """Give ``method(self, workflow, input=None, **options)`` the signature of every option
    (``inspect.signature`` and ``help()`` list them with their defaults), read from the
    spec's fields, so a new field shows up there without an edit."""
    own = list(inspect.signature(method).parameters.values())[:-1]  # drop **options
    hints = ScheduleOptions.__annotations__
    options = [
        inspect.Parameter(
            f.name,
            inspect.Parameter.KEYWORD_ONLY,
            # as a user writes it: overlap="allow", not the enum the spec converts it to
            default=f.default.value if isinstance(f.default, enum.Enum) else f.default,
            annotation=getattr(hints.get(f.name), "__forward_arg__", "Any"),
        )
        for f in option_fields()
    ]
    returns = inspect.signature(method).return_annotation
    method.__signature__ = inspect.Signature(own + options, return_annotation=returns)  # type: ignore[attr-defined]
    return method


def stored_value(value: Any) -> Any:
    """An option's converted value as JSON keeps it: an enum by its value, a duration or
    an instant in milliseconds, a retry policy as its table."""
    if isinstance(value, enum.Enum):
        return value.value
    if isinstance(value, timedelta):
        return to_ms(value)
    if isinstance(value, datetime):
        return _clock.to_ms(value)
    if isinstance(value, Retry):
        return value.to_json()
    return value
