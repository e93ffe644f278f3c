-- overlap="buffer_all" (DESIGN §3): the occurrences of a schedule that wait for its
-- earlier run to end, oldest first. They have no run yet (like buffer_one's single
-- buffered occurrence): firing starts the oldest when the schedule has no unfinished run,
-- so each starts once, by its occurrence's unique run id. The schedule keeps how many wait
-- (``waiting``: the cap of 1,000 is checked without counting rows) and the oldest in
-- buffered_for, so the end of a run wakes the schedule by the same one conditional UPDATE
-- as buffer_one (WAKE_BUFFERED). A backfill with overlap="buffer_all" queues here too.
ALTER TABLE tickwork_schedules ADD COLUMN waiting INTEGER NOT NULL DEFAULT 0;
CREATE TABLE tickwork_schedule_queue (
    key TEXT NOT NULL,
    occurrence INTEGER NOT NULL,
    PRIMARY KEY (key, occurrence)
);
