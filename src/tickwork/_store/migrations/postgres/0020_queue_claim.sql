-- PostgreSQL twin of sqlite/0012_queue_by_workflow.sql (issue 33). The claim and "when is
-- the next run due" walk each workflow their worker serves on its own, in the claim's
-- order (pg_claim.WALK), and read the priority levels of those workflows only: one walk
-- of tickwork_queue_due passed every due run of the workflows the worker does not serve
-- (100,000 runs of a workflow nobody served made another workflow's drain five times
-- slower). The old index goes: nothing else reads it, and with it in place the planner,
-- told by the statistics that one workflow holds every run, walked it for a workflow's
-- first run all the same.
CREATE INDEX tickwork_queue_claim ON tickwork_queue (workflow, priority DESC, available_at, id);
DROP INDEX tickwork_queue_due;
