"""PostgreSQL connections lost and refused, then given again: the store serves the next
call as soon as the database takes connections again, and an outage is reported once.

The outage is a login role switched to ``NOLOGIN`` with its backends terminated: every
connection of that store is cut and new ones are refused, as while a server restarts,
without disturbing the other suites sharing the server.
"""

from __future__ import annotations

import threading
import uuid
from collections.abc import Iterator, Mapping
from typing import Any

import psycopg
import pytest
from tests.pg import base_url, fresh_schema
from tests.polling import wait_until

from tickwork._rules.registry import Registry
from tickwork._runtime.core import LeaseKeeper, Runtime
from tickwork._runtime.hooks import Hooks
from tickwork._store.postgres import PostgresStore
from tickwork._values.clock import SystemClock
from tickwork.errors import StoreError


class Outage:
    """A login role for one store, whose logins can be refused and allowed again."""

    def __init__(self, admin_url: str, url: str) -> None:
        self.admin_url = admin_url
        self.role = f"tw_outage_{uuid.uuid4().hex[:8]}"
        self._admin("CREATE ROLE {} LOGIN SUPERUSER")
        self.url = psycopg.conninfo.make_conninfo(url, user=self.role)

    def _admin(self, statement: str) -> None:
        with psycopg.connect(self.admin_url, autocommit=True) as conn:
            conn.execute(statement.format(self.role))

    def begin(self) -> None:
        """Refuse new connections and cut the existing ones."""
        self._admin("ALTER ROLE {} NOLOGIN")
        with psycopg.connect(self.admin_url, autocommit=True) as conn:
            conn.execute(
                "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE usename = %s",
                (self.role,),
            )

    def end(self) -> None:
        self._admin("ALTER ROLE {} LOGIN")

    def drop(self) -> None:
        self.begin()
        self._admin("DROP OWNED BY {}")
        self._admin("DROP ROLE {}")


@pytest.fixture
def outage() -> Iterator[Outage]:
    with fresh_schema() as url:
        outage = Outage(base_url(), url)
        try:
            yield outage
        finally:
            outage.drop()


@pytest.mark.postgres
def test_call_waiting_for_a_connection_when_the_database_comes_back_gets_one(
    outage: Outage,
) -> None:
    """A call that began while no connection could be made, and is still waiting for one
    from the pool when connections are allowed again, gets one and succeeds."""
    store = PostgresStore(outage.url, max_connections=1)  # one connection to cut
    try:
        store.migrate()
        assert store.runs.get_run("nope") is None
        outage.begin()
        with pytest.raises(StoreError):
            store.runs.get_run("nope")  # its pooled connection was cut

        outcome: list[Any] = []

        def call() -> None:
            try:
                outcome.append(store.runs.get_run("nope"))
            except StoreError as exc:
                outcome.append(exc)

        waiting = threading.Thread(target=call)
        waiting.start()
        # Let its first connection attempts be refused (the pool gives up growing).
        threading.Event().wait(1.0)
        outage.end()
        waiting.join(30)
        assert outcome == [None], f"the waiting call failed: {outcome}"
        assert store.runs.get_run("nope") is None
    finally:
        store.close()


class _FlakyRenewals:
    """A store whose lease renewals fail (as in an outage) while ``down`` is set."""

    def __init__(self) -> None:
        self.down = threading.Event()
        self.calls = 0
        self.runs = self  # the runs part: its renew_leases

    def migrate(self) -> int:
        return 1

    def renew_leases(
        self, *, tokens: Mapping[str, str], now_ms: int, lease_ms: int
    ) -> dict[str, bool]:
        self.calls += 1
        if self.down.is_set():
            raise StoreError("PostgreSQL: connection refused")
        return dict.fromkeys(tokens, False)


def test_lease_keeper_reports_each_outage_once_not_at_every_renewal() -> None:
    """Renewals failing five times in a row are one report; after a renewal succeeds,
    the next failure is a new outage and is reported again."""
    store = _FlakyRenewals()
    reports: list[str] = []
    runtime = Runtime(
        database=store,  # type: ignore[arg-type]
        registry=Registry(),
        clock=SystemClock(),
        pools=("default",),
        lease_ms=30,  # renewals every 10 ms
        hooks=Hooks(on_error=lambda _exc, info: reports.append(info["where"])),
        worker_id="w",
    )
    keeper = LeaseKeeper(runtime)
    try:
        store.down.set()
        keeper.hold("r1", "token")
        wait_until(lambda: store.calls >= 5, "five renewals failed")
        store.down.clear()
        calls = store.calls
        wait_until(lambda: store.calls >= calls + 2, "a renewal went through")
        store.down.set()
        calls = store.calls
        wait_until(lambda: store.calls >= calls + 5, "five more renewals failed")
    finally:
        keeper.stop()
    assert reports == ["renewing leases", "renewing leases"]
