-- PostgreSQL twin of sqlite/0001_initial.sql: the same tables; BIGINT for instants.
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
    attempt BIGINT NOT NULL,
    priority BIGINT NOT NULL,
    pool TEXT NOT NULL,
    schedule_key TEXT,
    schedule_revision BIGINT,
    scheduled_for BIGINT,
    retry TEXT,
    created_at BIGINT NOT NULL,
    started_at BIGINT,
    finished_at BIGINT,
    available_at BIGINT NOT NULL,
    attempt_started_at BIGINT,
    worker TEXT,
    lease_token TEXT,
    cancel_requested BIGINT NOT NULL DEFAULT 0
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
    seq BIGINT NOT NULL,
    status TEXT NOT NULL,
    result TEXT,
    error TEXT,
    attempts BIGINT NOT NULL,
    started_at BIGINT NOT NULL,
    finished_at BIGINT NOT NULL,
    PRIMARY KEY (run_id, kind, name)
);

-- Schedules: one row per key. next_fire_at is the earliest occurrence not yet decided;
-- due_at is when a scheduler must look at the row (NULL: nothing to do, e.g. paused).
CREATE TABLE tickwork_schedules (
    key TEXT PRIMARY KEY,
    workflow TEXT NOT NULL,
    version TEXT NOT NULL,
    input TEXT,
    cron TEXT,
    every_ms BIGINT,
    timezone TEXT NOT NULL,
    overlap TEXT NOT NULL,
    catchup BIGINT,
    catchup_window_ms BIGINT,
    jitter_ms BIGINT,
    pool TEXT NOT NULL,
    priority BIGINT NOT NULL,
    retry TEXT,
    start_at BIGINT,
    end_at BIGINT,
    definition TEXT NOT NULL,
    state TEXT NOT NULL,
    revision BIGINT NOT NULL,
    anchor_at BIGINT NOT NULL,
    next_fire_at BIGINT,
    due_at BIGINT,
    buffered_for BIGINT,
    paused_at BIGINT,
    resumed_at BIGINT,
    last_fire_at BIGINT,
    last_run_id TEXT,
    created_at BIGINT NOT NULL,
    updated_at BIGINT NOT NULL
);
CREATE INDEX tickwork_schedules_due ON tickwork_schedules (due_at) WHERE due_at IS NOT NULL;

-- Every decision about an occurrence; a span of dropped occurrences is one row with count.
CREATE TABLE tickwork_schedule_history (
    id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    key TEXT NOT NULL,
    occurrence BIGINT NOT NULL,
    last_occurrence BIGINT,
    decision TEXT NOT NULL,
    reason TEXT NOT NULL,
    run_id TEXT,
    revision BIGINT NOT NULL,
    count BIGINT NOT NULL,
    decided_at BIGINT NOT NULL
);
CREATE INDEX tickwork_schedule_history_key ON tickwork_schedule_history (key, id DESC);

-- API keys of the HTTP API and dashboard: only a hash of each secret is kept.
CREATE TABLE tickwork_api_keys (
    id TEXT PRIMARY KEY,
    name TEXT NOT NULL,
    secret_hash TEXT NOT NULL,
    created_at BIGINT NOT NULL,
    revoked_at BIGINT
);
CREATE UNIQUE INDEX tickwork_api_keys_live_name ON tickwork_api_keys (name)
    WHERE revoked_at IS NULL;
