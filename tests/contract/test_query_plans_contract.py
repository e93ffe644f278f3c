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
from tickwork._models import ACTIVE_STATUSES
from tickwork._store import Store
from tickwork._store.pg_claim import claim_statement
from tickwork._store.recent_runs import RECENT_RUNS_POSTGRES, recent_runs_sqlite
from tickwork._store.run_lists import list_runs_query
from tickwork._store.sql_prune import FIRST_WORKFLOW, NEXT_WORKFLOW, SELECT_PRUNABLE_RUNS
from tickwork._store.sql_runs import (
    COUNT_LIVE,
    NEXT_DUE,
    RELEASE_LEASE,
    SELECT_CLAIMABLE,
    SELECT_RUN,
    SELECT_STEPS,
)
from tickwork._store.sql_schedules import (
    CLEAR_QUEUE,
    DEQUEUE,
    GET_INFO,
    LIST_INFO,
    SELECT_ACTIVE_RUNS,
    SELECT_EXISTING_RUNS,
    SELECT_HISTORY,
    SELECT_QUEUE_HEAD,
    SELECT_QUEUED_BETWEEN,
)
from tickwork._store.sql_storage import COUNT_PAST, NEXT_ENDED_WORKFLOW, OLDEST_ENDED
from tickwork._store.transaction import SOUGHT, UNSORTED, Transaction, in_filters

T0 = 1_772_366_400_000  # 2026-03-01T12:00:00Z
WORKFLOWS = ("report", "sync")
KEYS = ("k1", "k2", None)
STATUSES = [None, *RunStatus]


def _index_for(workflow: str | None, status: RunStatus | None, schedule: str | None) -> str:
    """The index that serves a combination of filters (run_lists.py's table)."""
    if status in ACTIVE_STATUSES:
        return "tickwork_runs_schedule_active" if schedule else "tickwork_runs_due"
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
    schedule_key, created_at, available_at)
VALUES (?, ?, '1', ?, 1, 0, 'default', ?, ?, ?)
"""


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
    store._write(lambda tx: tx.executemany(INSERT_RUN, rows))  # type: ignore[attr-defined]
    if store.dialect == "postgres":  # type: ignore[attr-defined]
        store._write(lambda tx: tx.execute("ANALYZE tickwork_runs"))  # type: ignore[attr-defined]


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
    # Runs in flight are read from tickwork_runs_due and sorted. PostgreSQL prefers that
    # to an index in order only when its statistics say the runs in flight are few.
    in_flight = index == "tickwork_runs_due"
    if in_flight:
        _add_history(store)
    statement, params = list_runs_query(
        workflow=workflow,
        status=status,
        schedule_key=schedule,
        after=(T0, "some-run") if before else None,
        no_index=store._db.no_index,  # type: ignore[attr-defined]
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
    store._write(lambda tx: tx.executemany(INSERT_RUN, values))  # type: ignore[attr-defined]
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
        assert [r.id for r in store.list_runs(limit=1000, **filters)] == expected, filters
        # Paging by 3 with before= gives the same runs, each once.
        paged: list[str] = []
        before = None
        while True:
            page = store.list_runs(limit=3, before=before, **filters)
            paged += [r.id for r in page]
            if len(page) < 3:
                break
            before = page[-1].id
        assert paged == expected, filters


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
        ("get_schedule", GET_INFO, ["k1"], "tickwork_runs r", pk_runs, False),
        ("list_schedules", LIST_INFO.format(where="", page=""), [], "tickwork_runs r", pk_runs,
         True),  # sorted by key: the schedules, not the runs
    ]  # fmt: skip


def test_the_faces_other_reads_seek_an_index(store: Store) -> None:
    for label, statement, params, table, index, may_sort in _face_reads(store):
        plan = _plan(store, statement, params)
        assert _indexes(store, plan, table) == [index], (label, plan)
        if not may_sort:
            assert not _sorts(store, plan), (label, plan)


def _worker_reads(store: Store) -> list[tuple[str, str, list[Any], str, bool]]:
    """(label, statement, parameters, expected index, may sort) of each read of a
    worker; what may be sorted are runs in flight, never the history."""
    db = store._db  # type: ignore[attr-defined]
    filters = in_filters(["default"], ["report", "sync"], db.unindexed)
    claim = SELECT_CLAIMABLE.format(filters=filters) + db.lock_suffix
    active = SELECT_ACTIVE_RUNS.format(marks="?, ?", no_index=db.no_index)
    due = "tickwork_runs_due"
    return [
        ("claim", claim, [T0, "default", "report", "sync", 10], due, False),
        ("next_due", NEXT_DUE.format(filters=filters), ["default", "report", "sync"], due,
         False),
        ("firing's overlap check", active, ["k1", "k2"], "tickwork_runs_schedule_active",
         True),  # two schedules' runs, merged
        ("concurrency count", COUNT_LIVE.format(no_index=db.no_index), [T0], due, True),
        ("release a lease", RELEASE_LEASE, [T0, "token"], due, False),
    ]  # fmt: skip


#: indexes that hold unfinished runs only: PostgreSQL may read any of them for a worker's
#: read (it weighs them by their sizes), a sort there sorts what is in flight, never the
#: history
UNFINISHED_ONLY = {"tickwork_runs_due", "tickwork_runs_schedule_active"}


def test_the_worker_reads_seek_an_index_of_unfinished_runs(history: Store) -> None:
    store = history
    for label, statement, params, index, may_sort in _worker_reads(store):
        plan = _plan(store, statement, params, generic=True)
        found = set(_indexes(store, plan))
        if store.dialect == "sqlite":  # type: ignore[attr-defined]
            assert found == {index}, (label, plan)
            assert may_sort or not _sorts(store, plan), (label, plan)
        else:
            assert found and found <= UNFINISHED_ONLY, (label, plan)


def test_the_worker_reads_walk_the_due_index_for_a_workflow_the_statistics_do_not_know(
    history: Store,
) -> None:
    """A workflow (or schedule) added since the runs table was last analyzed (on a big
    table, about once a day): the statistics call it rare, and a filter on it read from
    its own index read all its ended runs, at every claim and every wake-up of every
    worker (measured with 85,000 kept: 30-60 ms, twice a second). The worker's filters
    stay off the columns' indexes; its reads walk an index of unfinished runs."""
    store = history
    ended = [
        (f"fresh-{n:05d}", "fresh", "completed", "fresh-key", T0 - 10_000_000 + n, T0)
        for n in range(3000)
    ]
    store._write(lambda tx: tx.executemany(INSERT_RUN, ended))  # type: ignore[attr-defined]
    db = store._db  # type: ignore[attr-defined]
    filters = in_filters(["default"], ["fresh"], db.unindexed)
    active = SELECT_ACTIVE_RUNS.format(marks="?", no_index=db.no_index)
    for label, statement, params, index in (
        ("next_due", NEXT_DUE.format(filters=filters), ["default", "fresh"], "tickwork_runs_due"),
        ("claim", SELECT_CLAIMABLE.format(filters=filters) + db.lock_suffix,
         [T0, "default", "fresh", 10], "tickwork_runs_due"),
        ("firing's overlap check", active, ["fresh-key"], "tickwork_runs_schedule_active"),
    ):  # fmt: skip
        plan = _plan(store, statement, params)
        found = set(_indexes(store, plan))
        if store.dialect == "sqlite":  # type: ignore[attr-defined]
            assert found == {index}, (label, plan)
        else:
            assert found and found <= UNFINISHED_ONLY, (label, plan)


