"""Reading JSON API requests: the body as an operation's schema, query parameters as values.

A body that is not a UTF-8 JSON object, or does not fit its schema, is ``ApiProblem``
422; a query parameter out of its range or format is ``ConfigError`` (400), naming the
parameter and what it should have been.
"""

from __future__ import annotations

import json
import re
from datetime import datetime
from typing import Any, TypeVar

import pydantic
from pydantic import BaseModel
from starlette.requests import Request

from .._rules.spec import ScheduleSpec
from .._values.retry import Retry
from ..errors import ConfigError
from . import schemas
from .api_errors import ApiProblem

__all__ = ["instant_param", "instant_value", "int_param", "read_body", "spec_from_body"]

M = TypeVar("M", bound=pydantic.BaseModel)
_INT = re.compile(r"-?[0-9]{1,20}")


def _reject_constant(name: str) -> None:
    raise ValueError(f"{name} is not JSON")


async def read_body(request: Request, model: type[M]) -> M:
    """The request's JSON object as ``model``; ``ApiProblem`` (422) when it cannot be."""
    raw = await request.body()
    try:
        text = raw.decode("utf-8")
        data = json.loads(text, parse_constant=_reject_constant)
        # Lone surrogates ("\ud800") are valid JSON escapes but no text a database keeps.
        json.dumps(data, ensure_ascii=False).encode("utf-8")
    except (ValueError, RecursionError) as exc:  # UnicodeError is a ValueError
        raise ApiProblem(422, "MALFORMED_BODY", f"The body is not UTF-8 JSON: {exc}") from None
    if not isinstance(data, dict):
        raise ApiProblem(422, "MALFORMED_BODY", "The body must be a JSON object")
    try:
        return model.model_validate_json(text)
    except pydantic.ValidationError as exc:
        raise ApiProblem(422, "CONFIG_ERROR", f"Invalid body: {_problems(exc)}") from None


def _problems(exc: pydantic.ValidationError) -> str:
    """Pydantic's errors as "field: message; ...", without its union-member tags."""
    problems: dict[str, None] = {}
    for error in exc.errors(include_url=False):
        where = ".".join(
            str(part) for part in error["loc"] if isinstance(part, int) or part.isidentifier()
        )
        problems[f"{where or 'body'}: {error['msg']}"] = None
    return "; ".join(problems)


def int_param(request: Request, name: str, default: int, low: int, high: int) -> int:
    """The query parameter ``name`` as an int from ``low`` to ``high``, or ``default``."""
    text = request.query_params.get(name)
    if text is None:
        return default
    if _INT.fullmatch(text) is None or not low <= int(text) <= high:
        raise ConfigError(f"{name} must be an int from {low} to {high}, not {text!r}")
    return int(text)


def instant_param(request: Request, name: str) -> datetime | None:
    return instant_value(request.query_params.get(name), name)


def spec_from_body(body: BaseModel, key: str | None) -> ScheduleSpec:
    """The spec a schedule body describes (``schemas.ScheduleDefinition``), each field as
    the spec takes it: an instant read from its ISO 8601 text, a retry policy from its
    table; the spec converts and checks the rest as ``Engine.schedule`` does."""
    values: dict[str, Any] = {"key": key}
    for name in type(body).model_fields.keys() - {"key"}:
        value = getattr(body, name)
        if name in schemas.INSTANT_OPTIONS:
            value = instant_value(value, name)
        elif isinstance(value, schemas.RetryBody):
            value = Retry(**value.model_dump())
        values[name] = value
    return ScheduleSpec(**values)


def instant_value(text: str | None, name: str) -> datetime | None:
    """ISO 8601 as ``datetime.fromisoformat`` reads it; a naive one is the engine's to refuse."""
    if text is None:
        return None
    try:
        return datetime.fromisoformat(text)
    except ValueError:
        raise ConfigError(
            f"{name} must be ISO 8601, e.g. 2026-03-01T09:00Z, not {text!r}"
        ) from None
