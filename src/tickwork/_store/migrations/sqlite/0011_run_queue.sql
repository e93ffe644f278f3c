-- The runs in flight get a table of their own (docs/architecture.md "The queue").
-- tickwork_runs keeps every run and what it did (its status included, for the lists);
-- tickwork_queue holds one row per unfinished run (pending, sleeping, running), with what
-- changes while it is in flight: when it may next execute or its lease expires
-- (available_at), the lease's token and whether cancellation was asked. The row is
-- inserted with the run and deleted when the run ends, in the same transactions.
-- Why: on PostgreSQL a run that ends leaves its entries in an index of unfinished runs,
-- dead, until their table is vacuumed, and claims and next_due walk them. A steady stream
-- of runs ends near the index's newest entries, where its own clean-up at page splits
-- removes most; runs that end elsewhere (a backlog cancelled, say) stayed until
-- tickwork_runs was vacuumed, which autovacuum does when a fifth of it is dead: about once
-- a day for 100 M runs kept (measured: 400,000 runs ended at once made a claim 9 ms and
-- next_due 19 ms, from 0.5). The queue holds a few rows, vacuumed within a minute by the
-- defaults, in milliseconds. The same schema on SQLite keeps one store code.
CREATE TABLE tickwork_queue (
    id TEXT PRIMARY KEY,
    workflow TEXT NOT NULL,
    pool TEXT NOT NULL,
    priority INTEGER NOT NULL,
    status TEXT NOT NULL,
    available_at INTEGER NOT NULL,
    schedule_key TEXT,
    created_at INTEGER NOT NULL,
    lease_token TEXT,
    cancel_requested INTEGER NOT NULL DEFAULT 0
) WITHOUT ROWID;
INSERT INTO tickwork_queue (id, workflow, pool, priority, status, available_at, schedule_key,
    created_at, lease_token, cancel_requested)
SELECT id, workflow, pool, priority, status, available_at, schedule_key, created_at,
    lease_token, cancel_requested
FROM tickwork_runs WHERE status <> 'completed' AND status <> 'failed' AND status <> 'cancelled';
-- The claim's order in full, and what next_due and the gauges read.
CREATE INDEX tickwork_queue_due ON tickwork_queue (priority DESC, available_at, id);
-- A schedule's runs in flight: firing's overlap check, list_runs of a schedule in flight.
CREATE INDEX tickwork_queue_schedule ON tickwork_queue (schedule_key, created_at, id)
    WHERE schedule_key IS NOT NULL;
DROP INDEX tickwork_runs_due;
DROP INDEX tickwork_runs_schedule_active;
-- The queue holds them now (SQLite rewrites the table: 2.6 s for a million runs here).
ALTER TABLE tickwork_runs DROP COLUMN available_at;
ALTER TABLE tickwork_runs DROP COLUMN worker;
ALTER TABLE tickwork_runs DROP COLUMN lease_token;
ALTER TABLE tickwork_runs DROP COLUMN cancel_requested;
