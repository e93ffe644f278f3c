"""Identity: canonical JSON and the ids derived from it.

Canonical JSON (sorted keys, no whitespace, no NaN) is what the stores keep and what
derived ids hash, so the same value yields the same bytes on every machine and Python.
"""

from __future__ import annotations

import json
import uuid
from typing import Any

from .errors import InputValidationError

__all__ = ["JSON", "canonical_json", "from_json", "new_run_id", "new_worker_id"]

JSON = Any  # a JSON value: None, bool, int, float, str, list, dict with str keys


def canonical_json(value: JSON, *, what: str = "value") -> str:
    """``value`` as canonical JSON text; ``InputValidationError`` when it is not JSON."""
    try:
        return json.dumps(value, sort_keys=True, separators=(",", ":"), allow_nan=False)
    except (TypeError, ValueError) as exc:
        raise InputValidationError(f"{what} is not a JSON value: {exc}") from exc


def from_json(text: str | None) -> JSON:
    """The value of stored JSON text (``None`` stays ``None``)."""
    return None if text is None else json.loads(text)


def new_run_id() -> str:
    """A fresh random run id for runs started without one."""
    return uuid.uuid4().hex


def new_worker_id() -> str:
    """A fresh lease-owner token: unique per worker process and engine."""
    return uuid.uuid4().hex[:16]
