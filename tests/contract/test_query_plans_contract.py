"""Every list_runs filter and page, and the other reads the faces and the worker make, are
planned on an index on both backends, so their cost does not grow with the history kept
(DESIGN.md §7; the timings with a million runs are bench/longhaul.py's).

SQLite: ``EXPLAIN QUERY PLAN`` names the index each step reads; no step may read
``tickwork_runs`` without one, nor sort with a temporary B-tree but what is in flight.
PostgreSQL: ``EXPLAIN EXECUTE`` of the statement prepared, with sequential and bitmap
scans, hash and merge joins off (a test's tiny tables would otherwise be read whole): an
index scan on the expected index and no Sort node. The faces' reads are planned for their
values, as the store runs them (``Database.plan_for_values``), on empty tables, where the
default estimates favour the index that matches the most filters; the worker's, and the
lists of runs in flight, on a store analyzed with a history, the worker's as the generic
plans psycopg's prepared statements get after five executions.
"""

from __future__ import annotations

import itertools
import re
import uuid
from collections.abc import Sequence
from typing import Any

import pytest

from tickwork import RunStatus
from tickwork._store import Store
from tickwork._store.claim_room import COUNT_LIVE
from tickwork._store.flow_history import SELECT_DECISIONS
from tickwork._store.pg_claim import NEXT_DUE as PG_NEXT_DUE
from tickwork._store.pg_claim import SELECT_LEVELS as PG_LEVELS
from tickwork._store.pg_claim import claim_statement, served
from tickwork._store.recent_runs import RECENT_RUNS_POSTGRES, recent_runs_sqlite
from tickwork._store.run_lists import list_runs_query
from tickwork._store.sql_deadlines import NEXT_DEADLINE, SELECT_PASSED, SELECT_RECENT_MISSES
from tickwork._store.sql_events import EVENTS_AFTER, SELECT_RUN_MARK
from tickwork._store.sql_firing import (
    DEQUEUE,
    SELECT_ACTIVE_RUNS,
    SELECT_EXISTING_RUNS,
    SELECT_QUEUE_HEAD,
    SELECT_QUEUED_BETWEEN,
)
from tickwork._store.sql_prune import FIRST_WORKFLOW, NEXT_WORKFLOW, SELECT_PRUNABLE_RUNS
from tickwork._store.sql_runs import QUEUE_FILTER, RELEASE_LEASE, SELECT_RUN, SELECT_STEPS
from tickwork._store.sql_schedules import (
    CLEAR_QUEUE,
    GET_INFO,
    LIST_INFO,
    SELECT_HISTORY,
    SELECT_KEYS,
)
from tickwork._store.sql_storage import COUNT_PAST, NEXT_ENDED_WORKFLOW, OLDEST_ENDED
from tickwork._store.sqlite_claim import NEXT_DUE, SELECT_CLAIMABLE, SELECT_LEVELS
from tickwork._store.sqlite_claim import _claim_statements as claim_statements
from tickwork._store.transaction import SOUGHT, UNSORTED, WALKED, Transaction, in_filters
from tickwork._values.models import ACTIVE_STATUSES

T0 = 1_772_366_400_000  # 2026-03-01T12:00:00Z
WORKFLOWS = ("report", "sync")
KEYS = ("k1", "k2", None)
STATUSES = [None, *RunStatus]


def _index_for(workflow: str | None, status: RunStatus | None, schedule: str | None) -> str:
    """The index of tickwork_runs that serves a combination of filters (run_lists.py's
    table); runs in flight are found in the queue, and their rows by id (PRIMARY)."""
    if status in ACTIVE_STATUSES:
        return PRIMARY
    if status is not None:
        if schedule is not None:
            return "tickwork_runs_schedule_status_ended"
        return "tickwork_runs_workflow_status_ended" if workflow else "tickwork_runs_status_ended"
    if schedule is not None:
        return "tickwork_runs_schedule"
    return "tickwork_runs_workflow" if workflow else "tickwork_runs_created"


COMBINATIONS = [
    pytest.param(workflow, status, schedule, before, id=f"{workflow}-{status}-{schedule}-{before}")
    for workflow, status, schedule, before in itertools.product(
        (None, "report"), STATUSES, (None, "k1"), (False, True)
    )
]


# -- a store with a history -------------------------------------------------------------

