-- A debounced or batched subscription's decisions (DESIGN §9: "visible in the history
-- like a schedule's decisions"): each event that opened or extended a window or joined a
-- batch, each run started and why, each buffer dropped. Written in the transaction of the
-- change it describes; pruned under the retention with the events (decided_at).
-- (0017 and 0018 are other branches' schedule migrations: this number leaves them room.)
CREATE TABLE tickwork_subscription_history (
    id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    key TEXT NOT NULL,
    decision TEXT NOT NULL,
    reason TEXT NOT NULL,
    grp TEXT NOT NULL,
    event_id TEXT,
    run_id TEXT,
    count BIGINT NOT NULL,
    due_at BIGINT,
    decided_at BIGINT NOT NULL
);
-- A subscription's history, newest first.
CREATE INDEX tickwork_subscription_history_key ON tickwork_subscription_history (key, id DESC);
-- Retention's walk, oldest first.
CREATE INDEX tickwork_subscription_history_decided
    ON tickwork_subscription_history (decided_at, id);
-- How many events a buffer holds (a debounce keeps only the last payload).
ALTER TABLE tickwork_event_buffers ADD COLUMN events BIGINT NOT NULL DEFAULT 1;
