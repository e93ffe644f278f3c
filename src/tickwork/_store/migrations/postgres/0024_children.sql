-- Child runs (issue 49, DESIGN §10). A child names its parent (parent_id) and, while the
-- parent waits for it, the join it counts itself off (joined: the parent's wait step).
-- A join is one row however many children it waits for: how many have not ended
-- (remaining), and for a map under max_parallel how many of its children were made
-- runnable so far (released, of total; the n-th child's id is prefix || n). The last
-- child to end, in its ending transaction, takes remaining to 0 and wakes the parent.
ALTER TABLE tickwork_runs ADD COLUMN parent_id TEXT;
ALTER TABLE tickwork_runs ADD COLUMN joined TEXT;
-- A parent's children, newest first (list_runs(parent=...)), and the cascade of a cancel.
CREATE INDEX tickwork_runs_parent ON tickwork_runs (parent_id, created_at, id)
    WHERE parent_id IS NOT NULL;
CREATE TABLE tickwork_joins (
    parent_id TEXT NOT NULL,
    step TEXT NOT NULL,
    remaining BIGINT NOT NULL,
    released BIGINT NOT NULL,
    total BIGINT NOT NULL,
    prefix TEXT,
    PRIMARY KEY (parent_id, step)
);
