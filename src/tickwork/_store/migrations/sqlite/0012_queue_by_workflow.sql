-- The claim walks each workflow its worker serves on its own, in the claim's order, and
-- merges the walks: one walk of the whole queue in that order passed every due run of
-- the workflows the worker does not serve (measured: 100,000 runs waiting for a workflow
-- no live worker had registered made another workflow's runs drain at 30 a second
-- instead of ~3,900). The new index replaces the old walk's, which nothing else seeks.
CREATE INDEX tickwork_queue_claim ON tickwork_queue (workflow, priority DESC, available_at, id);
DROP INDEX tickwork_queue_due;
