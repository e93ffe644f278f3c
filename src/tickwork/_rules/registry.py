"""Workflow definitions: what ``@engine.workflow`` records, and input validation.

Inputs are validated against the ``input`` parameter's annotation with pydantic's
``TypeAdapter`` (a well-kept validator; no hand-written checks), once when a run is started
or scheduled (so a bad input is refused before anything is stored) and again when the run
executes (so the function receives the annotated type, e.g. a pydantic model).
"""

from __future__ import annotations

import difflib
import inspect
import math
import typing
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, TypeVar

import pydantic
import pydantic_core

from .._values.checks import check_name, check_pool, check_priority
from .._values.durations import Duration, instant_after, to_ms
from .._values.events import On, subscriptions
from .._values.ids import JSON, canonical_json
from .._values.records import NewRun
from .._values.retry import NO_RETRY, Retry
from ..errors import ConfigError, InputValidationError, UnknownWorkflowError

__all__ = [
    "Registry",
    "WorkflowDef",
    "WorkflowOptions",
]

F = TypeVar("F", bound=Callable[..., Any])

#: the highest ``max_recoveries`` (a count of lost workers; more would never end a loop)
MAX_RECOVERIES = 10_000
#: ``max_recoveries``' default (DESIGN §1, Durability)
DEFAULT_MAX_RECOVERIES = 5


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
    #: how long its ended runs are kept (ms); None: the engine's retention
    retention_ms: int | None = None
    #: how many times in a row a step may lose its worker before the run fails; None: no
    #: limit
    max_recoveries: int | None = DEFAULT_MAX_RECOVERIES
    #: the events that start a run of it (``on=``), registered by workers at start-up
    on: tuple[On, ...] = ()

    def validate_input(self, value: JSON) -> JSON:
        """``value`` checked and normalised to JSON; ``InputValidationError`` when bad."""
        if not self.takes_input:
            if value is not None:
                raise InputValidationError(
                    f"Workflow {self.name!r} takes no input, but one was given: {value!r}"
                )
            return None
        if self.adapter is not None:
            value = self._validated_json(self.adapter, value)
        canonical_json(value, what=f"Input of workflow {self.name!r}")
        return value

    def new_run(
        self,
        input: Any,
        *,
        run_id: str,
        now_ms: int,
        priority: int | None = None,
        pool: str | None = None,
        delay: Duration | None = None,
        parent_id: str | None = None,
        joined: str | None = None,
        available_ms: int | None = None,
    ) -> NewRun:
        """A run of this workflow to insert, checked as ``engine.start`` checks one (its
        input validated, priority and pool valid, the delay bounded) before anything is
        stored; ``ctx.start`` and ``ctx.map`` make their children with it too
        (``parent_id``, ``joined``; ``available_ms``: a map's held child)."""
        value = self.validate_input(input)
        if available_ms is None:
            available_ms = now_ms if delay is None else instant_after(now_ms, delay, "delay")
        return NewRun(
            id=run_id,
            workflow=self.name,
            version=self.version,
            input_json=None if value is None else canonical_json(value),
            priority=self.priority if priority is None else check_priority(priority),
            pool=self.pool if pool is None else check_pool(pool),
            created_ms=now_ms,
            available_ms=available_ms,
            parent_id=parent_id,
            joined=joined,
        )

    def _validated_json(self, adapter: pydantic.TypeAdapter[Any], value: Any) -> JSON:
        """``value`` validated against the annotation, in its JSON form.

        What the annotation names is stored in pydantic's JSON form (a ``datetime`` field
        as ISO 8601, a model as an object) and given back as that type. Where the
        annotation names nothing (``dict``, ``list``, ``Any`` inside them), a value must
        already be JSON: pydantic would store a datetime there as a string, a set as a
        list, ``inf`` as null, and the function would get back something other than it was
        given; such a value is refused, as an unannotated input refuses it.
        """
        what = f"Input of workflow {self.name!r}"
        try:
            validated = adapter.validate_python(value)
        except pydantic.ValidationError as exc:
            raise InputValidationError(f"{what} does not match its annotation: {exc}") from exc
        given = _as_lists(adapter.dump_python(validated))  # a tuple is stored as a list
        if _has_non_finite(given):
            raise InputValidationError(f"{what} is not a JSON value: it holds inf or nan")
        try:
            stored = adapter.dump_python(validated, mode="json")
        except pydantic_core.PydanticSerializationError as exc:
            raise InputValidationError(f"{what} is not a JSON value: {exc}") from exc
        try:  # what the function will be given back, the way it sees it
            back = _as_lists(adapter.dump_python(adapter.validate_python(stored)))
        except (pydantic.ValidationError, pydantic_core.PydanticSerializationError) as exc:
            raise InputValidationError(
                f"{what} cannot be stored: its JSON form does not fit its annotation: {exc}"
            ) from exc
        if back != given:
            where, found = _first_difference(given, back)
            kind = type(found).__name__
            article = "an" if kind[:1] in "aeiou" else "a"
            raise InputValidationError(
                f"{what} is not a JSON value: {where} is {article} {kind}, which JSON cannot "
                "hold where the annotation does not name its type (pass a JSON value, or "
                "annotate the field with that type)"
            )
        return stored

    def load_input(self, value: JSON) -> Any:
        """The stored input as the type the function's annotation asks for."""
        if self.adapter is None:
            return value
        return self.adapter.validate_python(value)


