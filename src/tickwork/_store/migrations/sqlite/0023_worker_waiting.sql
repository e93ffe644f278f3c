-- What a worker holds back (issue 47): the declared schedules it left out of registration
-- because their calendar is not stored, as a JSON object of key to calendar name
-- ({"report": "uk"}), NULL when none. The worker writes it with each renewal, so a face
-- without the app (`tickwork schedules list`, `tickwork serve`) can say why a schedule
-- does not fire. Rows stored before this migration keep NULL: nothing held back.
ALTER TABLE tickwork_workers ADD COLUMN waiting TEXT;
