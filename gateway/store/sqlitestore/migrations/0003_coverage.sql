CREATE TABLE coverage_runs (
    seq         INTEGER PRIMARY KEY AUTOINCREMENT,
    id          TEXT    NOT NULL UNIQUE,
    tenant      TEXT    NOT NULL,
    subject     TEXT    NOT NULL,
    recorded_at INTEGER NOT NULL,
    doc         BLOB    NOT NULL
) STRICT;
CREATE INDEX coverage_runs_recorded ON coverage_runs (recorded_at, seq);
