-- PostgreSQL twin of sqlite/0022_event_order.sql: the wait's look back by the store's
-- order of inserts, not by milliseconds (DESIGN §9).
-- Each event draws its position from a sequence (`seq`, its column's default); each run
-- records, at its insert, the last position drawn (`event_mark`, read from the view
-- below); the look back takes the events with a greater `seq`.
-- Why the last drawn, not the highest committed: a sequence hands out numbers in the
-- order emits begin, not the order they commit. Any emit that begins after the run's
-- insert draws a greater number, so it is never missed; any event committed before the
-- insert drew a number already, not greater, so it never matches. An emit drawn before
-- the insert and committed after it (concurrent with the run's creation) does not match
-- the look back either: it began before the run existed. (The highest committed number
-- instead would let such an event match, or not, by the luck of which numbers the
-- concurrent emits drew.) CACHE 1 (the default) keeps the drawing in the order of time
-- across sessions: a session's cached numbers would be drawn after a run's mark.
-- Rows stored before this migration keep NULL: an older event has no `seq` (it is before
-- every run with a mark), and a run with no mark keeps the millisecond rule it had. The
-- columns are added without a default first, so that no existing row is rewritten.
CREATE SEQUENCE tickwork_event_seq CACHE 1;
ALTER TABLE tickwork_events ADD COLUMN seq BIGINT;
ALTER TABLE tickwork_events ALTER COLUMN seq SET DEFAULT nextval('tickwork_event_seq');
ALTER TABLE tickwork_runs ADD COLUMN event_mark BIGINT;
-- The last position drawn (0 before the first): SQLite's one-row table, here a view.
CREATE VIEW tickwork_event_order AS
SELECT CASE WHEN is_called THEN last_value ELSE last_value - 1 END AS last
FROM tickwork_event_seq;
-- The look back of one name, in the order stored.
CREATE INDEX tickwork_events_order ON tickwork_events (name, seq);
