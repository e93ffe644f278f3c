-- PostgreSQL twin of sqlite/0007_workers.sql: the same table; BIGINT for instants.
-- Workers (DESIGN §8): each worker process records itself and renews the row every
-- renew_ms (_heartbeat.py); it is alive until it misses three renewals (_liveness.py) or
-- stops (stopped_at). pools and workflows are JSON lists. Instants are UTC epoch ms.
-- Rows not renewed for a day are removed by the renewals, a bounded batch at a time,
-- oldest first: the index on last_seen serves that and the listing.
CREATE TABLE tickwork_workers (
    id TEXT PRIMARY KEY,
    host TEXT NOT NULL,
    pid BIGINT NOT NULL,
    pools TEXT NOT NULL,
    workflows TEXT NOT NULL,
    version TEXT NOT NULL,
    started_at BIGINT NOT NULL,
    last_seen BIGINT NOT NULL,
    renew_ms BIGINT NOT NULL,
    stopped_at BIGINT
);
CREATE INDEX tickwork_workers_last_seen ON tickwork_workers (last_seen);
