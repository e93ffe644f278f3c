"""The OpenAPI 3.1 document of the API, served at ``/api/v1/openapi.json``.

Paths come from ``routes.py``, the one declaration ``api.py`` serves too; body schemas
are generated from the pydantic models of ``schemas.py``.
"""

from __future__ import annotations

import copy
import functools
from typing import Any

from pydantic.json_schema import models_json_schema

from . import responses, schemas
from .routes import ENDPOINTS, REF, Endpoint, document_path, ref
from .routes import json_answer as _json

__all__ = ["PREFIX", "openapi_document"]

PREFIX = "/api/v1"
_TOO_LARGE = _json("ErrorResponse", "The body is larger than 1 MiB (PAYLOAD_TOO_LARGE)")
_UNREADABLE = _json(
    "ErrorResponse", "The body is not a JSON object (MALFORMED_BODY) or does not fit its schema"
)
_UNAUTHORIZED = _json("ErrorResponse", "No live API key (UNAUTHORIZED)")
_STORE = _json("ErrorResponse", "The database failed (STORE_ERROR)")
_NO_ROUTE = _json("ErrorResponse", "No such route (NOT_FOUND)")


def _operation(endpoint: Endpoint) -> dict[str, Any]:
    # Any path may fail to route (a newline in a key, say): 404 NOT_FOUND everywhere.
    responses: dict[str, Any] = {
        "200": endpoint.ok,
        "401": _UNAUTHORIZED,
        "404": _NO_ROUTE,
        "503": _STORE,
    }
    if endpoint.body is not None:
        responses.update({"413": _TOO_LARGE, "422": _UNREADABLE})
    responses.update(endpoint.errors)
    operation: dict[str, Any] = {
        "operationId": endpoint.operation_id,
        "summary": endpoint.summary,
        "responses": dict(sorted(responses.items())),
    }
    if endpoint.params:
        operation["parameters"] = list(endpoint.params)
    if endpoint.body is not None:
        operation["requestBody"] = {
            "required": endpoint.body_required,
            "content": {"application/json": {"schema": ref(endpoint.body)}},
        }
    return operation


def _paths() -> dict[str, Any]:
    paths: dict[str, Any] = {}
    for endpoint in ENDPOINTS:
        item = paths.setdefault(PREFIX + document_path(endpoint.path), {})
        item[endpoint.method.lower()] = _operation(endpoint)
    return paths


def _outside_paths() -> dict[str, Any]:
    """``/healthz`` and ``/metrics``, served beside the API rather than under it."""
    metrics = _operation(
        Endpoint(
            "GET",
            "/metrics",
            "metrics",
            "Prometheus metrics",
            {"description": "Prometheus text format", "content": {"text/plain": {"schema": {}}}},
        )
    )
    health = {
        "operationId": "healthz",
        "summary": "Whether the database answers (no API key needed)",
        "security": [],
        "responses": {
            "200": _json("Health", "The database answers"),
            "503": _json("Health", "The database does not answer"),
        },
    }
    return {"/healthz": {"get": health}, "/metrics": {"get": metrics}}


@functools.cache
def _document() -> dict[str, Any]:
    _, definitions = models_json_schema(
        [(model, "validation") for model in schemas.REQUEST_MODELS]
        + [(model, "serialization") for model in responses.RESPONSE_MODELS],
        ref_template=REF,
    )
    return {
        "openapi": "3.1.0",
        "info": {
            "title": "tickwork",
            "version": "1",
            "description": "Durable workflows that run on a schedule: schedules, runs, "
            "workflows, business calendars and cron previews. Every route but /healthz needs "
            "`Authorization: Bearer <api key>` (`tickwork apikey create NAME`).",
        },
        "paths": {**_paths(), **_outside_paths()},
        "components": {
            "schemas": definitions["$defs"],
            "securitySchemes": {"apiKey": {"type": "http", "scheme": "bearer"}},
        },
        "security": [{"apiKey": []}],
    }


def openapi_document() -> dict[str, Any]:
    """The document (a fresh copy: callers may change it)."""
    return copy.deepcopy(_document())
