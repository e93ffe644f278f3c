-- Retention (pruning, DESIGN §7): the indexes its lookups seek on.
-- Ended runs by workflow and end, and only those: pruning finds a workflow's runs past its
-- retention, and the next workflow with ended runs, each with one seek.
CREATE INDEX tickwork_runs_ended ON tickwork_runs (workflow, finished_at)
    WHERE status IN ('completed', 'failed', 'cancelled');
-- A schedule's history by decision time: pruning finds its entries past the retention.
CREATE INDEX tickwork_schedule_history_decided ON tickwork_schedule_history (key, decided_at);
