"""Runs that once looped forever end, with their error stored and reported (issue 13).

An exception whose message holds a NUL could not be stored on PostgreSQL: the write's
error was taken for an outage, the attempt abandoned, and the run executed again at
every lease, forever, never reaching ``on_error``.
"""

from __future__ import annotations

import pytest
from tests.pg import fresh_schema

from tickwork import Context, Engine, RunFailed, RunStatus, StoreError


@pytest.mark.parametrize("message", ["\x00", "before\x00after", "lone \udc80 surrogate"])
def test_an_error_message_no_column_can_hold_is_stored_escaped_and_the_run_fails(
    engine: Engine, message: str
) -> None:
    executions: list[int] = []

    @engine.workflow("poison")
    def poison(ctx: Context) -> None:
        executions.append(1)
        raise ValueError(message)

    handle = engine.start("poison")
    assert engine.run_until_idle() == 1
    with pytest.raises(RunFailed):
        handle.result(timeout=1)
    run = engine.get_run(handle.id)
    assert run is not None and run.status is RunStatus.FAILED
    assert run.error is not None and run.error.startswith("ValueError: ")
    assert "\x00" not in run.error
    assert engine.run_until_idle() == 0 and executions == [1]  # never executed again


@pytest.mark.postgres
def test_a_value_postgresql_refuses_is_a_store_error_that_is_not_transient() -> None:
    """Told apart from an outage: raised at once, not retried for half a lease, and not
    taken for the database being unreachable."""
    with fresh_schema() as url, Engine(url) as engine:
        store = engine._runtime.store
        with pytest.raises(StoreError) as refused:
            store.keys.create_api_key(key_id="k1", name="bad\x00name", secret_hash="h", now_ms=0)
        assert refused.value.transient is False
        assert StoreError("PostgreSQL: connection refused").transient is True
