"""A simulated day under retention: the database stops growing (DESIGN §7).

Schedules firing every two minutes, a retention of an hour, and a ``FakeClock`` moved
two minutes at a time through 24 hours; at each step the engine fires what is due and
runs it, and every five minutes (at the step that reaches them) it prunes, as a worker's
loop and its pruning thread would. Once the first retention period is over and each
schedule has its 100 kept history entries (200 minutes), the store holds as many rows as
it will ever hold, so its size must stop growing: on SQLite the file's page count (pages
freed by pruning are reused), on PostgreSQL the tables' total size with their indexes.
Without pruning every hour would add about what the first hour did.
"""

from __future__ import annotations

import sqlite3
import time
import uuid
from collections.abc import Callable, Iterator
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import pytest
from tests.pg import base_url

from tickwork import Context, Engine
from tickwork.testing import FakeClock

SCHEDULES = 6
EVERY_MIN = 2
HOURS = 24
PAYLOAD = "x" * 300  # what a step's result weighs, roughly
#: hours after which the size must hold: the first hour's runs are pruned in the second,
#: the 100 history entries kept per schedule are reached at 3h20, and a margin
SETTLED = 4
#: seconds a vacuum waits for the transactions open elsewhere on the server to end:
#: generous, other suites' last milliseconds (a frozen worker's, 5 s)
HORIZON_WAIT = 300.0
# Sessions anywhere on the server whose transaction, begun before the given instant,
# still holds back the oldest transaction id a B-tree page's reuse waits for.
OLDER_TRANSACTIONS = """
SELECT datname, pid, state, xact_start FROM pg_stat_activity
WHERE pid <> pg_backend_pid() AND xact_start < %s
    AND (backend_xmin IS NOT NULL OR backend_xid IS NOT NULL)
"""


def simulate_day(
    engine: Engine,
    clock: FakeClock,
    size: Callable[[], int],
    after_prune: Callable[[int], None] = lambda _passes: None,
) -> list[int]:
    """Run the day; return ``size()`` at the end of each hour (index 0: at the start).
    ``after_prune(n)`` follows the n-th pruning pass."""

    @engine.workflow("report")
    def report(ctx: Context, input: int) -> int:
        ctx.step("gather", lambda: [PAYLOAD, input])
        return input

    for n in range(SCHEDULES):
        engine.schedule("report", n, every=f"{EVERY_MIN}m", key=f"report-{n}")
    sizes = [size()]
    started = passes = 0
    for minute in range(EVERY_MIN, HOURS * 60 + 1, EVERY_MIN):
        clock.advance(f"{EVERY_MIN}m")
        started += len(engine.tick())
        engine.run_until_idle()
        if minute // 5 > passes:  # a pass every five minutes
            engine.prune()
            passes += 1
            after_prune(passes)
        if minute % 60 == 0:
            sizes.append(size())
    assert started == SCHEDULES * HOURS * 60 // EVERY_MIN
    return sizes


def assert_stops_growing(sizes: list[int], *, slack: float = 0.05) -> None:
    """Growth in the first hours, then none beyond ``slack`` of the first hour's growth
    once retention holds it (a store still growing by 2 % of its size an hour fails it
    within the day's last 20 hours)."""
    first_hour = sizes[1] - sizes[0]
    assert first_hour > 0  # the first hour writes something to keep
    assert max(sizes[SETTLED:]) - sizes[SETTLED] <= first_hour * slack, sizes
    # Without pruning every hour would add about the first hour's growth.
    assert sizes[-1] - sizes[0] < 2 * first_hour, sizes


def test_the_sqlite_file_stops_growing_under_retention(sqlite_url: str, clock: FakeClock) -> None:
    """``PRAGMA page_count`` of the file: pages freed by pruning go to SQLite's freelist
    and are reused by new rows, so the file stays the size the first hours made it."""
    path = sqlite_url.removeprefix("sqlite:///")

    def pages() -> int:
        with sqlite3.connect(path) as conn:
            return int(conn.execute("PRAGMA page_count").fetchone()[0])

    with Engine(sqlite_url, clock=clock, retention="1h") as engine:
        sizes = simulate_day(engine, clock, pages)
    assert_stops_growing(sizes)


