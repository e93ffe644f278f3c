-- The six list indexes of tickwork_runs (0004, for list_runs and the run strips) rebuilt
-- ascending: the same names, columns and WHERE, only created_at and id go up.
-- Why: a new run has the largest created_at, so in a DESC index each insert lands at the
-- B-tree's left edge. Split there, SQLite's page balancing leaves the leaf pages about
-- half full, and they split again soon; at the right edge the pages left behind are
-- packed (88 % full) and the new last page takes the inserts to come. Measured with the
-- engine (bench/wal_frames.py; bench/README.md, "SQLite list indexes ascending"): fewer
-- WAL pages written per 3-step run, and smaller indexes, for the same rows.
-- Reads lose nothing: SQLite walks an ascending index backwards for ORDER BY created_at
-- DESC, id DESC and for the keyset (created_at, id) < (?, ?), with no sort
-- (tests/contract/test_query_plans_contract.py).
-- Cost: building them reads the runs table once per index (10-14 s per million runs here;
-- bench/list_index_rebuild.py), inside the migration's one transaction, which holds the
-- write lock meanwhile; a failure leaves the store as it was, at version 20.
-- PostgreSQL keeps its DESC indexes (its 0021 does nothing; not measured there).
DROP INDEX tickwork_runs_created;
CREATE INDEX tickwork_runs_created ON tickwork_runs (created_at, id);
DROP INDEX tickwork_runs_workflow;
CREATE INDEX tickwork_runs_workflow ON tickwork_runs (workflow, created_at, id);
DROP INDEX tickwork_runs_schedule;
CREATE INDEX tickwork_runs_schedule ON tickwork_runs (schedule_key, created_at, id)
    WHERE schedule_key IS NOT NULL;
DROP INDEX tickwork_runs_status_ended;
CREATE INDEX tickwork_runs_status_ended ON tickwork_runs (status, created_at, id)
    WHERE status <> 'pending' AND status <> 'sleeping' AND status <> 'running';
DROP INDEX tickwork_runs_workflow_status_ended;
CREATE INDEX tickwork_runs_workflow_status_ended
    ON tickwork_runs (workflow, status, created_at, id)
    WHERE status <> 'pending' AND status <> 'sleeping' AND status <> 'running';
DROP INDEX tickwork_runs_schedule_status_ended;
CREATE INDEX tickwork_runs_schedule_status_ended
    ON tickwork_runs (schedule_key, status, created_at, id)
    WHERE schedule_key IS NOT NULL
        AND status <> 'pending' AND status <> 'sleeping' AND status <> 'running';
