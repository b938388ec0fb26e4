-- The events' seq was an INTEGER PRIMARY KEY AUTOINCREMENT: every INSERT
-- read the table's row of sqlite_sequence and wrote it back, one more
-- B-tree page changed per statement (and copied into the savepoint journal
-- of each job of a batch), about a quarter of the CPU of inserting one
-- event. Events are never deleted, so the rowid SQLite picks without
-- AUTOINCREMENT, one more than the largest, is the same seq: increasing,
-- never reused. The table is rebuilt without it (SQLite cannot alter a
-- column's definition), its rows and seq kept, then its indexes.
CREATE TABLE events_seq (
    seq           INTEGER PRIMARY KEY,
    tenant        TEXT    NOT NULL,
    trace_id      TEXT    NOT NULL,
    type          TEXT    NOT NULL,
    at            INTEGER NOT NULL,
    subject       TEXT    NOT NULL,
    client_id     TEXT    NOT NULL,
    operation     TEXT    NOT NULL,
    tool          TEXT    NOT NULL,
    run_id        TEXT    NOT NULL,
    workflow_id   TEXT    NOT NULL,
    outcome       TEXT    NOT NULL,
    code          TEXT    NOT NULL,
    request_id    TEXT    NOT NULL,
    attributes    TEXT    NOT NULL,
    call_trace_id TEXT    NOT NULL DEFAULT ''
) STRICT;
INSERT INTO events_seq (seq, tenant, trace_id, type, at, subject, client_id, operation, tool, run_id, workflow_id,
        outcome, code, request_id, attributes, call_trace_id)
    SELECT seq, tenant, trace_id, type, at, subject, client_id, operation, tool, run_id, workflow_id,
        outcome, code, request_id, attributes, call_trace_id FROM events ORDER BY seq;
DROP TABLE events;
ALTER TABLE events_seq RENAME TO events;
CREATE INDEX events_trace ON events (tenant, trace_id, at, seq);
CREATE INDEX events_call_trace ON events (tenant, call_trace_id, at, seq) WHERE call_trace_id <> '';
CREATE INDEX events_workflow ON events (tenant, workflow_id, at, seq) WHERE workflow_id <> '';
