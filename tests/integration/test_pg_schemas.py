"""Two deployments in two schemas of one PostgreSQL database stay apart: a write in one
wakes only its own workers, and the migration lock one holds never holds up the other,
while it still holds up its own schema's. A concurrency limit's lock stays the
database-wide key of the workers before, so that a fleet upgraded one by one keeps it.

Notification channels and advisory locks belong to the whole database, so the store
scopes the channel and the migration lock to its schema (``postgres.py``). Nothing here
is timed: a notification that must not arrive is shown absent by one that was sent after
it and did arrive (a listener gets a database's notifications in commit order), and a
session that must not wait is shown not waiting by ``pg_stat_activity``.
"""

from __future__ import annotations

import threading
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import psycopg
import pytest
from tests.pg import base_url, fresh_schema

from tickwork._store import ClaimRequest, NewRun
from tickwork._store.postgres import MIGRATION_LOCK, PostgresStore

pytestmark = pytest.mark.postgres

T0 = 1_772_366_400_000
#: seconds: generous, only ever reached when something is broken
WAIT = 60.0


@pytest.fixture
def schemas() -> Iterator[tuple[str, str]]:
    """The URLs of two fresh schemas of the test database."""
    with fresh_schema() as a, fresh_schema() as b:
        yield a, b


@contextmanager
def opened(url: str, *, name: str = "") -> Iterator[PostgresStore]:
    """A migrated store on ``url``, its sessions named ``name`` in pg_stat_activity; its
    transactions may sit idle as long as a test holds one open."""
    if name:
        url = f"{url}&application_name={name}"
    store = PostgresStore(url, idle_timeout_ms=600_000)
    try:
        store.migrate()
        yield store
    finally:
        store.close()


class Listener:
    """``store.listen`` on a thread of its own, keeping every payload it hears."""

    def __init__(self, store: PostgresStore) -> None:
        self.heard: list[str] = []
        self._changed = threading.Condition()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=store.listen, args=(self._hear, self._stop))
        self._thread.start()
        self.wait_for(lambda: "listening" in self.heard, "it listens")

    def _hear(self, payload: str) -> None:
        with self._changed:
            self.heard.append(payload)
            self._changed.notify_all()

    def wait_for(self, predicate: Callable[[], bool], what: str) -> None:
        with self._changed:
            if not self._changed.wait_for(predicate, timeout=WAIT):
                pytest.fail(f"waited {WAIT:.0f}s, yet not {what}: heard {self.heard}")

    def stop(self) -> None:
        self._stop.set()
        self._thread.join()


def _new_run(run_id: str, workflow: str = "report") -> NewRun:
    return NewRun(run_id, workflow, "1", None, 0, "default", T0, T0)


def test_a_run_started_in_one_schema_wakes_only_that_schemas_workers(schemas) -> None:
    """A run inserted in schema A notifies A's listener, then one in B notifies B's, then
    another in A notifies A's: each listener heard its own, and not the other's before."""
    url_a, url_b = schemas
    with opened(url_a) as store_a, opened(url_b) as store_b:
        listener_a, listener_b = Listener(store_a), Listener(store_b)
        try:
            store_a.runs.insert_run(_new_run("a-1"))
            listener_a.wait_for(lambda: listener_a.heard.count("runs") >= 1, "A hears a-1")
            store_b.runs.insert_run(_new_run("b-1"))
            listener_b.wait_for(lambda: "runs" in listener_b.heard, "B hears b-1")
            store_a.runs.insert_run(_new_run("a-2"))
            listener_a.wait_for(lambda: listener_a.heard.count("runs") >= 2, "A hears a-2")
        finally:
            listener_a.stop()
            listener_b.stop()
    assert listener_a.heard == ["listening", "runs", "runs"]  # not b-1's
    assert listener_b.heard == ["listening", "runs"]  # not a-1's


@contextmanager
def holding(store: PostgresStore, lock: Callable[[Any], None]) -> Iterator[None]:
    """An open transaction of ``store`` that has taken ``lock(tx)``."""
    with store._pg.transaction() as tx:
        lock(tx)
        yield


def _waits_for_a_lock(work: Callable[[], object], name: str) -> threading.Thread | None:
    """Run ``work`` on a thread whose sessions are named ``name``: None once it has
    finished, or the thread, still running, as soon as one of them waits on a lock."""
    thread = threading.Thread(target=work)
    thread.start()
    with psycopg.connect(base_url(), autocommit=True) as watcher:
        for _ in range(int(WAIT * 100)):
            waiting = watcher.execute(
                "SELECT count(*) FROM pg_stat_activity "
                "WHERE application_name = %s AND wait_event_type = 'Lock'",
                (name,),
            ).fetchone()
            if waiting and waiting[0]:
                return thread
            thread.join(0.01)
            if not thread.is_alive():
                return None
    pytest.fail(f"{name} neither waited on a lock nor finished")


def _claim(store: PostgresStore, claimed: list[str]) -> Callable[[], None]:
    """A claim of ``report``, limited to one live run, noting the runs it took."""

    def work() -> None:
        taken = store.runs.claim_runs(
            ClaimRequest(
                now_ms=T0,
                lease_ms=60_000,
                worker="w",
                pools=["default"],
                limits={"report": 1},
                limit=1,
                idle=True,
            )
        )
        claimed.extend(run.info.id for run in taken)

    return work


def test_a_concurrency_limit_lock_of_a_worker_before_the_schema_scoping_still_holds(
    schemas,
) -> None:
    """A fleet upgraded worker by worker keeps its limits: while a worker of the version
    before (its lock a database-wide key: ``hashtext('tickwork:concurrency:report')``)
    claims ``report``, a claim of ``report`` by this version waits until it ends."""
    url_a, _ = schemas
    tag = uuid.uuid4().hex[:8]
    legacy = "SELECT pg_advisory_xact_lock(hashtext('tickwork:concurrency:report'))"
    with opened(url_a) as holder, opened(url_a, name=f"twa-{tag}") as store_a:
        store_a.runs.insert_run(_new_run("a-1"))
        claimed: list[str] = []
        with holding(holder, lambda tx: tx.execute(legacy)):
            waiting = _waits_for_a_lock(_claim(store_a, claimed), f"twa-{tag}")
            assert waiting is not None, "the claim did not wait for the older worker's lock"
            assert claimed == []
        waiting.join()
    assert claimed == ["a-1"]


def test_a_migration_in_one_schema_holds_up_migrations_of_its_own_schema_only(
    schemas,
) -> None:
    """While a migration of schema A holds the migration lock, B's migrates (from a fresh
    start), and another store's on A waits until it ends."""
    url_a, url_b = schemas
    tag = uuid.uuid4().hex[:8]
    store_a = PostgresStore(f"{url_a}&application_name=twa-{tag}")
    store_b = PostgresStore(f"{url_b}&application_name=twb-{tag}")
    versions: list[int] = []
    try:
        with opened(url_a) as holder:
            latest = holder.migrate()
            with holding(holder, lambda tx: holder._pg.lock(tx, MIGRATION_LOCK)):
                migrate_b = _waits_for_a_lock(
                    lambda: versions.append(store_b.migrate()), f"twb-{tag}"
                )
                assert migrate_b is None and versions == [latest]
                waiting = _waits_for_a_lock(
                    lambda: versions.append(store_a.migrate()), f"twa-{tag}"
                )
                assert waiting is not None, "a migration of the holder's own schema did not wait"
            waiting.join()
    finally:
        store_a.close()
        store_b.close()
    assert versions == [latest, latest]
