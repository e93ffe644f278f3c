"""Runs waiting cost a worker nothing (issue 29), on every backend: with 100,000 runs of
its workflow not yet due (delayed, asleep), a claim and "when is the next run due" read
the due runs and a few index pages per priority level, never the runs waiting.

What a read costs is counted inside the transaction that runs it: SQLite's virtual
machine steps (``set_progress_handler``), PostgreSQL's pages of the queue read
(``pg_stat_get_xact_blocks_fetched``). Walking the waiting runs, as a claim did when it
found fewer due runs than it asked for (the order puts priority before ``available_at``),
cost 600,000 steps or more, 860 pages or more; ``bench/waiting.py`` gives the times.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any, TypeVar

import pytest
from tests.contract.test_runs_contract import LEASE, T0, new_run

from tickwork._store import Store
from tickwork._store.contract import ClaimRequest
from tickwork._store.pg_claim import claim_statement
from tickwork._store.run_rows import COL_ID
from tickwork._store.sql_runs import QUEUE_FILTER
from tickwork._store.sqlite_claim import SELECT_CLAIMABLE
from tickwork._store.transaction import UNSORTED, Transaction, in_filters

T = TypeVar("T")
DAY = 86_400_000
WAITING = 100_000
# The waiting runs, generated in the database (one statement per table; no % sign,
# which the PostgreSQL driver reads as a placeholder's): a quarter
# delayed and a quarter asleep at priority 5, as many at priority 0, due in a day.
WAITING_RUNS = """
WITH RECURSIVE c(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM c WHERE n < ?)
INSERT INTO tickwork_runs (id, workflow, version, status, attempt, priority, pool,
    created_at)
SELECT 'wait-' || n, 'wf', '1', CASE WHEN n - n / 2 * 2 = 0 THEN 'pending' ELSE 'sleeping' END, 1,
    CASE WHEN n - n / 4 * 4 < 2 THEN 5 ELSE 0 END, 'default', ?
FROM c
"""
WAITING_QUEUE = """
INSERT INTO tickwork_queue (id, workflow, pool, priority, status, available_at, created_at)
SELECT id, workflow, pool, priority, status, ? + CAST(substr(id, 6) AS BIGINT), created_at
FROM tickwork_runs WHERE substr(id, 1, 5) = 'wait-'
"""
# A claim or next_due may read this much, whatever the number of runs waiting: measured
# 150-730 steps (SQLite) and 26-120 pages (PostgreSQL, writes of the runs taken
# included) here; walking the waiting runs cost 600,000-900,000 steps, 860-1,290 pages.
MOST_STEPS = 5_000
MOST_PAGES = 300
# The pages of the queue (its table and indexes) this transaction has read so far
# (PostgreSQL: what pg_statio_user_tables counts, the transaction's part). Pages, not
# index entries: the entries an index scan passes over without returning are counted
# nowhere.
PAGES_READ = """
SELECT pg_stat_get_xact_blocks_fetched('tickwork_queue'::regclass)
    + COALESCE(SUM(pg_stat_get_xact_blocks_fetched(indexrelid)), 0)
FROM pg_index WHERE indrelid = 'tickwork_queue'::regclass
"""


# Runs of a workflow no worker serves (its workers are down, or it was retired), all due
# an hour ago: they come first in the claim's order (issue 33).
UNSERVED_RUNS = """
WITH RECURSIVE c(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM c WHERE n < ?)
INSERT INTO tickwork_runs (id, workflow, version, status, attempt, priority, pool,
    created_at)
