"""Property-based fuzzing of the API from its own OpenAPI document (schemathesis).

For every operation, requests drawn from the document (valid ones, and invalid ones for the
negative checks) must never get a 5xx, and every response must be one the document
declares, in status, content type and body schema. Bounded so it runs in seconds.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from datetime import datetime
from typing import Any

import httpx
import pytest
import schemathesis
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from starlette.applications import Starlette

from tickwork import Context, Engine
from tickwork.server import create_app
from tickwork.server.openapi import openapi_document
from tickwork.testing import FakeClock

EXAMPLES = 30


@pytest.fixture
def fuzz_engine(sqlite_url: str, clock: FakeClock) -> Iterator[Engine]:
    with Engine(sqlite_url, clock=clock) as engine:

        @engine.workflow()
        def double(ctx: Context, input: dict[str, int]) -> int:
            return input["n"] * 2

        @engine.workflow()
        def noop(ctx: Context) -> None:
            return None

        # Something for the generated keys and ids to find now and then.
        engine.schedule("noop", every="1h", key="hourly")
        engine.start("noop", run_id="r1")
        yield engine


@pytest.fixture
def fuzz_key(fuzz_engine: Engine) -> str:
    return fuzz_engine.create_api_key("fuzz")


@pytest.fixture
def fuzz_app(fuzz_engine: Engine) -> Starlette:
    return create_app(fuzz_engine, dashboard=False)


# The document the server serves (a test in test_api.py checks it matches the routes).
# Loaded from the function rather than from a served app, because schemathesis's lazy
# fixture loader does not work with this pytest.
schema = schemathesis.openapi.from_dict(openapi_document())
# A request the document allows may still be refused by the engine (400: a cron expression
# that does not parse, an unknown zone or workflow, offset + limit too large): the document
# cannot say everything the engine checks. What must never happen is a 5xx, or a 422 or
# 401 for such a request.
schema.config.checks.positive_data_acceptance.expected_statuses = ["2xx", "400", "404", "409"]
# Invalid requests are still sent (and must get no 5xx and a documented answer), but the
# "schema-violating request accepted" check is off: its invalid cases often differ from a
# valid one only by a missing Authorization header, which this test puts back, or by an
# unknown query parameter that vanishes when serialized. test_api.py checks the refusals
# themselves (401 without a key, 400 for unknown query parameters, 422 for bad bodies).
schema.config.checks.negative_data_rejection.enabled = False


@schema.parametrize()
@settings(
    max_examples=EXAMPLES,
    deadline=None,
    # One engine per operation, shared by its examples on purpose: state built by one
    # example (a schedule, a run) is what the next may find.
    suppress_health_check=[
        HealthCheck.function_scoped_fixture,
        HealthCheck.too_slow,
        HealthCheck.filter_too_much,
    ],
)
def test_api_never_fails_and_answers_as_documented(
    case: schemathesis.Case, fuzz_app: Starlette, fuzz_key: str
) -> None:
    if isinstance(case.body, dict) and isinstance(case.body.get("workflow"), str):
        # Generated names never match a registered workflow; use one, so that the rest of
        # the body reaches the engine's own checks instead of stopping at the name.
        case.body["workflow"] = "noop" if case.body.get("input") is None else "double"
    # Checks that send requests of their own (without the key, say) reach this test's app.
    case.operation.app = case.operation.schema.app = fuzz_app
    case.call_and_validate(headers={"Authorization": f"Bearer {fuzz_key}"})


# -- registering schedules with every mix of options -----------------------------------
#
# Generated strings almost never make a valid cron expression or zone, so the operations
# above rarely get past validation. Here the options are drawn from values that are
# mostly valid (and some not), so that schedules really get stored, fired and read back.

# Never a bare number: the body's schema refuses those (422, both readings), test_api.py
# and test_duration_faces.py check it.
durations = st.one_of(
    st.none(),
    st.integers(min_value=-1, max_value=0).map(lambda n: f"{n}s"),
    st.integers(min_value=1000, max_value=10**17).map(lambda ms: f"{ms}ms"),
    st.sampled_from(["1s", "90m", "1h30m", "7d", "0s", "1.5s", "2.0001s", "x"]),
    st.dictionaries(
        st.sampled_from(["seconds", "minutes", "hours", "days", "weeks"]),
        st.integers(min_value=1, max_value=10**9),
        max_size=2,
    ),
)
instants = st.datetimes(
    min_value=datetime(1, 1, 2), max_value=datetime(9999, 12, 30), timezones=st.timezones()
).map(lambda when: when.isoformat())
cadences = st.one_of(
    st.fixed_dictionaries({"every": durations}),
    st.fixed_dictionaries(
        {
            "cron": st.sampled_from(
                ["*/5 * * * *", "0 9 * * 1-5", "30 2 * * *", "0 0 29 2 *", "@hourly",
                 "0 30 2 * * *", "0 0 13 * 5", "61 * * * *", "0 0 30 2 *"]
            ),
            "timezone": st.sampled_from(
                ["UTC", "Europe/London", "America/Sao_Paulo", "Australia/Lord_Howe",
                 "Asia/Kolkata", "Pacific/Chatham", "Nowhere/Else"]
            ),
        }
    ),
)  # fmt: skip
options = st.fixed_dictionaries(
    {},
    optional={
        "key": st.sampled_from(["k1", "k2"]),
        "overlap": st.sampled_from(["allow", "skip", "buffer_one", "cancel_previous"]),
        "catchup": st.one_of(st.integers(min_value=1, max_value=2**63 - 1), st.just("all")),
        "catchup_window": durations,
        "jitter": durations,
        "paused": st.one_of(st.none(), st.booleans()),
        "pool": st.sampled_from([None, "default", "other", ""]),
        "priority": st.one_of(st.none(), st.integers(min_value=-(2**63), max_value=2**63 - 1)),
        "retry": st.one_of(
            st.none(),
            st.fixed_dictionaries(
                {},
                optional={
                    "max_attempts": st.integers(min_value=0, max_value=2**63 - 1),
                    "backoff": durations.filter(lambda d: d is not None),
                    "factor": st.floats(min_value=-1, max_value=1e300),
                },
            ),
        ),
        "start_at": instants,
        "end_at": instants,
        "on_conflict": st.sampled_from(["update", "error", "keep"]),
    },
)
workload = st.sampled_from(
    [{"workflow": "noop"}, {"workflow": "double", "input": {"n": 3}},
     {"workflow": "double", "input": {"n": "three"}}]
)  # fmt: skip


@given(body=st.builds(lambda w, c, o: {**w, **c, **o}, workload, cadences, options))
@settings(
    max_examples=EXAMPLES * 3,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
def test_registering_any_mix_of_options_never_fails(
    fuzz_engine: Engine, fuzz_app: Starlette, fuzz_key: str, clock: FakeClock, body: dict[str, Any]
) -> None:
    response = _request(fuzz_app, fuzz_key, "POST", "/api/v1/schedules", json=body)
    assert response.status_code in (200, 400, 409), response.text
    # Whatever got stored can be read, listed, counted and fired.
    assert _request(fuzz_app, fuzz_key, "GET", "/api/v1/schedules").status_code == 200
    assert _request(fuzz_app, fuzz_key, "GET", "/metrics").status_code == 200
    if response.status_code != 200:
        return
    key = response.json()["key"]
    path = f"/api/v1/schedules/{key}"
    assert _request(fuzz_app, fuzz_key, "POST", f"{path}/trigger").is_success
    clock.advance("10s")  # at most ten occurrences: intervals are at least a second
    fuzz_engine.tick()
    fuzz_engine.run_until_idle()
    assert _request(fuzz_app, fuzz_key, "GET", f"{path}/history").status_code == 200
    assert _request(fuzz_app, fuzz_key, "GET", "/api/v1/runs").status_code == 200
    assert _request(fuzz_app, fuzz_key, "DELETE", path).status_code == 200


def _request(app: Starlette, key: str, method: str, path: str, **kwargs: Any) -> httpx.Response:
    async def send() -> httpx.Response:
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://testserver") as c:
            headers = {"Authorization": f"Bearer {key}"}
            return await c.request(method, path, headers=headers, **kwargs)

    return asyncio.run(send())
