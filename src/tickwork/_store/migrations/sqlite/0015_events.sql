-- Events (DESIGN §9): runs started by what happens, and runs that wait for it.
-- An event as emitted: the runs it started and the runs it woke are kept on its row, so
-- that emitting the same id again answers the same run ids without starting anything.
-- Kept under the retention like ended runs (emitted_at is its instant).
CREATE TABLE tickwork_events (
    id TEXT PRIMARY KEY,
    name TEXT NOT NULL,
    payload TEXT,
    emitted_at INTEGER NOT NULL,
    started TEXT NOT NULL,
    woke TEXT NOT NULL
) WITHOUT ROWID;
-- A wait's look back (since the run began) and list_events of one name, newest first.
CREATE INDEX tickwork_events_name ON tickwork_events (name, emitted_at, id);
-- list_events of every name, newest first; retention's walk, oldest first.
CREATE INDEX tickwork_events_emitted ON tickwork_events (emitted_at, id);
-- One row per event name ever emitted or waited for: emits of a name and waits on it
-- lock it, so that a wait registered while an event of its name is being emitted either
-- sees that event or is seen by it (PostgreSQL; SQLite's writes take turns anyway).
-- `emitted` is tickwork_events_total{name}: counted in the emit, never lowered by pruning.
CREATE TABLE tickwork_event_names (
    name TEXT PRIMARY KEY,
    emitted INTEGER NOT NULL
) WITHOUT ROWID;
-- Subscriptions: which workflow an event of a name starts, with what the run needs so
-- that a process without the workflow's code routes the event the same way. `declared`
-- is 1 for On(...) on a workflow (registered by workers at start-up), 0 for subscribe().
CREATE TABLE tickwork_subscriptions (
    key TEXT PRIMARY KEY,
    event_name TEXT NOT NULL,
    workflow TEXT NOT NULL,
    version TEXT NOT NULL,
    match TEXT,
    input_map TEXT,
    pool TEXT NOT NULL,
    priority INTEGER NOT NULL,
    retry TEXT,
    declared INTEGER NOT NULL,
    flow TEXT,
    created_at INTEGER NOT NULL
) WITHOUT ROWID;
CREATE INDEX tickwork_subscriptions_name ON tickwork_subscriptions (event_name, key);
-- A waiting run's waits, one row per name it waits for. `paths` is the sorted JSON list
-- of its match's paths, `match_key` the JSON list of their values: an emit computes the
-- key from its payload for each shape of wait on its name (tickwork_wait_shapes) and
-- finds its waiting runs by this index, never by scanning them.
CREATE TABLE tickwork_waits (
    run_id TEXT NOT NULL,
    name TEXT NOT NULL,
    paths TEXT NOT NULL,
    match_key TEXT NOT NULL,
    step TEXT NOT NULL,
    PRIMARY KEY (run_id, name)
) WITHOUT ROWID;
CREATE INDEX tickwork_waits_match ON tickwork_waits (name, paths, match_key);
-- The shapes of match (sets of paths) ever waited on, per name: a few rows.
CREATE TABLE tickwork_wait_shapes (
    name TEXT NOT NULL,
    paths TEXT NOT NULL,
    PRIMARY KEY (name, paths)
) WITHOUT ROWID;
-- Debounce and batch (_event_flow.py): the events waiting for one run of a subscription,
-- one row per (subscription, value at its key path). An emit updates it; the workers'
-- firing loop deletes it and inserts its run in one transaction once due_at has come.
CREATE TABLE tickwork_event_buffers (
    subscription TEXT NOT NULL,
    grp TEXT NOT NULL,
    first_event TEXT NOT NULL,
    first_at INTEGER NOT NULL,
    due_at INTEGER NOT NULL,
    payloads TEXT NOT NULL,
    PRIMARY KEY (subscription, grp)
) WITHOUT ROWID;
CREATE INDEX tickwork_event_buffers_due ON tickwork_event_buffers (due_at);