SELECT 'unserved-' || n, 'nobody', '1', 'pending', 1, 0, 'default', ? FROM c
"""
UNSERVED_QUEUE = """
INSERT INTO tickwork_queue (id, workflow, pool, priority, status, available_at, created_at)
SELECT id, workflow, pool, priority, status, ?, created_at
FROM tickwork_runs WHERE workflow = 'nobody'
"""


@pytest.fixture
def unserved(store: Store) -> Store:
    """The store with 100,000 runs of the workflow "nobody" due an hour ago."""

    def work(tx: Transaction) -> None:
        tx.execute(UNSERVED_RUNS, WAITING, T0 - 3_600_000)
        tx.execute(UNSERVED_QUEUE, T0 - 3_600_000)

    store._write(work)  # type: ignore[attr-defined]
    if store.dialect == "postgres":  # type: ignore[attr-defined]
        store._write(lambda tx: tx.execute("ANALYZE tickwork_runs, tickwork_queue"))  # type: ignore[attr-defined]
    return store


@pytest.fixture
def waiting(store: Store) -> Store:
    """The store with 100,000 runs of the workflow "wf" waiting a day, at two levels."""

    def work(tx: Transaction) -> None:
        tx.execute(WAITING_RUNS, WAITING, T0)
        tx.execute(WAITING_QUEUE, T0 + DAY)

    store._write(work)  # type: ignore[attr-defined]
    if store.dialect == "postgres":  # type: ignore[attr-defined]
        store._write(lambda tx: tx.execute("ANALYZE tickwork_runs, tickwork_queue"))  # type: ignore[attr-defined]
    return store


def _counted(store: Store, tx: Transaction, read: Callable[[], T]) -> tuple[T, int]:
    """What ``read`` returns, and what it cost (SQLite: virtual machine steps;
    PostgreSQL: pages of the queue read)."""
    if store.dialect == "sqlite":  # type: ignore[attr-defined]
        steps = [0]

        def count() -> int:
            steps[0] += 1
            return 0  # go on

        conn = tx._cursor.connection  # type: ignore[attr-defined]
        conn.set_progress_handler(count, 1)
        try:
            result = read()
        finally:
            conn.set_progress_handler(None, 1)
        return result, steps[0]
    before = tx.execute(PAGES_READ).fetchone()[0]
    result = read()
    return result, int(tx.execute(PAGES_READ).fetchone()[0] - before)


def _most(store: Store) -> int:
    return MOST_STEPS if store.dialect == "sqlite" else MOST_PAGES  # type: ignore[attr-defined]


def _claim_counted(
    store: Store, at: int, most: int | None = None, *, also: tuple[str, ...] = ()
) -> tuple[list[str], int]:
    """The ids a worker serving "wf" (``concurrency=most``), and the workflows ``also``,
    claims at ``at`` (in the claim's order), and the cost of the claim, in the transaction
    that takes them (as a run's end claims)."""
    limits: dict[str, int | None] = {"wf": most, **dict.fromkeys(also)}
    request = ClaimRequest(
        now_ms=at, lease_ms=LEASE, worker="w1", pools=("default",), limits=limits, limit=10
    )
    runs = store.runs

    def work(tx: Transaction) -> tuple[list[Any], int]:
        return _counted(store, tx, lambda: runs.claim_in(tx, request))

    taken, cost = store._write(work)  # type: ignore[attr-defined]
    return [row[COL_ID] for row, *_ in taken], cost


def _next_due_counted(
    store: Store, workflows: tuple[str, ...] = ("wf", "nobody")
) -> tuple[int | None, int]:
    db = store._db  # type: ignore[attr-defined]
    with db.read() as tx:
        return _counted(store, tx, lambda: db.next_due_in(tx, ["default"], list(workflows)))


def test_a_claim_with_100000_runs_waiting_reads_only_the_due_runs(waiting: Store) -> None:
    """A claim that finds nothing due, and one that finds fewer due runs than it asks
    for, read a few index pages per priority level, not the 100,000 runs waiting; the
    due runs are still taken most urgent first, then first due first, lower levels
    included, and never a run of a workflow not served or not yet due."""
    store = waiting
    nothing, idle_cost = _claim_counted(store, T0)
    assert nothing == []
    assert idle_cost <= _most(store)

    for run_id, priority, due in (("low", -3, T0 - 3000), ("mid-b", 0, T0 - 1000),
                                  ("mid-a", 0, T0 - 2000), ("later", 0, T0 + 5000)):  # fmt: skip
        store.runs.insert_run(new_run(run_id, priority=priority, at=T0 - 9000, available_ms=due))
    store.runs.insert_run(new_run("unserved", workflow="other", priority=9, available_ms=T0 - 5000))
    taken, cost = _claim_counted(store, T0)
    assert taken == ["mid-a", "mid-b", "low"]
    assert cost <= _most(store)


def test_a_claim_under_a_concurrency_limit_with_100000_runs_waiting_counts_only_leases(
    waiting: Store,
) -> None:
    """Under ``concurrency=2`` a claim first counts the workflow's runs under a live lease:
    it reads those (tickwork_queue_running, migration 0013), not the 100,000 runs waiting;
    the limit still holds across priority levels: two of three due runs taken (one per
    level), then none while both leases live, then, both leases expired, in the claim's
    order, the higher level's take-over and the third."""
    store = waiting
    for n in range(3):
        priority = 5 if n == 0 else 0
        store.runs.insert_run(new_run(f"due-{n}", priority=priority, available_ms=T0 - 3000 + n))
    taken, cost = _claim_counted(store, T0, most=2)
    assert taken == ["due-0", "due-1"]
    assert cost <= _most(store)
    taken, cost = _claim_counted(store, T0 + 1, most=2)
    assert taken == []
    assert cost <= _most(store)
    # Both leases expired: due again from their expiry, due-1 after due-2 in its level.
    taken, cost = _claim_counted(store, T0 + LEASE + 1, most=2)
    assert taken == ["due-0", "due-2"]
    assert cost <= _most(store)


def test_next_due_with_100000_runs_waiting_reads_the_first_run_of_each_level(
    waiting: Store,
) -> None:
    """ "When is the next run due" is the earliest first run of each priority level of the
    workflows served: the waiting runs' first, then a lower level's earlier run, then the
    lease of a run taken; each read costs a few index pages per level, not 100,000."""
    store = waiting
    due, cost = _next_due_counted(store)
    assert due == T0 + DAY + 1  # wait-1, the first to wake
    assert cost <= _most(store)

    store.runs.insert_run(new_run("low", priority=-3, available_ms=T0 + 60_000))
    due, cost = _next_due_counted(store)
    assert due == T0 + 60_000
    assert cost <= _most(store)

    taken, _ = _claim_counted(store, T0 + 60_000)
    assert taken == ["low"]
    due, cost = _next_due_counted(store)
    assert due == T0 + 60_000 + LEASE  # its lease's expiry: a take-over is due then
    assert cost <= _most(store)


def test_a_claim_seeks_each_priority_level_up_to_its_first_run_not_yet_due(
    waiting: Store,
) -> None:
    """The plan of a claim at one priority level bounds its index walk by ``available_at``
    (SQLite: a search of tickwork_queue_claim on workflow, priority and available_at;
    PostgreSQL: tickwork_queue_claim's index condition on workflow, priority and
    available_at), so it stops at the level's first run not yet due instead of walking
    those after it."""
    store = waiting
    if store.dialect == "sqlite":  # type: ignore[attr-defined]
        statement = SELECT_CLAIMABLE.format(filters=in_filters(["default"], ["wf"], QUEUE_FILTER))
        with store._db.read() as tx:  # type: ignore[attr-defined]
            plan = tx.execute(f"EXPLAIN QUERY PLAN {statement}", 0, T0, "default", "wf", 10)
            details = [str(row[3]) for row in plan.fetchall()]
        seek = "(workflow=? AND priority=? AND available_at<?)"
        assert f"SEARCH q USING INDEX tickwork_queue_claim {seek}" in details, details
        return
    values = iter(["'wf'", 0, T0, "'default'", 10, "'w1'", T0 + LEASE, T0, T0])
    statement = re.sub(r"\?", lambda _: str(next(values)), claim_statement(1, 1, limited=False))
    with store._db.read() as tx:  # type: ignore[attr-defined]
        explained = tx.execute_under(UNSORTED, f"EXPLAIN {statement}").fetchall()
    plan = "\n".join(row[0] for row in explained)
    walk = (
        r"Index Scan using tickwork_queue_claim on tickwork_queue q .*\n"
        r"\s+Index Cond: \(\(workflow = 'wf'::text\) AND \(priority = 0\) AND "
        r"\(available_at <= '?\d+'?(::bigint)?\)\)"
    )
    assert re.search(walk, plan), plan


@pytest.mark.parametrize("also", [(), ("other",)], ids=["one-workflow", "two-workflows"])
def test_a_claim_never_walks_the_due_runs_of_workflows_its_worker_does_not_serve(
    unserved: Store, also: tuple[str, ...]
) -> None:
    """100,000 runs of a workflow no worker serves, due an hour ago, come first in the
    claim's order; a worker serving "wf" (and "other") seeks its own workflows' runs and
    reads a few index pages, not the 100,000 (issue 33: walking the whole queue in order,
    PostgreSQL read ~21,000 pages and drained another workflow 5x slower). Its own
    runs are still taken most urgent first, then first due first, across its workflows,
    and "when is the next run due" seeks them alike."""
    store = unserved
    nothing, idle_cost = _claim_counted(store, T0, also=also)
    assert nothing == []
    assert idle_cost <= _most(store)
    served = ("wf", "other")
    due, cost = _next_due_counted(store, served)
    assert due is None
    assert cost <= _most(store)

    store.runs.insert_run(new_run("wf-b", available_ms=T0 - 1000))
    store.runs.insert_run(new_run("wf-a", available_ms=T0 - 2000))
    store.runs.insert_run(new_run("urgent", priority=3, available_ms=T0 - 10))
    store.runs.insert_run(new_run("other-a", workflow="other", available_ms=T0 - 1500))
    due, cost = _next_due_counted(store, served)
    assert due == T0 - 2000
    assert cost <= _most(store)
    taken, cost = _claim_counted(store, T0, also=also)
    expected = ["urgent", "wf-a", "other-a", "wf-b"] if also else ["urgent", "wf-a", "wf-b"]
    assert taken == expected
    assert cost <= _most(store)
