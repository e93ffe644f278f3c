-- PostgreSQL twin of sqlite/0018_runs_and_deadlines.sql (BIGINT; a constant default: no table rewrite).
-- max_runs and deadline (DESIGN §3; docs/behaviour.md "A limit on runs" and "Deadlines").
-- max_runs: the most runs the schedule starts on its own and by backfills (NULL: no
-- limit); runs_counted: how many it started so, advanced in the transaction that inserts
-- them (firing, backfill), so a fleet never exceeds the limit. deadline_ms: how long
-- after its occurrence a fired run must have completed (NULL: no deadline).
ALTER TABLE tickwork_schedules ADD COLUMN max_runs BIGINT;
ALTER TABLE tickwork_schedules ADD COLUMN runs_counted BIGINT NOT NULL DEFAULT 0;
ALTER TABLE tickwork_schedules ADD COLUMN deadline_ms BIGINT;
-- A fired run's deadline (its occurrence plus the schedule's deadline) while it is still
-- to be checked: cleared by its completion in time (in the statement that ends it) or
-- by the deadline pass that records it missed, in that pass's transaction. Only runs
-- with a deadline still to check have an entry: the pass seeks the due ones, never scans.
ALTER TABLE tickwork_runs ADD COLUMN deadline_at BIGINT;
CREATE INDEX tickwork_runs_deadline ON tickwork_runs (deadline_at)
    WHERE deadline_at IS NOT NULL;
-- The dashboard's banner: the deadline misses of the last day, across schedules.
CREATE INDEX tickwork_schedule_history_deadline_missed
    ON tickwork_schedule_history (decided_at) WHERE decision = 'deadline_missed';
