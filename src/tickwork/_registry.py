"""Workflow definitions: what ``@engine.workflow`` records, and input validation.

Inputs are validated against the ``input`` parameter's annotation with pydantic's
``TypeAdapter`` (a well-kept validator; no hand-written checks), once when a run is started
or scheduled (so a bad input is refused before anything is stored) and again when the run
executes (so the function receives the annotated type, e.g. a pydantic model).
"""

from __future__ import annotations

import inspect
import math
import typing
import unicodedata
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any, TypeVar

import pydantic

from ._durations import Duration, to_ms
from ._ids import JSON, canonical_json
from ._retry import NO_RETRY, Retry
from .errors import ConfigError, InputValidationError, UnknownWorkflowError

__all__ = [
    "Registry",
    "WorkflowDef",
    "WorkflowOptions",
    "check_limit",
    "check_pool",
    "check_priority",
]

F = TypeVar("F", bound=Callable[..., Any])

#: the longest workflow name or run id
MAX_NAME = 200
#: the most runs or history entries one call lists
MAX_LIMIT = 10_000


@dataclass(frozen=True)
class WorkflowDef:
    """A registered workflow and its options."""

    name: str
    fn: Callable[..., Any]
    version: str
    retry: Retry
    concurrency: int | None
    pool: str
    priority: int
    timeout_ms: int | None
    is_async: bool
    takes_input: bool
    adapter: pydantic.TypeAdapter[Any] | None
    schedule: Any = field(default=None, compare=False)

    def validate_input(self, value: JSON) -> JSON:
        """``value`` checked and normalised to JSON; ``InputValidationError`` when bad."""
        if not self.takes_input:
            if value is not None:
                raise InputValidationError(
                    f"Workflow {self.name!r} takes no input, but one was given: {value!r}"
                )
            return None
        if self.adapter is not None:
            try:
                validated = self.adapter.validate_python(value)
            except pydantic.ValidationError as exc:
                raise InputValidationError(
                    f"Input of workflow {self.name!r} does not match its annotation: {exc}"
                ) from exc
            # pydantic's JSON dump turns inf and nan into null where the type says
            # nothing (a plain dict): refuse them, as an unannotated input refuses them.
            if _has_non_finite(self.adapter.dump_python(validated)):
                raise InputValidationError(
                    f"Input of workflow {self.name!r} is not a JSON value: it holds inf or nan"
                )
            value = self.adapter.dump_python(validated, mode="json")
        canonical_json(value, what=f"Input of workflow {self.name!r}")
        return value

    def load_input(self, value: JSON) -> Any:
        """The stored input as the type the function's annotation asks for."""
        if self.adapter is None:
            return value
        return self.adapter.validate_python(value)


def _has_non_finite(value: object) -> bool:
    """Whether a float that JSON cannot hold (inf, nan) is anywhere in ``value``."""
    if isinstance(value, float):
        return not math.isfinite(value)
    if isinstance(value, dict):
        return any(_has_non_finite(v) for v in value.values())
    if isinstance(value, list | tuple | set | frozenset):
        return any(_has_non_finite(v) for v in value)
    return False


def has_control(text: str) -> bool:
    """Whether ``text`` holds a control character (NUL, ESC...): such a name or id could
    not be stored on PostgreSQL (NUL) or printed safely (a terminal sequence)."""
    return any(unicodedata.category(c) == "Cc" for c in text)


def check_name(value: object, what: str) -> str:
    """A workflow name, run id or pool: 1 to ``MAX_NAME`` characters, none a control one."""
    if not isinstance(value, str) or not value or len(value) > MAX_NAME or has_control(value):
        raise ConfigError(
            f"{what} must be 1 to {MAX_NAME} characters without control characters, not {value!r}"
        )
    return value


def check_pool(pool: object) -> str:
    return check_name(pool, "A pool name")


#: priorities are stored as 64-bit integers
_INT64 = range(-(2**63), 2**63)


def check_priority(priority: object) -> int:
    if isinstance(priority, bool) or not isinstance(priority, int) or priority not in _INT64:
        raise ConfigError(f"priority must be a 64-bit int, not {priority!r}")
    return priority


def check_limit(limit: object) -> None:
    """A page size: an int from 1 to ``MAX_LIMIT``."""
    if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= MAX_LIMIT:
        raise ConfigError(f"limit must be an int from 1 to {MAX_LIMIT}, not {limit!r}")


