"""A fleet on PostgreSQL agrees on the database server's time, not on each machine's.

``Engine(postgresql_url)`` without a clock uses a ``ReferenceClock`` over the database's
``clock_timestamp()``: a worker whose own clock runs an hour ahead still reads the
database's "now", so it neither fires occurrences early nor sees live leases as expired.
A local clock running ahead is simulated by shifting what ``tickwork._values.clock`` reads (its
``datetime.now`` and ``time.time``) by an hour.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from types import SimpleNamespace
from typing import Any

import psycopg
import pytest
from tests.pg import base_url, fresh_schema
from tests.pg_proxy import proxied

from tickwork import Context, Engine
from tickwork._values import clock as _clock
from tickwork._values.clock import MAX_ROUND_TRIP_NS, ReferenceClock, SystemClock

HOUR = timedelta(hours=1)
#: how far apart two readings of the same machine's clocks may be (a round trip or two)
CLOSE = timedelta(seconds=1)
#: seconds PostgreSQL stays out of reach while a sync of the clock waits for it
OUTAGE_S = 4.0


@pytest.fixture
def pg_url() -> Iterator[str]:
    with fresh_schema() as url:
        yield url


def _database_now(url: str) -> datetime:
    with psycopg.connect(url, autocommit=True) as conn:
        row = conn.execute("SELECT clock_timestamp()").fetchone()
    assert row is not None
    return row[0].astimezone(UTC)  # type: ignore[no-any-return]


@pytest.fixture
def local_clock_an_hour_ahead(monkeypatch: pytest.MonkeyPatch) -> None:
    """This process's clock, as ``tickwork`` reads it, runs an hour ahead."""

    class Ahead(datetime):
        @classmethod
        def now(cls, tz: Any = None) -> Any:
            return datetime.now(tz) + HOUR

    ahead = SimpleNamespace(
        time=lambda: time.time() + HOUR.total_seconds(),
        time_ns=lambda: time.time_ns() + int(HOUR.total_seconds()) * 1_000_000_000,
        monotonic=time.monotonic,
        sleep=time.sleep,
    )
    monkeypatch.setattr(_clock, "datetime", Ahead)
    monkeypatch.setattr(_clock, "time", ahead)


@pytest.mark.postgres
def test_engine_on_postgres_without_a_clock_reads_the_database_clock(pg_url: str) -> None:
    with Engine(pg_url) as engine:
        assert isinstance(engine.clock, ReferenceClock)
        before = _database_now(pg_url)
        now = engine.clock.now()
        after = _database_now(pg_url)
    assert before - CLOSE <= now <= after + CLOSE


@pytest.mark.postgres
@pytest.mark.usefixtures("local_clock_an_hour_ahead")
def test_worker_whose_clock_runs_an_hour_ahead_still_reads_the_database_time(
    pg_url: str,
) -> None:
    assert SystemClock().now() - datetime.now(UTC) > HOUR - CLOSE  # the shift is in place
    with Engine(pg_url) as engine:
        before = _database_now(pg_url)
        now = engine.clock.now()
        after = _database_now(pg_url)
    assert before - CLOSE <= now <= after + CLOSE


@pytest.mark.postgres
@pytest.mark.usefixtures("local_clock_an_hour_ahead")
def test_worker_whose_clock_runs_ahead_does_not_fire_an_occurrence_early(pg_url: str) -> None:
    """An hourly schedule registered now is due in an hour by the database's clock: the
    worker an hour ahead does not fire it; read off its own clock, it would have."""
    with Engine(pg_url) as fleet, Engine(pg_url, clock=SystemClock()) as own_clock:
        for engine in (fleet, own_clock):

            @engine.workflow("hourly")
            def hourly(ctx: Context) -> None:
                return None

        key = fleet.schedule("hourly", every="1h", key="hourly")
        assert fleet.tick() == []
        assert fleet.list_runs() == []
        # The same worker trusting its own clock: the occurrence looks due already.
        assert len(own_clock.tick()) == 1
        schedule = fleet.get_schedule(key)
        assert schedule is not None and schedule.last_run_id is not None


def test_reference_clock_follows_its_reference_not_the_local_clock() -> None:
    """A reference an hour ahead of this machine: now() is an hour ahead too."""
    clock = ReferenceClock(lambda: _clock.to_ms(datetime.now(UTC) + HOUR))
    expected = datetime.now(UTC) + HOUR
    assert abs(clock.now() - expected) < CLOSE
    assert abs(clock.now() - (datetime.now(UTC) + HOUR)) < CLOSE


def test_reference_clock_keeps_its_last_offset_while_the_reference_is_unreachable() -> None:
    calls: list[str] = []

    def reference() -> int:
        calls.append("asked")
        if len(calls) > 1:
            raise OSError("database unreachable")
        return _clock.to_ms(datetime.now(UTC) + HOUR)

    clock = ReferenceClock(reference, refresh=0.0)  # asks again at every reading
    assert abs(clock.now() - (datetime.now(UTC) + HOUR)) < CLOSE
    assert abs(clock.now() - (datetime.now(UTC) + HOUR)) < CLOSE
    assert len(calls) >= 2  # it did ask again, and kept the offset it had


@pytest.mark.postgres
def test_a_sync_that_waited_out_an_outage_does_not_put_the_clock_ahead_of_the_database(
    pg_url: str,
) -> None:
    """The engine reaches PostgreSQL through a proxy that the test cuts off. A sync of
    the clock comes due during the outage and waits for a connection until the proxy
    lets connections through again, seconds later; the clock is then not ahead of the
    database's, and behind by no more than the longest round trip it accepts. Before,
    the wait counted in the sample's round trip and the clock ran ahead by half of it."""
    with proxied(base_url()) as proxy:
        url = pg_url.replace(base_url(), proxy.url, 1)
        with Engine(url) as engine:
            clock = engine.clock
            assert isinstance(clock, ReferenceClock)
            clock.now()  # synced through the proxy
            clock._refresh_ns = 500_000_000  # the next sync is due in half a second
            clock._due = None
            clock.now()
            proxy.cut()
            engine._runtime.database._pg._pool.check()  # drops the cut connections
            synced = clock._synced
            time.sleep(0.6)  # the next sync is due
            waiting = threading.Thread(target=clock.now)  # it waits for a connection
            waiting.start()
            time.sleep(OUTAGE_S)
            assert waiting.is_alive(), "the sync did not wait for the database"
            proxy.restore()
            waiting.join(timeout=30)
            assert not waiting.is_alive()
            assert clock._synced != synced, "the sync that waited did not succeed"
            clock._refresh_ns = 3600 * 1_000_000_000  # no sync after the one under test
            before = _database_now(pg_url)
            now = clock.now()
            after = _database_now(pg_url)
    assert now <= after, f"the clock is {now - after} ahead of the database"
    assert now >= before - timedelta(milliseconds=MAX_ROUND_TRIP_NS // 1_000_000 + 5)