INSERT_RUN = """
INSERT INTO tickwork_runs (id, workflow, version, status, attempt, priority, pool,
    schedule_key, created_at)
VALUES (?, ?, '1', ?, 1, 0, 'default', ?, ?)
"""
INSERT_QUEUED = """
INSERT INTO tickwork_queue (id, workflow, pool, priority, status, available_at, schedule_key,
    created_at)
VALUES (?, ?, 'default', 0, ?, ?, ?, ?)
"""
#: stands for the primary key of tickwork_runs in the expectations (its name differs)
PRIMARY = "primary key"


def _insert(store: Store, rows: Sequence[tuple[str, str, str, str | None, int, int]]) -> None:
    """Runs given as (id, workflow, status, schedule key, created_at, available_at), as the
    store keeps them: each unfinished one has its row in the queue too."""
    runs = [(run_id, wf, status, key, at) for run_id, wf, status, key, at, _ in rows]
    queued = [
        (run_id, wf, status, due, key, at)
        for run_id, wf, status, key, at, due in rows
        if RunStatus(status) in ACTIVE_STATUSES
    ]

    def work(tx: Transaction) -> None:
        tx.executemany(INSERT_RUN, runs)
        if queued:
            tx.executemany(INSERT_QUEUED, queued)

    store._write(work)  # type: ignore[attr-defined]


def _primary(store: Store) -> str:
    sqlite = store.dialect == "sqlite"  # type: ignore[attr-defined]
    return "sqlite_autoindex_tickwork_runs_1" if sqlite else "tickwork_runs_pkey"


@pytest.fixture
def history(store: Store) -> Store:
    _add_history(store)
    return store


def _add_history(store: Store) -> None:
    """3,000 ended runs and a few unfinished ones, so that PostgreSQL's statistics (it is
    analyzed) describe a store that keeps its history, as the planner sees one in use."""
    rows = [
        (f"old-{n:05d}", WORKFLOWS[n % 2], "failed" if n % 50 == 0 else "completed",
         KEYS[n % 3], T0 - 10_000_000 + n, T0)
        for n in range(3000)
    ]  # fmt: skip
    rows += [(f"new-{n}", WORKFLOWS[n % 2], "pending", KEYS[n % 3], T0 + n, T0) for n in range(5)]
    _insert(store, rows)
    if store.dialect == "postgres":  # type: ignore[attr-defined]
        store._write(lambda tx: tx.execute("ANALYZE tickwork_runs, tickwork_queue"))  # type: ignore[attr-defined]


# -- reading plans ---------------------------------------------------------------------


def _plan(
    store: Store, statement: str, params: Sequence[Any], *, generic: bool = False
) -> list[str]:
    """The plan's lines: SQLite's step details, or PostgreSQL's EXPLAIN text (of the
    generic plan, or of one planned for these values)."""
    db = store._db  # type: ignore[attr-defined]
    if store.dialect == "sqlite":  # type: ignore[attr-defined]
        with db.read() as tx:
            rows = tx.execute(f"EXPLAIN QUERY PLAN {statement}", *params).fetchall()
        return [str(row[3]) for row in rows]
    numbered = iter(range(1, len(params) + 1))
    prepared = re.sub(r"\?", lambda _: f"${next(numbered)}", statement)
    name = f"plan_{uuid.uuid4().hex[:8]}"
    values = f"({', '.join(_literal(p) for p in params)})" if params else ""
    with db.read() as tx:
        tx.execute("SET LOCAL enable_seqscan = off")
        tx.execute("SET LOCAL enable_bitmapscan = off")
        tx.execute("SET LOCAL enable_hashjoin = off")
        tx.execute("SET LOCAL enable_mergejoin = off")
        mode = "force_generic_plan" if generic else "force_custom_plan"
        tx.execute(f"SET LOCAL plan_cache_mode = {mode}")
        tx.execute(f"PREPARE {name} AS {prepared}")
        lines = [row[0] for row in tx.execute(f"EXPLAIN EXECUTE {name}{values}").fetchall()]
        tx.execute(f"DEALLOCATE {name}")
    return lines


def _literal(value: Any) -> str:
    if isinstance(value, list):
        return f"ARRAY[{', '.join(_literal(v) for v in value)}]"
    return str(value) if isinstance(value, int) else "'" + str(value).replace("'", "''") + "'"