class Registry:
    """The workflows one engine knows, by name."""

    def __init__(self) -> None:
        self._workflows: dict[str, WorkflowDef] = {}

    def add(self, definition: WorkflowDef) -> None:
        existing = self._workflows.get(definition.name)
        if existing is not None and existing.fn is not definition.fn:
            raise ConfigError(f"Workflow {definition.name!r} is already registered")
        self._workflows[definition.name] = definition

    def decorator(
        self,
        options: WorkflowOptions,
        *,
        check: Callable[[WorkflowDef], None],
        added: Callable[[], None],
    ) -> Callable[[F], F]:
        """``@engine.workflow(...)``: define the function under ``options``, ``check`` the
        definition, add it, mark the function with its name (so ``start(fn)`` finds it)
        and call ``added``."""

        def register(fn: F) -> F:
            definition = options.define(fn)
            check(definition)
            self.add(definition)
            fn.__tickwork_workflow__ = definition.name  # type: ignore[attr-defined]
            added()
            return fn

        return register

    def get(self, name: str) -> WorkflowDef:
        try:
            return self._workflows[name]
        except (KeyError, TypeError):
            raise UnknownWorkflowError(str(name)) from None

    def __contains__(self, name: object) -> bool:
        return name in self._workflows

    def __iter__(self) -> Iterator[WorkflowDef]:
        return iter(list(self._workflows.values()))

    def names(self) -> list[str]:
        return sorted(self._workflows)


def inspect_workflow(fn: Callable[..., Any]) -> tuple[bool, bool, pydantic.TypeAdapter[Any] | None]:
    """(is_async, takes_input, adapter) for a workflow function, or ``ConfigError``."""
    if not callable(fn):
        raise ConfigError(f"A workflow must be a function, not {fn!r}")
    try:
        signature = inspect.signature(fn)
    except (TypeError, ValueError) as exc:
        raise ConfigError(f"Cannot read the signature of {fn!r}: {exc}") from exc
    params = [
        p
        for p in signature.parameters.values()
        if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)
    ]
    if not params or len(params) > 2:
        raise ConfigError(
            f"Workflow {getattr(fn, '__name__', fn)!r} must take (ctx) or (ctx, input)"
        )
    takes_input = len(params) == 2
    adapter = None
    if takes_input:
        try:
            hints = typing.get_type_hints(fn)
        except Exception as exc:  # any failure to resolve annotations is a config error
            raise ConfigError(f"Cannot resolve the annotations of {fn!r}: {exc}") from exc
        annotation = hints.get(params[1].name)
        if annotation is not None and annotation is not Any:
            try:
                adapter = pydantic.TypeAdapter(annotation)
            except pydantic.PydanticUserError as exc:
                raise ConfigError(f"Cannot validate input type {annotation!r}: {exc}") from exc
    return inspect.iscoroutinefunction(fn), takes_input, adapter


@dataclass(frozen=True, kw_only=True)
class WorkflowOptions:
    """``@engine.workflow``'s options, checked when the decorator is made (before any
    function is given to it)."""

    name: str | None
    version: str
    retry: Retry | None
    concurrency: int | None
    pool: str
    priority: int
    timeout: Duration | None
    schedule: Any

    def __post_init__(self) -> None:
        if self.name is not None:
            check_name(self.name, "A workflow name")
        if not isinstance(self.version, str) or not self.version:
            raise ConfigError(f"version must be a non-empty string, not {self.version!r}")
        if self.retry is not None and not isinstance(self.retry, Retry):
            raise ConfigError(f"retry must be a tickwork.Retry, not {self.retry!r}")
        cap = self.concurrency
        if cap is not None and (isinstance(cap, bool) or not isinstance(cap, int) or cap < 1):
            raise ConfigError(f"concurrency must be an int >= 1 or None, not {cap!r}")
        check_pool(self.pool)
        check_priority(self.priority)
        if self.timeout is not None:
            to_ms(self.timeout)

    def define(self, fn: Callable[..., Any]) -> WorkflowDef:
        """The definition of ``fn`` under these options (``ConfigError`` for a bad fn)."""
        is_async, takes_input, adapter = inspect_workflow(fn)
        return WorkflowDef(
            name=self.name or fn.__name__,
            fn=fn,
            version=self.version,
            retry=self.retry or NO_RETRY,
            concurrency=self.concurrency,
            pool=self.pool,
            priority=self.priority,
            timeout_ms=None if self.timeout is None else to_ms(self.timeout),
            is_async=is_async,
            takes_input=takes_input,
            adapter=adapter,
            schedule=self.schedule,
        )
