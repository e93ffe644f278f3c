-- PostgreSQL twin of sqlite/0017_schedule_policies.sql (a constant default: no table
-- rewrite).
-- A schedule's DST policy and business calendar (DESIGN §2, §3).
-- dst_gap: 'shift' or 'skip' (a fixed local time a spring-forward gap skips);
-- dst_repeat: 'first', 'last' or 'both' (one a fall-back repeats); calendar: the name of
-- a tickwork_calendars row (NULL: none; not a foreign key, as a calendar set again is
-- replaced whole); on_holiday: 'skip', 'next' or 'previous'. The defaults are the
-- behaviour before this migration. No index: read with the row.
ALTER TABLE tickwork_schedules ADD COLUMN dst_gap TEXT NOT NULL DEFAULT 'shift';
ALTER TABLE tickwork_schedules ADD COLUMN dst_repeat TEXT NOT NULL DEFAULT 'first';
ALTER TABLE tickwork_schedules ADD COLUMN calendar TEXT;
ALTER TABLE tickwork_schedules ADD COLUMN on_holiday TEXT NOT NULL DEFAULT 'skip';
