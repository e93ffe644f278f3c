-- max_recoveries blames only the run whose step lost its worker (DESIGN §1, Durability;
-- docs/behaviour.md "Durability"). A take-over counts a lost worker against its run only
-- when that run was the lost worker's only run in flight; a run taken over then runs
-- alone for the rest of that execution, so that a step which keeps killing its worker is
-- found out even when it first shared the worker with other runs.
-- `suspect` of a run in flight: 1 while the execution that took it over lasts (a claim
-- gives it only to a worker with nothing else in flight, and nothing else with it).
ALTER TABLE tickwork_queue ADD COLUMN suspect INTEGER NOT NULL DEFAULT 0;
-- The suspects an idle worker's claim looks at first, in the claim's order (a few rows).
CREATE INDEX tickwork_queue_suspects ON tickwork_queue (priority DESC, available_at, id)
    WHERE suspect <> 0;
-- The runs in flight under one worker's leases: a lease token is the worker's id, a dot
-- and 12 hex digits (sql_runs._take, pg_claim.CLAIM), so the id is all but its last 13
-- characters. Only runs under a lease have an entry: a few rows.
CREATE INDEX tickwork_queue_lease_worker
    ON tickwork_queue (substr(lease_token, 1, length(lease_token) - 13))
    WHERE lease_token IS NOT NULL;
-- The leases of runs lost along with others: a take-over that finds other runs still
-- under the lost worker's leases records their tokens, so that their own take-overs,
-- when those leases are gone, know the loss was shared. A token is one claim's, so each
-- loss of a worker (one that froze and came back may lose leases twice) is its own.
-- Rows older than a day are removed by the take-overs (lost_workers.LOST_LEASE_KEPT_MS).
CREATE TABLE tickwork_lost_leases (
    token TEXT PRIMARY KEY,
    lost_at INTEGER NOT NULL
);
-- A schedule remembers the latest occurrence that got a run (fired, triggered, backfilled;
-- not a trigger's new_run=True run, which is an occurrence of its own instant), and
-- retention keeps that occurrence's run as it keeps the schedule's latest run
-- (sql_prune.SELECT_PRUNABLE_RUNS): a trigger of the current occurrence then finds its run
-- even when a newer new_run=True run is the schedule's latest, and never starts it again.
ALTER TABLE tickwork_schedules ADD COLUMN last_occurrence_at INTEGER;
UPDATE tickwork_schedules SET last_occurrence_at = (
    SELECT r.scheduled_for FROM tickwork_runs r WHERE r.id = tickwork_schedules.last_run_id);