def _indexes(store: Store, plan: list[str], table: str = "tickwork_runs") -> list[str]:
    """The indexes the plan reads ``table`` through (``table`` may be "name alias")."""
    name, _, alias = table.partition(" ")
    if store.dialect == "sqlite":  # type: ignore[attr-defined]
        found = []
        for line in plan:
            match = re.match(rf"(SCAN|SEARCH) (?:{name}|{alias or name})\b(.*)", line)
            if match:
                index = re.search(r"USING (?:COVERING )?INDEX (\w+)", match.group(2))
                primary = "USING PRIMARY KEY" in match.group(2)
                assert index or primary, f"{table} read without an index: {plan}"
                found.append(index.group(1) if index else "PRIMARY KEY")
        return found
    found = []
    for line in plan:
        assert not re.search(rf"Seq Scan on {name}\b", line), plan
        match = re.search(rf"Index (?:Only )?Scan (?:Backward )?using (\w+) on {name}\b", line)
        bitmap = re.search(rf"Bitmap Index Scan on ({name}_\w+)", line)
        if match or bitmap:
            found.append((match or bitmap).group(1))  # type: ignore[union-attr]
    return found


def _sorts(store: Store, plan: list[str]) -> bool:
    if store.dialect == "sqlite":  # type: ignore[attr-defined]
        return any("TEMP B-TREE" in line for line in plan)
    return any(re.search(r"\bSort\b", line) for line in plan)


# -- list_runs ---------------------------------------------------------------------------


@pytest.mark.parametrize(("workflow", "status", "schedule", "before"), COMBINATIONS)
def test_each_list_runs_filter_and_page_reads_its_index_in_order(
    store: Store,
    workflow: str | None,
    status: RunStatus | None,
    schedule: str | None,
    before: bool,
) -> None:
    index = _index_for(workflow, status, schedule)
    # Runs in flight are found in the queue, read by id and sorted (a sort of the runs in
    # flight only); on a store with a history, as PostgreSQL's statistics then describe it.
    in_flight = index == PRIMARY
    if in_flight:
        index = _primary(store)
        _add_history(store)
    statement, params = list_runs_query(
        workflow=workflow,
        status=status,
        schedule_key=schedule,
        after=(T0, "some-run") if before else None,
        no_index=store._db.no_index,  # type: ignore[attr-defined]
        ranged=bool(store._db.plan_for_values),  # type: ignore[attr-defined]
    )
    plan = _plan(store, statement, [*params, 100])
    assert _indexes(store, plan) == [index], plan
    if in_flight:
        return
    assert not _sorts(store, plan), plan
    if store.dialect == "sqlite" and (workflow or status or schedule or before):  # type: ignore[attr-defined]
        assert plan[0].startswith("SEARCH"), plan  # a seek on the filters, not a whole scan


