"""SQLite's list indexes of tickwork_runs are ascending (migration 0021), on a new store and
on one upgraded from version 20, with the columns and partial WHERE list_runs relies on;
a worker recorded before migration 0023 is listed holding nothing back.

A new run has the largest created_at: in an ascending index it goes in at the right edge,
and each run wrote 9.7 % fewer WAL pages than with the indexes descending (bench/README.md,
"SQLite list indexes ascending"). SQLite reads them backwards for newest first, unsorted
(tests/contract/test_query_plans_contract.py); this pins the direction, which no plan
shows.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from tickwork import RunStatus
from tickwork._store import migrations, open_store
from tickwork._store.statuses import ENDED

LIST_INDEXES = {
    "tickwork_runs_created": ["created_at", "id"],
    "tickwork_runs_workflow": ["workflow", "created_at", "id"],
    "tickwork_runs_schedule": ["schedule_key", "created_at", "id"],
    "tickwork_runs_status_ended": ["status", "created_at", "id"],
    "tickwork_runs_workflow_status_ended": ["workflow", "status", "created_at", "id"],
    "tickwork_runs_schedule_status_ended": ["schedule_key", "status", "created_at", "id"],
}
T0 = 1_772_366_400_000
INSERT_RUN = """
INSERT INTO tickwork_runs (id, workflow, version, status, attempt, priority, pool,
    schedule_key, created_at, finished_at)
VALUES (?, ?, '1', ?, 1, 0, 'default', ?, ?, ?)
"""


def _check_list_indexes(path: Path) -> None:
    with sqlite3.connect(path) as conn:
        for name, columns in LIST_INDEXES.items():
            keys = conn.execute(
                "SELECT name, desc FROM pragma_index_xinfo(?) WHERE key = 1 ORDER BY seqno",
                (name,),
            ).fetchall()
            assert keys == [(column, 0) for column in columns], name
            sql = conn.execute(
                "SELECT sql FROM sqlite_master WHERE type = 'index' AND name = ?", (name,)
            ).fetchone()[0]
            where = " ".join(sql.split()).partition(" WHERE ")[2]
            # list_runs uses a partial index only if its query repeats the WHERE verbatim
            expected = [c for c in ("schedule_key IS NOT NULL",) if "schedule" in name]
            expected += [ENDED] if name.endswith("_ended") else []
            assert where == " AND ".join(expected), name
    conn.close()


def test_a_new_sqlite_store_has_its_list_indexes_ascending(tmp_path: Path) -> None:
    path = tmp_path / "new.db"
    store = open_store(f"sqlite:///{path}")
    assert store.migrate() >= 21
    store.close()
    _check_list_indexes(path)


def test_upgrading_a_sqlite_store_rebuilds_its_list_indexes_ascending(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "old.db"
    every = migrations.pending
    with monkeypatch.context() as patched:  # the schema as it was before 0021
        patched.setattr(migrations, "pending", lambda d, c: [m for m in every(d, c) if m[0] < 21])
        store = open_store(f"sqlite:///{path}")
        assert store.migrate() == 20
        store.close()
    statuses = ("completed", "failed", "cancelled")
    runs = [
        (f"run-{n:02d}", ("report", "sync")[n % 2], statuses[n % 3], ("k1", None)[n % 2],
         T0 + n // 2, T0 + n)
        for n in range(30)
    ]  # fmt: skip
    with sqlite3.connect(path) as conn:
        conn.executemany(INSERT_RUN, runs)
    conn.close()

    store = open_store(f"sqlite:///{path}")
    assert store.migrate() >= 21
    # The rows are all there, listed newest first by (created_at, id) through each index.
    newest_first = sorted(runs, key=lambda r: (r[4], r[0]), reverse=True)
    assert [r.id for r in store.runs.list_runs(limit=100)] == [r[0] for r in newest_first]
    failed = [r[0] for r in newest_first if r[1] == "report" and r[2] == "failed"]
    listed = store.runs.list_runs(workflow="report", status=RunStatus.FAILED, limit=100)
    assert [r.id for r in listed] == failed
    page = store.runs.list_runs(schedule_key="k1", limit=4)
    after = store.runs.list_runs(schedule_key="k1", limit=100, before=page[-1].id)
    assert [r.id for r in page + after] == [r[0] for r in newest_first if r[3] == "k1"]
    store.close()
    _check_list_indexes(path)


def test_a_worker_recorded_before_0023_is_listed_holding_nothing_back(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "old.db"
    every = migrations.pending
    with monkeypatch.context() as patched:  # the schema as it was before 0023
        patched.setattr(migrations, "pending", lambda d, c: [m for m in every(d, c) if m[0] < 23])
        store = open_store(f"sqlite:///{path}")
        assert store.migrate() == 22
        store.close()
    with sqlite3.connect(path) as conn:
        conn.execute(
            "INSERT INTO tickwork_workers (id, host, pid, pools, workflows, version, "
            "started_at, renew_ms, last_seen) VALUES ('w1', 'h', 1, '[\"default\"]', "
            "'[\"report\"]', '0.1', ?, 5000, ?)",
            (T0, T0),
        )
    conn.close()
    store = open_store(f"sqlite:///{path}")
    assert store.migrate() >= 23
    (worker,) = store.workers.list_workers(now_ms=T0)
    assert (worker.id, worker.workflows, worker.waiting_for_calendars) == ("w1", ("report",), ())
    store.close()
