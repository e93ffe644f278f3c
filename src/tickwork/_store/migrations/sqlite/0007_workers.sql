-- Workers (DESIGN §8): each worker process records itself and renews the row every
-- renew_ms (_heartbeat.py); it is alive until it misses three renewals (_liveness.py) or
-- stops (stopped_at). pools and workflows are JSON lists. Instants are UTC epoch ms.
-- Rows not renewed for a day are removed by the renewals, a bounded batch at a time,
-- oldest first: the index on last_seen serves that and the listing.
CREATE TABLE tickwork_workers (
    id TEXT PRIMARY KEY,
    host TEXT NOT NULL,
    pid INTEGER NOT NULL,
    pools TEXT NOT NULL,
    workflows TEXT NOT NULL,
    version TEXT NOT NULL,
    started_at INTEGER NOT NULL,
    last_seen INTEGER NOT NULL,
    renew_ms INTEGER NOT NULL,
    stopped_at INTEGER
);
CREATE INDEX tickwork_workers_last_seen ON tickwork_workers (last_seen);