@pytest.fixture
def own_database() -> Iterator[str]:
    """A PostgreSQL database of its own, dropped afterwards: VACUUM removes only the rows
    no open transaction of the same database can still see, so a shared one (other tests
    running at once) would keep dead rows and make sizes wander."""
    import psycopg

    base = base_url()
    name = f"tw_day_{uuid.uuid4().hex[:10]}"
    with psycopg.connect(base, autocommit=True) as conn:
        conn.execute(f"CREATE DATABASE {name}")
        # Commits skip their fsync: sizes do not depend on it, and the day runs faster.
        conn.execute(f"ALTER DATABASE {name} SET synchronous_commit = off")
    try:
        yield urlunsplit(urlsplit(base)._replace(path=f"/{name}"))
    finally:
        with psycopg.connect(base, autocommit=True) as conn:
            conn.execute(f"DROP DATABASE {name} WITH (FORCE)")


def test_the_postgres_tables_stop_growing_under_retention(
    own_database: str, clock: FakeClock
) -> None:
    """``pg_total_relation_size`` of every tickwork table, with their indexes and TOAST,
    measured after a plain ``VACUUM`` (not FULL: nothing is given back to the system, the
    space of deleted rows is marked for reuse). Autovacuum runs the same VACUUM by itself
    once a table's dead rows pass 20% (its default scale factor; the test server may run
    with autovacuum off, so the test runs it): here every fifteen minutes, when a quarter
    of the hour's rows have been pruned since the last."""
    import psycopg

    def vacuum() -> None:  # every tickwork table, as autovacuum would (not the catalogs)
        with psycopg.connect(own_database, autocommit=True) as conn:
            tables = conn.execute(
                "SELECT tablename FROM pg_tables WHERE schemaname = current_schema() "
                "AND starts_with(tablename, 'tickwork_')"
            ).fetchall()
            conn.execute(f"VACUUM {', '.join(name for (name,) in tables)}")
            _until_older_transactions_ended(conn)

    def vacuumed_size() -> int:
        vacuum()
        with psycopg.connect(own_database) as conn:
            row = conn.execute(
                "SELECT SUM(pg_total_relation_size(c.oid)) FROM pg_class c "
                "JOIN pg_namespace n ON n.oid = c.relnamespace "
                "WHERE n.nspname = current_schema() AND c.relkind = 'r'"
            ).fetchone()
        assert row is not None
        return int(row[0])

    def autovacuum(passes: int) -> None:
        if passes % 3 == 0:
            vacuum()

    with Engine(own_database, clock=clock, retention="1h") as engine:
        sizes = simulate_day(engine, clock, vacuumed_size, autovacuum)
    # A B-tree page that VACUUM emptied is reused only once no transaction of any
    # database on the server may still see it, so other sessions' transactions delay
    # the reuse by a page or a few (seen: +106 kB, 14 % of the first hour's growth, with
    # the whole suite running beside it). Growth that never stops passes 50 % in hours.
    assert_stops_growing(sizes, slack=0.5)


def _until_older_transactions_ended(conn: Any) -> None:
    """Until every transaction open anywhere on the server when the vacuum ended has
    ended, as autovacuum would find the server when it next came: the B-tree pages the
    vacuum emptied can be reused only then, and a long one elsewhere (another suite's,
    a benchmark's load) made the day grow by pages it could not reuse (+1.5 MB, twice
    the first hour's growth, beside a 40 s transaction in another database)."""
    (ended,) = conn.execute("SELECT clock_timestamp()").fetchone()
    deadline = time.monotonic() + HORIZON_WAIT
    while older := conn.execute(OLDER_TRANSACTIONS, (ended,)).fetchall():
        if time.monotonic() > deadline:
            pytest.fail(f"transactions elsewhere stayed open {HORIZON_WAIT:.0f}s: {older}")
        time.sleep(0.05)
