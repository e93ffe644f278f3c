-- PostgreSQL twin of sqlite/0016_calendars.sql; BIGINT for instants.
-- Business calendars (DESIGN §3): named, stored, shared by every process.
-- weekend: the day names that are not business days, comma-separated ("SAT,SUN");
-- holidays: the dates listed by hand, a JSON array of ISO dates; country / subdivision:
-- whose public holidays the calendar adds (NULL: none). Read by name only.
CREATE TABLE tickwork_calendars (
    name TEXT PRIMARY KEY,
    weekend TEXT NOT NULL,
    holidays TEXT NOT NULL,
    country TEXT,
    subdivision TEXT,
    updated_at BIGINT NOT NULL
);
-- A country calendar's public holidays, resolved per year by a process with the
-- `holidays` extra and stored, so that workers without it decide the same way.
-- holidays: a JSON array of [ISO date, name]. Dropped when the calendar is set again.
CREATE TABLE tickwork_calendar_years (
    calendar TEXT NOT NULL,
    year BIGINT NOT NULL,
    holidays TEXT NOT NULL,
    PRIMARY KEY (calendar, year)
);