def test_postgresql_sessions_never_compile_a_statement_with_jit(history: Store) -> None:
    """On a large table the plans' cost estimates pass the server's ``jit_above_cost`` and
    each call would compile for milliseconds to save microseconds (10M runs:
    ``list_runs(status="pending")`` 6.5 ms with JIT, 0.59 ms without): tickwork's sessions
    turn JIT off, so even a statement priced above every threshold runs uncompiled."""
    store = history
    if store.dialect != "postgres":  # type: ignore[attr-defined]
        pytest.skip("SQLite has no JIT")
    statement, params = list_runs_query(
        workflow=None, status=RunStatus.PENDING, schedule_key=None, after=None, no_index=""
    )
    values = iter([*params, 50])
    literal = re.sub(r"\?", lambda _: _literal(next(values)), statement)
    with store._db.read() as tx:  # type: ignore[attr-defined]
        for setting in ("jit_above_cost", "jit_inline_above_cost", "jit_optimize_above_cost"):
            tx.execute(f"SET LOCAL {setting} = 0")
        plan = [row[0] for row in tx.execute(f"EXPLAIN (ANALYZE) {literal}").fetchall()]
    assert not any(line.startswith("JIT:") for line in plan), plan


@pytest.mark.parametrize("limited", [False, True], ids=["no-limits", "concurrency-limits"])
def test_the_postgresql_claim_takes_its_candidates_from_the_due_index_in_order(
    history: Store, limited: bool
) -> None:
    """PostgreSQL claims in one UPDATE (``pg_claim.py``): the candidates it locks are read
    from tickwork_runs_due in its order (no Sort beneath the row locks: the history is
    never sorted) and each run taken is written through its primary key."""
    store = history
    if store.dialect != "postgres":  # type: ignore[attr-defined]
        pytest.skip("SQLite reads its candidates with SELECT_CLAIMABLE (above)")
    filters = in_filters(["default"], ["report", "sync"], store._db.unindexed)  # type: ignore[attr-defined]
    params: list[Any] = [T0, "default", "report", "sync", 10, "w", "w", T0 + 1000, T0, T0]
    if limited:
        params += [["report"], [2], 10]
    plan = _plan(store, claim_statement(filters, limited=limited), params, generic=True)
    assert set(_indexes(store, plan)) == {"tickwork_runs_due", "tickwork_runs_pkey"}, plan
    assert any("using tickwork_runs_due" in line for line in _beneath("LockRows", plan)), plan
    assert not any(re.search(r"\bSort\b", line) for line in _beneath("LockRows", plan)), plan


