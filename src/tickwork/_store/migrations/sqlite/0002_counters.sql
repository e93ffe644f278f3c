-- Metrics counted as events happen (_store/counters.py): per metric, labels, bucket and
-- shard, how many events (value) and the sum of what they measured (sum_ms). A counter
-- uses bucket 0; a histogram one row per bucket (the smallest bound >= the observation,
-- len(bounds) above them all: _buckets.py), so an event updates one row. A run that
-- ended without starting is in bucket -1 of run_ends. Two labels are "workflow|status".
-- SQLite's writes take turns: it writes shard 0 only.
CREATE TABLE tickwork_counters (
    metric TEXT NOT NULL,
    labels TEXT NOT NULL,
    bucket INTEGER NOT NULL,
    shard INTEGER NOT NULL,
    value INTEGER NOT NULL,
    sum_ms INTEGER NOT NULL,
    PRIMARY KEY (metric, labels, bucket, shard)
) WITHOUT ROWID;

-- Seed the counters from the rows kept so far, so that an upgraded database keeps its
-- figures: one INSERT per metric. The CASE bounds are _buckets.py's, in milliseconds.
-- Firings: occurrences by decision (a span of dropped ones counts each).
INSERT INTO tickwork_counters (metric, labels, bucket, shard, value, sum_ms)
SELECT 'firings', decision, 0, 0, SUM(count), 0 FROM tickwork_schedule_history
GROUP BY decision;

-- Firing lateness of scheduled runs, by workflow.
INSERT INTO tickwork_counters (metric, labels, bucket, shard, value, sum_ms)
SELECT 'firing_lateness', workflow, bucket, 0, COUNT(*), SUM(d) FROM (
    SELECT workflow, d, CASE WHEN d <= 100 THEN 0 WHEN d <= 250 THEN 1 WHEN d <= 500 THEN 2
        WHEN d <= 1000 THEN 3 WHEN d <= 2500 THEN 4 WHEN d <= 5000 THEN 5
        WHEN d <= 10000 THEN 6 WHEN d <= 30000 THEN 7 WHEN d <= 60000 THEN 8
        WHEN d <= 300000 THEN 9 WHEN d <= 900000 THEN 10 WHEN d <= 3600000 THEN 11
        ELSE 12 END AS bucket
    FROM (
        SELECT workflow, MAX(created_at - scheduled_for, 0) AS d FROM tickwork_runs
        WHERE scheduled_for IS NOT NULL
    ) AS observed
) AS bucketed
GROUP BY workflow, bucket;

-- Ended runs by workflow and status, by duration (bucket -1: never started).
INSERT INTO tickwork_counters (metric, labels, bucket, shard, value, sum_ms)
SELECT 'run_ends', labels, bucket, 0, COUNT(*), COALESCE(SUM(d), 0) FROM (
    SELECT workflow || '|' || status AS labels, d, CASE WHEN d IS NULL THEN -1
        WHEN d <= 10 THEN 0 WHEN d <= 50 THEN 1 WHEN d <= 100 THEN 2 WHEN d <= 500 THEN 3
        WHEN d <= 1000 THEN 4 WHEN d <= 5000 THEN 5 WHEN d <= 10000 THEN 6
        WHEN d <= 30000 THEN 7 WHEN d <= 60000 THEN 8 WHEN d <= 300000 THEN 9
        WHEN d <= 1800000 THEN 10 WHEN d <= 3600000 THEN 11 WHEN d <= 86400000 THEN 12
        ELSE 13 END AS bucket
    FROM (
        SELECT workflow, status, finished_at - started_at AS d FROM tickwork_runs
        WHERE status IN ('completed', 'failed', 'cancelled')
    ) AS observed
) AS bucketed
GROUP BY labels, bucket;

-- Steps (their last try: earlier tries were not kept), by status and duration.
INSERT INTO tickwork_counters (metric, labels, bucket, shard, value, sum_ms)
SELECT 'step_ends', status, bucket, 0, COUNT(*), SUM(d) FROM (
    SELECT status, d, CASE WHEN d <= 1 THEN 0 WHEN d <= 5 THEN 1 WHEN d <= 10 THEN 2
        WHEN d <= 50 THEN 3 WHEN d <= 100 THEN 4 WHEN d <= 500 THEN 5 WHEN d <= 1000 THEN 6
        WHEN d <= 5000 THEN 7 WHEN d <= 10000 THEN 8 WHEN d <= 60000 THEN 9
        WHEN d <= 300000 THEN 10 WHEN d <= 3600000 THEN 11 ELSE 12 END AS bucket
    FROM (
        SELECT status, finished_at - started_at AS d FROM tickwork_steps WHERE kind = 'step'
    ) AS observed
) AS bucketed
GROUP BY status, bucket;
