-- max_recoveries (DESIGN §1, Durability): a run counts the workers it lost in a row at
-- the same point of progress. `recoveries` is how many take-overs (a claim of a run whose
-- lease expired while it was running) happened in a row while the run had
-- `recovery_mark` completed checkpoints; a take-over at another mark starts again at 1.
-- Both are written by the claim's own UPDATE, so a run that never loses a worker costs
-- nothing more. No index: they are read only from the row being claimed.
ALTER TABLE tickwork_runs ADD COLUMN recoveries INTEGER NOT NULL DEFAULT 0;
ALTER TABLE tickwork_runs ADD COLUMN recovery_mark INTEGER NOT NULL DEFAULT 0;