def test_the_postgresql_claim_walks_the_due_index_before_the_table_is_analyzed(
    store: Store,
) -> None:
    """A new deployment's first minute: runs pile up before autovacuum's first ANALYZE, and
    with no statistics the planner takes its defaults, which say few runs are due. It
    would then read every run of the workflow and sort them, at each claim (O(backlog)).
    The claim runs as the store runs it, planned with sorts off (``transaction.UNSORTED``),
    and walks tickwork_runs_due in order, stopping after the runs it takes."""
    if store.dialect != "postgres":  # type: ignore[attr-defined]
        pytest.skip("SQLite reads its candidates with SELECT_CLAIMABLE (above)")
    rows = [(f"due-{n:05d}", "report", "pending", None, T0 + n, T0 + n) for n in range(2000)]
    store._write(lambda tx: tx.executemany(INSERT_RUN, rows))  # type: ignore[attr-defined]
    filters = in_filters(["default"], ["report"], store._db.unindexed)  # type: ignore[attr-defined]
    params = iter([T0 + 5000, "default", "report", 8, "w", "w", T0 + 60_000, T0, T0])
    statement = re.sub(
        r"\?", lambda _: _literal(next(params)), claim_statement(filters, limited=False)
    )
    with store._db.read() as tx:  # type: ignore[attr-defined]
        explained = tx.execute_under(UNSORTED, f"EXPLAIN {statement}").fetchall()
        # The setting is the claim's only: the transaction's next statement is planned as
        # usual (the writes of other threads share it: write_combiner.py).
        assert tx.execute("SHOW enable_sort").fetchone()[0] == "on"
    plan = [row[0] for row in explained]
    assert any("using tickwork_runs_due" in line for line in _beneath("LockRows", plan)), plan
    assert not any(re.search(r"\bSort\b", line) for line in plan), plan


def test_the_postgresql_next_due_walks_the_due_index_before_the_table_is_analyzed(
    store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The worker asks twice a second when its next run is due. Without statistics the
    planner scanned the whole runs table for it (its filters stay off the pool and
    workflow indexes, above): ~7 ms at 20,000 ended runs, growing with them. As the
    store runs it (under ``transaction.SOUGHT``) it reads tickwork_runs_due."""
    if store.dialect != "postgres":  # type: ignore[attr-defined]
        pytest.skip("SQLite plans without statistics alike for any table size")
    rows = [(f"old-{n:05d}", "report", "completed", None, T0 + n, T0) for n in range(5000)]
    rows += [(f"due-{n}", "report", "pending", None, T0 + n, T0 + n) for n in range(5)]
    store._write(lambda tx: tx.executemany(INSERT_RUN, rows))  # type: ignore[attr-defined]
    filters = in_filters(["default"], ["report"], store._db.unindexed)  # type: ignore[attr-defined]
    params = iter(["default", "report"])
    statement = re.sub(r"\?", lambda _: _literal(next(params)), NEXT_DUE.format(filters=filters))
    with store._db.read() as tx:  # type: ignore[attr-defined]
        plan = [row[0] for row in tx.execute_under(SOUGHT, f"EXPLAIN {statement}").fetchall()]
    assert _indexes(store, plan) == ["tickwork_runs_due"], plan
    planned: list[tuple[Any, str]] = []
    execute_under = Transaction.execute_under

    def recorded(tx: Transaction, settings: Any, statement: str, *params: Any) -> Any:
        planned.append((settings, statement))
        return execute_under(tx, settings, statement, *params)

    monkeypatch.setattr(Transaction, "execute_under", recorded)
    assert store.next_due_ms(pools=["default"], workflows=["report"]) == T0
    assert planned == [(SOUGHT, NEXT_DUE.format(filters=filters))]


def test_the_postgresql_firing_reads_seek_runs_before_the_table_is_analyzed(
    store: Store,
) -> None:
    """The same first minute for a firing batch: without statistics, the unfinished runs
    of its schedules and the run ids it is about to start were read by scanning every run
    (~3.6 ms a batch among 5,000 runs, growing with them). As the store runs them (under
    ``transaction.SOUGHT``) they seek tickwork_runs_schedule_active and the primary key."""
    if store.dialect != "postgres":  # type: ignore[attr-defined]
        pytest.skip("SQLite plans without statistics alike for any table size")
    rows = [
        (f"s{n % 500}@{n}", "report", "completed", f"s{n % 500}", T0 + n, T0) for n in range(5000)
    ]
    store._write(lambda tx: tx.executemany(INSERT_RUN, rows))  # type: ignore[attr-defined]
    keys = [f"s{n}" for n in range(100)]
    ids = [f"s{n}@{n + 9000}" for n in range(100)]
    active = SELECT_ACTIVE_RUNS.format(marks=", ".join(map(_literal, keys)), no_index="")
    existing = SELECT_EXISTING_RUNS.format(marks=", ".join(map(_literal, ids)))
    for statement, index in (
        (active, "tickwork_runs_schedule_active"),
        (existing, "tickwork_runs_pkey"),
    ):
        with store._db.read() as tx:  # type: ignore[attr-defined]
            plan = [row[0] for row in tx.execute_under(SOUGHT, f"EXPLAIN {statement}").fetchall()]
        assert _indexes(store, plan) == [index], plan


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