def _as_lists(value: Any) -> Any:
    """``value`` with its tuples as lists, as JSON keeps them."""
    if isinstance(value, dict):
        return {k: _as_lists(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_as_lists(v) for v in value]
    return value


def _first_difference(given: Any, back: Any, where: str = "input") -> tuple[str, Any]:
    """Where ``back`` first differs from ``given`` (``input['when']``), and the value
    ``given`` holds there."""
    if isinstance(given, dict) and isinstance(back, dict) and given.keys() == back.keys():
        for key, value in given.items():
            if value != back[key]:
                return _first_difference(value, back[key], f"{where}[{key!r}]")
    if isinstance(given, list) and isinstance(back, list) and len(given) == len(back):
        for index, (value, other) in enumerate(zip(given, back, strict=True)):
            if value != other:
                return _first_difference(value, other, f"{where}[{index}]")
    if isinstance(given, dict) and isinstance(back, dict):
        for key in given:
            if key not in back:  # a key JSON turns into a string (an int, a tuple...)
                return f"{where}[{key!r}] (its key)", key
    return where, given


def _has_non_finite(value: object) -> bool:
    """Whether a float that JSON cannot hold (inf, nan) is anywhere in ``value``."""
    if isinstance(value, float):
        return not math.isfinite(value)
    if isinstance(value, dict):
        return any(_has_non_finite(v) for v in value.values())
    if isinstance(value, list | tuple | set | frozenset):
        return any(_has_non_finite(v) for v in value)
    return False


def check_max_recoveries(value: object) -> None:
    """``max_recoveries``: an int from 1 to ``MAX_RECOVERIES``, or None (no limit)."""
    if value is None:
        return
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= MAX_RECOVERIES:
        raise ConfigError(
            f"max_recoveries must be an int from 1 to {MAX_RECOVERIES} or None, not {value!r}"
        )


class Registry:
    """The workflows one engine knows, by name."""

    def __init__(self) -> None:
        self._workflows: dict[str, WorkflowDef] = {}
        self._limits: Mapping[str, int | None] | None = None

    def add(self, definition: WorkflowDef) -> None:
        existing = self._workflows.get(definition.name)
        if existing is not None and existing.fn is not definition.fn:
            raise ConfigError(f"Workflow {definition.name!r} is already registered")
        self._workflows[definition.name] = definition
        self._limits = None

    def limits(self) -> Mapping[str, int | None]:
        """Each workflow's concurrency limit, by name: read at every claim, so kept until
        a workflow is added (read-only)."""
        limits = self._limits
        if limits is None:
            limits = MappingProxyType({d.name: d.concurrency for d in self._workflows.values()})
            self._limits = limits
        return limits

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
            raise self.unknown(name) from None

    def unknown(self, name: object) -> UnknownWorkflowError:
        """The error for ``name``, with the registered names close to it (a typo's fix)."""
        if not isinstance(name, str):
            return UnknownWorkflowError(repr(name))
        by_folded = {known.casefold(): known for known in self.names()}
        close = difflib.get_close_matches(name.casefold(), list(by_folded), n=3)
        return UnknownWorkflowError(name, tuple(by_folded[c] for c in close))

    def __contains__(self, name: object) -> bool:
        return name in self._workflows

    def __iter__(self) -> Iterator[WorkflowDef]:
        return iter(list(self._workflows.values()))

    def names(self) -> list[str]:
        return sorted(self._workflows)


def inspect_workflow(
    fn: Callable[..., Any], name: str | None = None
) -> tuple[bool, bool, pydantic.TypeAdapter[Any] | None]:
    """(is_async, takes_input, adapter) for the function of workflow ``name`` (default:
    the function's name), or ``ConfigError``.

    The first parameter receives the ``Context``. It is taken for the context unless it
    says otherwise, and refused when it does: when it is annotated with a type other than
    ``Context`` (``def report(input: dict)``, ``def report(day: str, ctx: Context)``;
    ``Any`` and ``object`` pass), or when, unannotated, it is named ``input`` (``def
    report(input)``). A workflow that takes an input takes it second, so the mistake is
    caught at ``@engine.workflow`` rather than when a run calls the function.
    """
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
    try:
        hints = typing.get_type_hints(fn)
    except Exception as exc:  # any failure to resolve annotations is a config error
        if takes_input:
            raise ConfigError(f"Cannot resolve the annotations of {fn!r}: {exc}") from exc
        hints = {}  # (ctx) alone: nothing to validate; the name check below still holds
    _check_context_first(fn, name, params[0], hints)
    adapter = None
    if takes_input:
        annotation = hints.get(params[1].name)
        if annotation is not None and annotation is not Any:
            try:
                adapter = pydantic.TypeAdapter(annotation)
            except pydantic.PydanticUserError as exc:
                raise ConfigError(f"Cannot validate input type {annotation!r}: {exc}") from exc
    return inspect.iscoroutinefunction(fn), takes_input, adapter


def _is_context(annotation: object) -> bool:
    """Whether ``annotation`` names the context: ``Context`` (or a subclass), ``Any`` or
    ``object``. ``Context`` lives in a layer above this one, so it is known by its name and
    module rather than imported."""
    if annotation is Any or annotation is object:
        return True
    mro = getattr(annotation, "__mro__", ())
    return any(c.__name__ == "Context" and c.__module__ == "tickwork._runtime.context" for c in mro)


def _check_context_first(
    fn: Callable[..., Any], workflow: str | None, first: inspect.Parameter, hints: dict[str, Any]
) -> None:
    """``ConfigError`` when the first parameter says it is not the context."""
    annotation = hints.get(first.name)
    if annotation is None and first.name != "input":
        return
    if annotation is not None and _is_context(annotation):
        return
    name = getattr(fn, "__name__", "workflow")
    said = (
        "is named 'input'"
        if annotation is None
        else f"{first.name!r} is annotated {_type_name(annotation)}"
    )
    raise ConfigError(
        f"Workflow {workflow or name!r} must take the context first, but its first "
        f"parameter {said}: write def {name}(ctx: Context) or "
        f"def {name}(ctx: Context, input: ...)"
    )


def _type_name(annotation: object) -> str:
    if isinstance(annotation, type):
        return annotation.__qualname__
    return repr(annotation).removeprefix("typing.")


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
    retention: Duration | None = None
    max_recoveries: int | None = DEFAULT_MAX_RECOVERIES
    on: Any = None

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
            to_ms(self.timeout, "timeout")
        if self.retention is not None:
            to_ms(self.retention, "retention")
        check_max_recoveries(self.max_recoveries)
        subscriptions(self.on)

    def define(self, fn: Callable[..., Any]) -> WorkflowDef:
        """The definition of ``fn`` under these options (``ConfigError`` for a bad fn)."""
        is_async, takes_input, adapter = inspect_workflow(fn, self.name)
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
            retention_ms=None if self.retention is None else to_ms(self.retention),
            max_recoveries=self.max_recoveries,
            on=subscriptions(self.on),
        )
