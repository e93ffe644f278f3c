-- The wait's look back by the store's order of inserts, not by milliseconds (DESIGN §9):
-- an event "emitted since the run was created" is one stored after the run, however
-- close their instants (under a clock that stands still, all of them are equal).
-- Each event takes the next position (`seq`, from the one-row counter below, by the
-- trigger: SQLite has no sequences), and each run records, at its insert, the last
-- position taken (`event_mark`, read from the counter in the insert); the look back takes
-- the events with a greater `seq`. SQLite's write transactions take turns, so "the last
-- position taken" is exactly the events stored before the run.
-- Rows stored before this migration keep NULL: an older event has no `seq` (it is before
-- every run with a mark), and a run with no mark keeps the millisecond rule it had.
CREATE TABLE tickwork_event_order (
    last INTEGER NOT NULL
);
INSERT INTO tickwork_event_order (last) VALUES (0);
ALTER TABLE tickwork_events ADD COLUMN seq INTEGER;
ALTER TABLE tickwork_runs ADD COLUMN event_mark INTEGER;
CREATE TRIGGER tickwork_events_seq AFTER INSERT ON tickwork_events
BEGIN UPDATE tickwork_event_order SET last = last + 1; UPDATE tickwork_events SET seq = (SELECT last FROM tickwork_event_order) WHERE id = NEW.id; END;
-- The look back of one name, in the order stored.
CREATE INDEX tickwork_events_order ON tickwork_events (name, seq);
