-- PostgreSQL twin of sqlite/0008_tries.sql.
-- What a person on call reads of failures (DESIGN §8): a step's failed tries, the last 10,
-- each with its error and traceback (JSON, bounded by the writer), and the traceback of a
-- run that failed for good. Both are written only when something failed: a run that
-- succeeds writes NULL, so the hot path stores no more than before.
ALTER TABLE tickwork_steps ADD COLUMN tries TEXT;
ALTER TABLE tickwork_runs ADD COLUMN traceback TEXT;
