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
    retry TEXT,
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
CREATE INDEX tickwork_runs_schedule_active ON tickwork_runs (schedule_key, created_at)
    WHERE schedule_key IS NOT NULL AND status IN ('pending', 'sleeping', 'running');

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

-- Schedules: one row per key. next_fire_at is the earliest occurrence not yet decided;
-- due_at is when a scheduler must look at the row (NULL: nothing to do, e.g. paused).
CREATE TABLE tickwork_schedules (
    key TEXT PRIMARY KEY,
    workflow TEXT NOT NULL,
    version TEXT NOT NULL,
    input TEXT,
    cron TEXT,
    every_ms INTEGER,
    timezone TEXT NOT NULL,
    overlap TEXT NOT NULL,
    catchup INTEGER,
    catchup_window_ms INTEGER,
    jitter_ms INTEGER,
    pool TEXT NOT NULL,
    priority INTEGER NOT NULL,
    retry TEXT,
    start_at INTEGER,
    end_at INTEGER,
    definition TEXT NOT NULL,
    state TEXT NOT NULL,
    revision INTEGER NOT NULL,
    anchor_at INTEGER NOT NULL,
    next_fire_at INTEGER,
    due_at INTEGER,
    buffered_for INTEGER,
    paused_at INTEGER,
    resumed_at INTEGER,
    last_fire_at INTEGER,
    last_run_id TEXT,
    created_at INTEGER NOT NULL,
    updated_at INTEGER NOT NULL
);
CREATE INDEX tickwork_schedules_due ON tickwork_schedules (due_at) WHERE due_at IS NOT NULL;

-- Every decision about an occurrence; a span of dropped occurrences is one row with count.
CREATE TABLE tickwork_schedule_history (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    key TEXT NOT NULL,
    occurrence INTEGER NOT NULL,
    last_occurrence INTEGER,
    decision TEXT NOT NULL,
    reason TEXT NOT NULL,
    run_id TEXT,
    revision INTEGER NOT NULL,
    count INTEGER NOT NULL,
    decided_at INTEGER NOT NULL
);
CREATE INDEX tickwork_schedule_history_key ON tickwork_schedule_history (key, id DESC);

-- API keys of the HTTP API and dashboard: only a hash of each secret is kept.
CREATE TABLE tickwork_api_keys (
    id TEXT PRIMARY KEY,
    name TEXT NOT NULL,
    secret_hash TEXT NOT NULL,
    created_at INTEGER NOT NULL,
    revoked_at INTEGER
);
CREATE UNIQUE INDEX tickwork_api_keys_live_name ON tickwork_api_keys (name)
    WHERE revoked_at IS NULL;
