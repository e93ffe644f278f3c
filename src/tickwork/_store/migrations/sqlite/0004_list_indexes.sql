-- Every filter and page of list_runs on an index, and the claim in the order of its index
-- (DESIGN §7: cost independent of history; which index serves which filters:
-- _store/run_lists.py). Runs are listed newest first by (created_at, id), a page goes on
-- from the keyset (created_at, id) < (?, ?): each list index ends in created_at DESC,
-- id DESC, so that a filter is an equality prefix, a page a range on the rest, and
-- nothing is sorted.
-- Write cost: an index on tickwork_runs is written when a run is inserted and again at
-- each change of a column it holds or its WHERE reads (status: pending, running, then
-- ended). The indexes of ended runs take a run once, when it ends; unfinished runs get no
-- new index. Every partial index here says its half of the statuses as a chain of <>
-- (_store/statuses.py: SQLite builds a temporary table to evaluate an IN list at every
-- write of a run), and the two indexes of unfinished runs are rebuilt that way too.
-- Building them reads the runs table once (about 15 s per million runs here), during
-- which the migration holds the write lock.

-- Runs in flight, most urgent first: the claim's order in full (id added: no sort of the
-- due runs at each claim), and what next_due and the gauges of unfinished runs read.
DROP INDEX tickwork_runs_due;
CREATE INDEX tickwork_runs_due ON tickwork_runs (priority DESC, available_at, id)
    WHERE status <> 'completed' AND status <> 'failed' AND status <> 'cancelled';
-- A schedule's unfinished runs: firing's overlap check (which it covers), and list_runs
-- of a schedule by an unfinished status (status, created_at, id added for those).
DROP INDEX tickwork_runs_schedule_active;
CREATE INDEX tickwork_runs_schedule_active
    ON tickwork_runs (schedule_key, status, created_at DESC, id DESC)
    WHERE schedule_key IS NOT NULL
        AND status <> 'completed' AND status <> 'failed' AND status <> 'cancelled';
-- A workflow's runs; a schedule's runs (both gain id: the keyset's second column).
DROP INDEX tickwork_runs_workflow;
CREATE INDEX tickwork_runs_workflow ON tickwork_runs (workflow, created_at DESC, id DESC);
DROP INDEX tickwork_runs_schedule;
CREATE INDEX tickwork_runs_schedule ON tickwork_runs (schedule_key, created_at DESC, id DESC)
    WHERE schedule_key IS NOT NULL;
-- Ended runs by status; a workflow's and a schedule's ended runs by status.
CREATE INDEX tickwork_runs_status_ended ON tickwork_runs (status, created_at DESC, id DESC)
    WHERE status <> 'pending' AND status <> 'sleeping' AND status <> 'running';
CREATE INDEX tickwork_runs_workflow_status_ended
    ON tickwork_runs (workflow, status, created_at DESC, id DESC)
    WHERE status <> 'pending' AND status <> 'sleeping' AND status <> 'running';
CREATE INDEX tickwork_runs_schedule_status_ended
    ON tickwork_runs (schedule_key, status, created_at DESC, id DESC)
    WHERE schedule_key IS NOT NULL
        AND status <> 'pending' AND status <> 'sleeping' AND status <> 'running';
