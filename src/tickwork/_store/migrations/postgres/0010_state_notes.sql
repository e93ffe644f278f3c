-- PostgreSQL twin of sqlite/0010_state_notes.sql (BIGINT for instants; a constant
-- default: no table rewrite).
-- Notes on state changes and pause_after_failures (DESIGN §3).
-- note: why the schedule is in its state, as given to pause/resume/activate/deactivate
-- (or written by an auto-pause); state_changed_at: when the state last changed (NULL:
-- never since it was created, read as created_at). Schedules not active before this
-- migration take updated_at, the latest instant their state could have changed.
-- pause_after_failures: the option (NULL: never pause); failed_in_row: runs of the
-- schedule that ended failed in a row, written by the statement that ends each run
-- (reset by a completed run and by any state change). No index: read only by key.
ALTER TABLE tickwork_schedules ADD COLUMN note TEXT;
ALTER TABLE tickwork_schedules ADD COLUMN state_changed_at BIGINT;
ALTER TABLE tickwork_schedules ADD COLUMN pause_after_failures BIGINT;
ALTER TABLE tickwork_schedules ADD COLUMN failed_in_row BIGINT NOT NULL DEFAULT 0;
UPDATE tickwork_schedules SET state_changed_at = updated_at WHERE state <> 'active';
