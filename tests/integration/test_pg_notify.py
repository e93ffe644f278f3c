"""What PostgreSQL workers are told, and when: a new schedule notifies "schedules" (its
insert and the NOTIFY are one statement, ``execute_notifying``), the same definition
registered again nothing; a run started or triggered notifies "runs" (its queue row's
insert carries the NOTIFY).

Nothing here is timed: a notification that must not arrive is shown absent by one sent
after it that did arrive (a listener hears a database's notifications in commit order).
"""

from __future__ import annotations

import pytest
from tests.integration.test_pg_schemas import Listener, opened
from tests.pg import fresh_schema

from tickwork import Context, Engine

pytestmark = pytest.mark.postgres


def test_a_new_schedule_notifies_once_and_an_unchanged_one_not_at_all() -> None:
    with fresh_schema() as url, opened(url) as store, Engine(url) as engine:

        @engine.workflow("report")
        def report(ctx: Context) -> None:
            return None

        listener = Listener(store)
        try:
            engine.schedule("report", every="1h", key="hourly")
            listener.wait_for(lambda: "schedules" in listener.heard, "the new one is heard")
            engine.schedule("report", every="1h", key="hourly")  # unchanged
            engine.start("report")  # heard after anything the line above sent
            listener.wait_for(lambda: "runs" in listener.heard, "the run is heard")
        finally:
            listener.stop()
    assert listener.heard == ["listening", "schedules", "runs"]


def test_a_started_and_a_triggered_run_each_notify_and_a_start_of_an_existing_id_not() -> None:
    with fresh_schema() as url, opened(url) as store, Engine(url) as engine:

        @engine.workflow("report")
        def report(ctx: Context) -> None:
            return None

        engine.schedule("report", every="1h", key="hourly")
        listener = Listener(store)
        try:
            engine.start("report", run_id="first")
            listener.wait_for(lambda: listener.heard.count("runs") >= 1, "the start is heard")
            engine.start("report", run_id="first")  # exists: nothing written, nothing said
            assert engine.trigger("hourly") is not None
            listener.wait_for(lambda: listener.heard.count("runs") >= 2, "the trigger is heard")
        finally:
            listener.stop()
    assert listener.heard == ["listening", "runs", "runs"]
