-- PostgreSQL twin of sqlite/0023_worker_waiting.sql: the declared schedules a worker
-- holds back for a calendar not stored, a JSON object of key to calendar name, NULL when
-- none. A nullable column without a default: no existing row is rewritten.
ALTER TABLE tickwork_workers ADD COLUMN waiting TEXT;
