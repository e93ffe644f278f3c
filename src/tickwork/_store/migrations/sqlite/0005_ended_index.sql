-- Pruning's index of ended runs (0003) rebuilt with its condition as a chain of <> like
-- every other partial index (_store/statuses.py): SQLite evaluates an index's WHERE at
-- every write of a run, and an IN list there builds a temporary table each time (measured:
-- about 160,000 instructions per run inserted, claimed and finished).
DROP INDEX tickwork_runs_ended;
CREATE INDEX tickwork_runs_ended ON tickwork_runs (workflow, finished_at)
    WHERE status <> 'pending' AND status <> 'sleeping' AND status <> 'running';
