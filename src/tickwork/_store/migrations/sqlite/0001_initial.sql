-- Runs: one row per run. Instants are UTC epoch milliseconds; JSON values are text.
-- available_at: when a pending or sleeping run may execute, or a running run's lease expiry.
CREATE TABLE tickwork_runs (
    id TEXT PRIMARY KEY,
    workflow TEXT NOT NULL,
    version TEXT NOT NULL,
    status TEXT NOT NULL,
    input TEXT,
    result TEXT,
    error TEXT,
    attempt INTEGER NOT NULL,
    priority INTEGER NOT NULL,
    pool TEXT NOT NULL,
    schedule_key TEXT,
    schedule_revision INTEGER,
    scheduled_for INTEGER,
    created_at INTEGER NOT NULL,
    started_at INTEGER,
    finished_at INTEGER,
    available_at INTEGER NOT NULL,
    attempt_started_at INTEGER,
    worker TEXT,
    lease_token TEXT,
    cancel_requested INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX tickwork_runs_due ON tickwork_runs (priority DESC, available_at)
    WHERE status IN ('pending', 'sleeping', 'running');
CREATE INDEX tickwork_runs_created ON tickwork_runs (created_at DESC, id DESC);
CREATE INDEX tickwork_runs_workflow ON tickwork_runs (workflow, created_at DESC);
CREATE INDEX tickwork_runs_schedule ON tickwork_runs (schedule_key, created_at DESC)
    WHERE schedule_key IS NOT NULL;

-- Checkpoints of a run: completed steps, durable sleeps, recorded now(), failed tries.
CREATE TABLE tickwork_steps (
    run_id TEXT NOT NULL REFERENCES tickwork_runs (id) ON DELETE CASCADE,
    kind TEXT NOT NULL,
    name TEXT NOT NULL,
    seq INTEGER NOT NULL,
    status TEXT NOT NULL,
    result TEXT,
    error TEXT,
    attempts INTEGER NOT NULL,
    started_at INTEGER NOT NULL,
    finished_at INTEGER NOT NULL,
    PRIMARY KEY (run_id, kind, name)
) WITHOUT ROWID;
