"""What an idle worker's look costs the database, counted (never timed): issue 31's
"an idle worker at <= 0.5 % of a core" on PostgreSQL rests on it.

A worker looks at least every poll interval (other processes' changes, concurrency slots
freed elsewhere, send no notification). With nothing due, a look is the firing side's
one read (schedules, deadlines, debounce/batch buffers: one statement, outside any
transaction on PostgreSQL) and one read of when the next run is due; it claims only when
one is. Before, it was five transactions, a write among them: seventeen round trips a
second on PostgreSQL.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import timedelta
from typing import Any

import psycopg
import pytest

from tickwork import Context, Engine, On
from tickwork.testing import FakeClock


def _kind(statement: str) -> str:
    """BEGIN, COMMIT, SET (a planner setting), or a statement."""
    words = statement.split()
    if words[:2] == ["BEGIN", "IMMEDIATE"]:
        return "write"  # SQLite's write transaction
    word = words[0].upper()
    return word if word in {"BEGIN", "COMMIT", "ROLLBACK", "SET"} else "statement"


@contextmanager
def counted(engine: Engine, monkeypatch: pytest.MonkeyPatch) -> Iterator[Counter[str]]:
    """Count what the engine sends its database meanwhile, by kind: on PostgreSQL each is
    a round trip (psycopg's cursor executes and the BEGIN/COMMIT it sends itself); on
    SQLite, each statement its connections run (their trace callbacks)."""
    counts: Counter[str] = Counter()
    store = engine._runtime.store
    if store.dialect == "sqlite":
        connections = [store._connection(), store._writer()]
        for conn in connections:
            conn.set_trace_callback(lambda sql: counts.update([_kind(sql)]))
        try:
            yield counts
        finally:
            for conn in connections:
                conn.set_trace_callback(None)
        return
    execute, command = psycopg.Cursor.execute, psycopg.Connection._exec_command

    def counting_execute(self: psycopg.Cursor[Any], query: Any, *args: Any, **kw: Any) -> Any:
        counts.update([_kind(str(query))])
        return execute(self, query, *args, **kw)

    def counting_command(self: psycopg.Connection[Any], cmd: Any, *args: Any, **kw: Any) -> Any:
        counts.update([_kind(cmd.decode() if isinstance(cmd, bytes) else str(cmd))])
        return command(self, cmd, *args, **kw)

    monkeypatch.setattr(psycopg.Cursor, "execute", counting_execute)
    monkeypatch.setattr(psycopg.Connection, "_exec_command", counting_command)
    yield counts
    monkeypatch.undo()


def _idle_engine(engine: Engine) -> str:
    """A workflow with a schedule, a debounced subscription, a run delayed an hour and a
    run waiting for an event: plenty stored, nothing due. The delayed run's id."""

    @engine.workflow("job", on=On("order.paid", debounce="1h"))
    def job(ctx: Context, input: Any = None) -> None:
        ctx.wait_for_event("never.sent")

    engine.schedule("job", every="1d", key="daily")
    delayed = engine.start("job", delay=timedelta(hours=1)).id
    waiting = engine.start("job").id
    engine.run_until_idle()  # the second waits for "never.sent"
    assert engine.get_run(waiting).status == "waiting"
    engine.emit("order.paid")  # a debounce buffer, due in an hour
    return delayed


def test_an_idle_look_is_two_reads_and_no_write_on_both_backends(
    db_url: str, clock: FakeClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With nothing due, a look of the worker (its sleep ran out, nothing woke it) reads
    when the firing side is next due and when a run is, and writes nothing: no claim. On
    PostgreSQL five round trips: the firing side's statement alone (autocommit), then
    BEGIN, the planner setting, the runs' next due time, COMMIT."""
    with Engine(db_url, clock=clock) as engine:
        delayed = _idle_engine(engine)
        worker = engine._make_worker(2, "1s", "1s")
        assert worker._pass() > 0, "nothing is due: the worker sleeps"

        clock.advance(timedelta(seconds=1))  # the next look: the firing side's too
        with counted(engine, monkeypatch) as counts:
            slept = worker._pass(polled=True)
        assert 0 < slept <= 1.0, "it looks again within the poll interval"
        assert engine.get_run(delayed).status == "pending"

    assert counts["write"] == 0 and counts["ROLLBACK"] == 0, dict(counts)
    assert counts["statement"] == 2, f"the two next-due reads, not {dict(counts)}"
    if db_url.startswith("postgresql"):
        assert counts == Counter(statement=2, BEGIN=1, SET=1, COMMIT=1), dict(counts)
    else:  # two read transactions on an in-process connection: no round trips
        assert counts == Counter(statement=2, BEGIN=2, COMMIT=2), dict(counts)


def test_a_look_claims_a_run_another_process_started_with_nothing_to_wake_the_worker(
    db_url: str, clock: FakeClock
) -> None:
    """A look that reads before it claims still takes, in that look, a run made due by
    another process while the worker slept with no notification (SQLite has none; a
    NOTIFY may be lost; a concurrency slot freed elsewhere sends none)."""
    with Engine(db_url, clock=clock) as engine, Engine(db_url, clock=clock) as other:
        _idle_engine(engine)
        worker = engine._make_worker(2, "1s", "1s")
        assert worker._pass() > 0  # it knows of no run due before an hour from now

        @other.workflow("job")
        def job(ctx: Context, input: Any = None) -> None: ...

        started = other.start("job").id
        clock.advance(timedelta(seconds=1))
        worker._pass(polled=True)
        assert engine.get_run(started).status == "running"
        worker.stop()


def test_a_due_run_its_workflows_limit_holds_back_does_not_spin_the_loop(
    db_url: str, clock: FakeClock
) -> None:
    """A run due but held back by its workflow's concurrency limit (the other run holds
    the one slot) is no reason to look again at once: the loop sleeps until its next
    look (within the poll interval) and takes the run there once the slot is free. It
    used to claim again and again, a core's worth."""
    with Engine(db_url, clock=clock) as engine:

        @engine.workflow("one_at_a_time", concurrency=1)
        def one_at_a_time(ctx: Context, input: Any = None) -> None: ...

        first = engine.start("one_at_a_time", 1).id
        second = engine.start("one_at_a_time", 2).id
        worker = engine._make_worker(2, "1s", "1s")
        worker._pass()  # takes one; its executor thread is not running: it holds the slot
        held = [engine.get_run(run).status for run in (first, second)]
        assert sorted(held) == ["pending", "running"]

        slept = worker._pass()
        assert 0 < slept <= 1.0, "it sleeps until its next look, not 0 s"
        assert sorted(engine.get_run(run).status for run in (first, second)) == sorted(held)
        worker.stop()
