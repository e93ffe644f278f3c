-- PostgreSQL twin of sqlite/0013_queue_running.sql.
-- The concurrency count reads the runs under a lease, and only those: a claim under
-- concurrency=N counted a limited workflow's runs under a live lease by a scan of the
-- whole queue, every run waiting included (issue 29: a million runs asleep or delayed
-- made each such claim read a million rows). The index holds the running runs only, a
-- few per executor thread.
CREATE INDEX tickwork_queue_running ON tickwork_queue (workflow, available_at)
    WHERE status = 'running';