def _fill(store: Store) -> list[tuple[int, str, str, str, str | None]]:
    """Runs of every status, workflow and schedule, several created at the same instant;
    returns (created_at, id, workflow, status, schedule_key) of each."""
    rows = []
    statuses = list(RunStatus)
    for n in range(60):
        workflow = WORKFLOWS[n % 2]
        key = KEYS[n % 3]
        status = statuses[(n // 2) % len(statuses)]
        rows.append((T0 + n // 4, f"run-{n:03d}", workflow, status.value, key))
    values = [(run_id, wf, status, key, at, at) for at, run_id, wf, status, key in rows]
    _insert(store, values)
    return rows


def test_every_list_runs_combination_returns_the_matching_runs_newest_first(
    store: Store,
) -> None:
    rows = _fill(store)
    for workflow, status, key in itertools.product((None, *WORKFLOWS), STATUSES, KEYS):
        matching = sorted(
            (r for r in rows if workflow in (None, r[2]) and status in (None, r[3])
             and key in (None, r[4])),
            reverse=True,
        )  # fmt: skip
        expected = [r[1] for r in matching]
        filters: dict[str, Any] = {"workflow": workflow, "status": status, "schedule_key": key}
        assert [r.id for r in store.runs.list_runs(limit=1000, **filters)] == expected, filters
        # Paging by 3 with before= gives the same runs, each once.
        paged: list[str] = []
        before = None
        while True:
            page = store.runs.list_runs(limit=3, before=before, **filters)
            paged += [r.id for r in page]
            if len(page) < 3:
                break
            before = page[-1].id
        assert paged == expected, filters


@pytest.mark.parametrize(
    ("filters", "index"),
    [
        ({"workflow": "report"}, "tickwork_runs_workflow"),
        ({"schedule_key": "k1"}, "tickwork_runs_schedule"),
        ({"status": RunStatus.FAILED}, "tickwork_runs_status_ended"),
        ({"workflow": "report", "status": RunStatus.FAILED}, "tickwork_runs_workflow_status_ended"),
    ],
    ids=["workflow", "schedule", "status", "workflow-status"],
)
def test_a_value_common_long_ago_and_gone_since_is_still_listed_through_its_index(
    store: Store, filters: dict[str, Any], index: str
) -> None:
    """Day 300: much of the history is of a workflow, a schedule and failures that stopped
    long ago; then 5,000 runs of something else. Statistics call the old values common,
    so the newest 100 of them look near at hand along ``tickwork_runs_created``, which
    would walk all 5,000 newer runs first (more every day). Each list reads its own index
    in order, planned for its values as the store plans it."""
    old = [
        (f"old-{n:05d}", "report" if n % 10 < 6 else "sync", "failed" if n % 2 else "completed",
         "k1" if n % 10 < 6 else "k2", T0 - 10_000_000 + n, T0)
        for n in range(20_000)
    ]  # fmt: skip
    new = [(f"new-{n:05d}", "sync", "completed", "k2", T0 + n, T0) for n in range(5_000)]
    _insert(store, old + new)
    result = '{"rows": 100, "note": "' + "x" * 80 + '"}'  # rows as wide as real ones

    def widen(tx: Transaction) -> None:
        tx.execute("UPDATE tickwork_runs SET result = ?", result)
        if store.dialect == "postgres":  # type: ignore[attr-defined]
            tx.execute("ANALYZE tickwork_runs")

    store._write(widen)  # type: ignore[attr-defined]
    statement, params = list_runs_query(
        workflow=filters.get("workflow"),
        status=filters.get("status"),
        schedule_key=filters.get("schedule_key"),
        after=None,
        no_index=store._db.no_index,  # type: ignore[attr-defined]
        ranged=bool(store._db.plan_for_values),  # type: ignore[attr-defined]
    )
    plan = _plan(store, statement, [*params, 100])
    assert _indexes(store, plan) == [index], plan
    assert not _sorts(store, plan), plan
    matching = [n for n in range(19_999, -1, -1) if n % 10 < 6 or list(filters) == ["status"]]
    if "status" in filters:
        matching = [n for n in matching if n % 2]
    listed = store.runs.list_runs(limit=100, **filters)
    assert [r.id for r in listed] == [f"old-{n:05d}" for n in matching[:100]]


# -- the other reads of the faces, and the worker's ---------------------------------------


def _face_reads(store: Store) -> list[tuple[str, str, list[Any], str, str, bool]]:
    """(label, statement, parameters, table, expected index, may sort) of each read."""
    sqlite = store.dialect == "sqlite"  # type: ignore[attr-defined]
    pk_runs = "sqlite_autoindex_tickwork_runs_1" if sqlite else "tickwork_runs_pkey"
    pk_steps = "PRIMARY KEY" if sqlite else "tickwork_steps_pkey"
    return [
        ("get_run", SELECT_RUN, ["x"], "tickwork_runs", pk_runs, False),
        ("list_steps", SELECT_STEPS, ["x"], "tickwork_steps", pk_steps, True),  # one run's
        ("schedule_history", SELECT_HISTORY, ["k1", 100], "tickwork_schedule_history",
         "tickwork_schedule_history_key", False),
        ("subscription_history", SELECT_DECISIONS, ["k1", 100],
         "tickwork_subscription_history", "tickwork_subscription_history_key", False),
        ("get_schedule", GET_INFO, ["k1"], "tickwork_runs r", pk_runs, False),
        ("list_schedules", LIST_INFO.format(where="", page=""), [], "tickwork_runs r", pk_runs,
         True),  # sorted by key: the schedules, not the runs
        ("schedule_keys", SELECT_KEYS, [100], "tickwork_schedules",
         "sqlite_autoindex_tickwork_schedules_1" if sqlite else "tickwork_schedules_pkey", False),
    ]  # fmt: skip


def test_the_faces_other_reads_seek_an_index(store: Store) -> None:
    for label, statement, params, table, index, may_sort in _face_reads(store):
        plan = _plan(store, statement, params)
        assert _indexes(store, plan, table) == [index], (label, plan)
        if not may_sort:
            assert not _sorts(store, plan), (label, plan)


def test_a_waits_look_back_seeks_its_names_events_in_the_stores_order(store: Store) -> None:
    """The look back reads the events of its name stored after the run's mark (migration
    0022) through their index, in order, never a sort of every event of the name."""
    plan = _plan(store, EVENTS_AFTER, ["order.paid", 0])
    assert _indexes(store, plan, "tickwork_events") == ["tickwork_events_order"], plan
    assert not _sorts(store, plan), plan
    sqlite = store.dialect == "sqlite"  # type: ignore[attr-defined]
    plan = _plan(store, SELECT_RUN_MARK, ["x"])
    pk_runs = "sqlite_autoindex_tickwork_runs_1" if sqlite else "tickwork_runs_pkey"
    assert _indexes(store, plan, "tickwork_runs") == [pk_runs], plan


def _worker_reads() -> list[tuple[str, str, list[Any], str | None, bool]]:
    """(label, statement, parameters, the queue's index SQLite reads (None: any), may
    sort) of each read of a worker; what may be sorted are runs in flight."""
    one_workflow = in_filters(["default"], ["report"], QUEUE_FILTER)
    return [
        ("claim", SELECT_CLAIMABLE.format(filters=one_workflow),
         [0, T0, "default", "report", 10], "tickwork_queue_claim", False),
        ("claim's levels", SELECT_LEVELS, ["report", "report"], "tickwork_queue_claim", False),
        ("claim at the top level", claim_statements(1, 1)[0],
         ["report", T0, "default", "report", 10, "report", "report"], "tickwork_queue_claim",
         False),
        ("next_due", NEXT_DUE.format(filters=one_workflow),
         ["report", "report", "default", "report"], "tickwork_queue_claim", False),
        ("firing's overlap check", SELECT_ACTIVE_RUNS.format(marks="?, ?"), ["k1", "k2"],
         "tickwork_queue_schedule", True),  # two schedules' runs, merged
        ("concurrency count", COUNT_LIVE.format(marks="?, ?"), [T0, "report", "sync"],
         "tickwork_queue_running", True),
        ("release a lease", RELEASE_LEASE, [T0, "token"], None, False),
    ]  # fmt: skip


def test_the_worker_reads_read_the_queue_and_runs_only_by_their_ids(history: Store) -> None:
    """What a worker reads at every claim, wake-up and firing is in the queue, which holds
    the runs in flight and nothing else (migration 0011): the history is read, if at all,
    run by run through its primary key, never walked, scanned or sorted. SQLite's claim
    walks one served workflow's part of the queue's claim index at a time, in its order
    (no sort), and its overlap check seeks the schedules' runs in flight."""
    store = history
    sqlite = store.dialect == "sqlite"  # type: ignore[attr-defined]
    for label, statement, params, queue_index, may_sort in _worker_reads():
        plan = _plan(store, statement, params, generic=True)
        assert set(_indexes(store, plan)) <= {_primary(store)}, (label, plan)
        if sqlite:
            if queue_index is not None:
                walk = rf"USING (COVERING )?INDEX {queue_index}\b"
                assert any(re.search(walk, line) for line in plan), (label, plan)
            assert may_sort or not _sorts(store, plan), (label, plan)


def test_postgresql_sessions_never_compile_a_statement_with_jit(history: Store) -> None:
    """On a large table the plans' cost estimates pass the server's ``jit_above_cost`` and
    each call would compile for milliseconds to save microseconds (10M runs:
    ``list_runs(status="pending")`` 6.5 ms with JIT, 0.59 ms without): tickwork's sessions
    turn JIT off, so even a statement priced above every threshold runs uncompiled."""
    store = history
    if store.dialect != "postgres":  # type: ignore[attr-defined]
        pytest.skip("SQLite has no JIT")
    statement, params = list_runs_query(
        workflow=None,
        status=RunStatus.PENDING,
        schedule_key=None,
        after=None,
        no_index="",
        ranged=True,
    )
    values = iter([*params, 50])
    literal = re.sub(r"\?", lambda _: _literal(next(values)), statement)
    with store._db.read() as tx:  # type: ignore[attr-defined]
        for setting in ("jit_above_cost", "jit_inline_above_cost", "jit_optimize_above_cost"):
            tx.execute(f"SET LOCAL {setting} = 0")
        plan = [row[0] for row in tx.execute(f"EXPLAIN (ANALYZE) {literal}").fetchall()]
    assert not any(line.startswith("JIT:") for line in plan), plan


@pytest.mark.parametrize("limited", [False, True], ids=["no-limits", "concurrency-limits"])
@pytest.mark.parametrize("served", [1, 2], ids=["one-workflow", "two-workflows"])
def test_the_postgresql_claim_walks_each_served_workflow_on_the_claim_index_in_order(
    history: Store, limited: bool, served: int
) -> None:
    """PostgreSQL claims in one UPDATE (``pg_claim.py``): the candidates it locks are read
    from tickwork_queue_claim, one walk per workflow served, each in its order and bounded
    by the workflow (no Sort beneath the row locks), each run's row found by its id, and
    each run taken is written through the primary keys."""
    store = history
    if store.dialect != "postgres":  # type: ignore[attr-defined]
        pytest.skip("SQLite reads its candidates with SELECT_CLAIMABLE (above)")
    workflows = WORKFLOWS[:served]
    params: list[Any] = []
    for workflow in workflows:
        params += [workflow, 0, T0, "default", 10]
    if limited:
        params += [["report"], [2], 10]
    elif served > 1:
        params.append(10)
    params += ["w", T0 + 1000, T0, T0]
    statement = claim_statement(1, served, limited=limited)
    plan = _plan(store, statement, params, generic=True)
    assert set(_indexes(store, plan)) == {"tickwork_runs_pkey"}, plan
    assert set(_indexes(store, plan, "tickwork_queue")) == {
        "tickwork_queue_claim",
        "tickwork_queue_pkey",
    }, plan
    walks = [i for i, line in enumerate(plan) if "LockRows" in line]
    assert len(walks) == served, plan
    for start in walks:
        locked = _beneath("LockRows", plan[start:])
        seek = r"Index Cond: \(\(workflow = \$\d+\) AND \(priority = \$\d+\) AND \(available_at"
        assert any("using tickwork_queue_claim" in line for line in locked), plan
        assert any(re.search(seek, line) for line in locked), plan
        assert not any(re.search(r"\bSort\b", line) for line in locked), plan


def test_the_postgresql_priority_levels_and_next_due_seek_the_claim_index(history: Store) -> None:
    """PostgreSQL's claim first reads the priority levels of the workflows served, and
    "when is the next run due" the first run of each: seeks of tickwork_queue_claim, one
    per workflow and level, never a sort nor a read of the history (pg_claim.py)."""
    store = history
    if store.dialect != "postgres":  # type: ignore[attr-defined]
        pytest.skip("SQLite's are read per workflow (test_the_worker_reads_...)")
    workflows = ["report", "sync"]
    for statement, params in (
        (PG_LEVELS.format(served=served(2)), workflows),
        (
            PG_NEXT_DUE.format(served=served(2), filters="AND q.pool IN (?)"),
            [*workflows, "default"],
        ),
    ):
        plan = _plan(store, statement, params, generic=True)
        assert set(_indexes(store, plan, "tickwork_queue")) == {"tickwork_queue_claim"}, plan
        assert not _indexes(store, plan), plan
        assert not _sorts(store, plan), plan


def test_the_postgresql_claim_walks_the_claim_index_before_the_table_is_analyzed(
    store: Store,
) -> None:
    """A new deployment's first minute: runs pile up before autovacuum's first ANALYZE, and
    with no statistics the planner takes its defaults, which say few runs are due. It
    would then read every run due and sort them, at each claim (O(backlog)). The claim
    runs as the store runs it, planned with sorts off (``transaction.UNSORTED``) for one
    workflow, with scans and bitmaps off (``transaction.WALKED``) for several, and walks
    tickwork_queue_claim in order, stopping after the runs it takes; for several
    workflows, only the few rows their walks took are sorted."""
    if store.dialect != "postgres":  # type: ignore[attr-defined]
        pytest.skip("SQLite reads its candidates with SELECT_CLAIMABLE (above)")
    rows = [(f"due-{n:05d}", "report", "pending", None, T0 + n, T0 + n) for n in range(2000)]
    rows += [(f"sync-{n:05d}", "sync", "pending", None, T0 + n, T0 + n) for n in range(2000)]
    _insert(store, rows)
    for workflows, settings in (((["report"]), UNSORTED), (["report", "sync"], WALKED)):
        values: list[Any] = []
        for workflow in workflows:
            values += [workflow, 0, T0 + 5000, "default", 8]
        values += [8] if len(workflows) > 1 else []
        literals = [_literal(value) for value in [*values, "w", T0 + 60_000, T0, T0]]
        statement = claim_statement(1, len(workflows), limited=False)
        for literal in literals:
            statement = statement.replace("?", literal, 1)
        with store._db.read() as tx:  # type: ignore[attr-defined]
            explained = tx.execute_under(settings, f"EXPLAIN {statement}").fetchall()
            # The settings are the claim's only: the transaction's next statement is
            # planned as usual (the writes of other threads share it: write_combiner.py).
            assert tx.execute("SHOW enable_sort").fetchone()[0] == "on"
            assert tx.execute("SHOW enable_bitmapscan").fetchone()[0] == "on"
        plan = [row[0] for row in explained]
        walks = [i for i, line in enumerate(plan) if "LockRows" in line]
        assert len(walks) == len(workflows), plan
        for start in walks:
            locked = _beneath("LockRows", plan[start:])
            assert any("using tickwork_queue_claim" in line for line in locked), plan
            assert not any(re.search(r"\bSort\b", line) for line in locked), plan
        sorts = [line for line in plan if re.search(r"\bSort\b(?! Key)", line)]
        assert len(sorts) == (len(workflows) > 1), plan  # the few rows taken, merged


def test_a_sqlite_claim_seeks_the_workflows_it_serves_past_the_due_runs_of_others(
    store: Store,
) -> None:
    """2,000 due runs of a workflow no live worker serves (its workers are down, or it was
    retired) come before the one run of the served workflow in the claim's order. SQLite's
    claim seeks the served workflow's part of tickwork_queue_claim (migration 0012), so it
    never walks them: walking the whole queue in order, 100,000 of them made the served
    workflow's runs drain at 30 a second instead of ~3,900."""
    if store.dialect != "sqlite":  # type: ignore[attr-defined]
        pytest.skip("PostgreSQL's: test_the_postgresql_claim_walks_each_served_workflow_...")
    others = [(f"other-{n:05d}", "retired", "pending", None, T0 + n, T0 + n) for n in range(2000)]
    _insert(store, [*others, ("mine", "report", "pending", None, T0, T0 + 3000)])
    statement = SELECT_CLAIMABLE.format(filters=in_filters(["default"], ["report"], "q."))
    plan = _plan(store, statement, [0, T0 + 5000, "default", "report", 8])
    seek = r"SEARCH q USING INDEX tickwork_queue_claim \(workflow=\?"
    assert any(re.search(seek, line) for line in plan), plan
    with store._db.read() as tx:  # type: ignore[attr-defined]
        rows = tx.execute(statement, 0, T0 + 5000, "default", "report", 8).fetchall()
    assert [row[0] for row in rows] == ["mine"]


def test_the_postgresql_firing_reads_seek_runs_before_the_table_is_analyzed(
    store: Store,
) -> None:
    """The same first minute for a firing batch: without statistics, the unfinished runs
    of its schedules and the run ids it is about to start were read by scanning every run
    (~3.6 ms a batch among 5,000 runs, growing with them). As the store runs them (under
    ``transaction.SOUGHT``) they seek tickwork_queue_schedule and the runs' primary key."""
    if store.dialect != "postgres":  # type: ignore[attr-defined]
        pytest.skip("SQLite plans without statistics alike for any table size")
    rows = [
        (f"s{n % 500}@{n}", "report", "completed", f"s{n % 500}", T0 + n, T0) for n in range(5000)
    ]
    _insert(store, rows)
    keys = [f"s{n}" for n in range(100)]
    ids = [f"s{n}@{n + 9000}" for n in range(100)]
    active = SELECT_ACTIVE_RUNS.format(marks=", ".join(map(_literal, keys)))
    existing = SELECT_EXISTING_RUNS.format(marks=", ".join(map(_literal, ids)))
    for statement, table, index in (
        (active, "tickwork_queue", "tickwork_queue_schedule"),
        (existing, "tickwork_runs", "tickwork_runs_pkey"),
    ):
        with store._db.read() as tx:  # type: ignore[attr-defined]
            plan = [row[0] for row in tx.execute_under(SOUGHT, f"EXPLAIN {statement}").fetchall()]
        assert _indexes(store, plan, table) == [index], plan


def _beneath(node: str, plan: list[str]) -> list[str]:
    """The lines of the plan beneath its first ``node`` (indented further)."""
    start = next(i for i, line in enumerate(plan) if node in line)
    depth = len(plan[start]) - len(plan[start].lstrip(" ->"))
    lines = []
    for line in plan[start + 1 :]:
        if len(line) - len(line.lstrip(" ->")) <= depth:
            break
        lines.append(line)
    return lines


def test_pruning_and_db_stats_seek_an_index_of_ended_runs(history: Store) -> None:
    """Pruning's and ``db stats``' walks of ended runs read an index of ended runs only
    (their condition is the one migrations 0004 and 0005 write), so none reads the runs
    in flight or the whole history; the walk over a workflow's runs by end time reads
    tickwork_runs_ended."""
    store = history
    by_end = {"tickwork_runs_ended"}
    ended = {"tickwork_runs_ended", "tickwork_runs_workflow_status_ended"}  # both by workflow
    reads = [
        ("first workflow", FIRST_WORKFLOW, [], "tickwork_runs", ended),
        ("next workflow", NEXT_WORKFLOW, ["report"], "tickwork_runs", ended),
        ("prunable runs", SELECT_PRUNABLE_RUNS, ["report", 0, T0, 100], "tickwork_runs r",
         by_end),
        ("db stats: next workflow", NEXT_ENDED_WORKFLOW, ["report"], "tickwork_runs", ended),
        ("db stats: oldest", OLDEST_ENDED, ["report"], "tickwork_runs", by_end),
        ("db stats: backlog", COUNT_PAST, ["report", T0], "tickwork_runs", by_end),
    ]  # fmt: skip
    for label, statement, params, table, allowed in reads:
        plan = _plan(store, statement, params)
        found = _indexes(store, plan, table)
        assert len(found) == 1 and found[0] in allowed, (label, plan)
        assert not _sorts(store, plan), (label, plan)


def test_the_run_strips_read_each_schedules_newest_runs_by_a_seek_of_its_own(
    history: Store,
) -> None:
    """The Schedules page's strips (``recent_runs``): one read for many schedules, each
    schedule's newest runs read in order from tickwork_runs_schedule up to the limit, so
    neither the whole history nor a schedule's history is scanned or sorted (a window
    over every schedule's runs would number them all)."""
    store = history
    keys = ["k1", "k2", "k3"]
    if store.dialect == "sqlite":  # type: ignore[attr-defined]
        statement = recent_runs_sqlite(len(keys))
        params: list[Any] = [p for key in keys for p in (key, 30)]
    else:
        statement, params = RECENT_RUNS_POSTGRES, ["{" + ",".join(keys) + "}", 30]
    plan = _plan(store, statement, params)
    # PostgreSQL: one index scan, run again for each key of the array (a nested loop).
    seeks = len(keys) if store.dialect == "sqlite" else 1  # type: ignore[attr-defined]
    assert _indexes(store, plan) == ["tickwork_runs_schedule"] * seeks, plan
    assert not _sorts(store, plan), plan
    if store.dialect == "sqlite":  # type: ignore[attr-defined]
        assert all("(schedule_key=?)" in line for line in plan if "tickwork_runs" in line), plan
    else:
        assert any("Index Cond: (schedule_key = k.key)" in line for line in plan), plan
        assert any("Limit" in line for line in plan), plan


def test_the_buffer_all_queue_is_read_and_written_by_a_seek_on_its_primary_key(
    store: Store,
) -> None:
    """``overlap="buffer_all"``'s waiting occurrences (``tickwork_schedule_queue``): firing
    reads a schedule's oldest two, a backfill its span, and a start or a reset deletes,
    each a seek on the queue's primary key (key, occurrence), never a scan of every
    schedule's queue."""
    sqlite = store.dialect == "sqlite"  # type: ignore[attr-defined]
    pk = "sqlite_autoindex_tickwork_schedule_queue_1" if sqlite else "tickwork_schedule_queue_pkey"
    reads = [
        ("queue head", SELECT_QUEUE_HEAD, ["k1"]),
        ("queued in a span", SELECT_QUEUED_BETWEEN, ["k1", T0, T0 + 60_000]),
        ("dequeue", DEQUEUE, ["k1", T0]),
        ("clear", CLEAR_QUEUE, ["k1"]),
    ]
    for label, statement, params in reads:
        plan = _plan(store, statement, params)
        assert _indexes(store, plan, "tickwork_schedule_queue") == [pk], (label, plan)
        assert not _sorts(store, plan), (label, plan)
        if sqlite:
            assert plan[0].startswith("SEARCH"), (label, plan)
        else:
            assert any(re.search(r"Index Cond: \(+key = ", line) for line in plan), (label, plan)


def test_the_deadline_pass_seeks_only_the_runs_with_a_deadline_to_check(history: Store) -> None:
    """The deadline pass and its wake-up read the partial index of runs whose deadline is
    still to check (migration 0018), never the history of runs; the dashboard's banner
    reads the partial index of deadline misses, never the whole history."""
    store = history
    for statement, params in ((SELECT_PASSED, [T0, 100]), (NEXT_DEADLINE, [])):
        plan = _plan(store, statement, params, generic=True)
        assert _indexes(store, plan) == ["tickwork_runs_deadline"], plan
        assert not _sorts(store, plan), plan
    plan = _plan(store, SELECT_RECENT_MISSES, [T0, 100])
    index = _indexes(store, plan, "tickwork_schedule_history")
    assert index == ["tickwork_schedule_history_deadline_missed"], plan
