CREATE TABLE idempotency (
    namespace   TEXT    NOT NULL,
    key         TEXT    NOT NULL,
    operation   TEXT    NOT NULL,
    fingerprint TEXT    NOT NULL,
    status      INTEGER NOT NULL,
    header      TEXT    NOT NULL,
    body        BLOB    NOT NULL,
    created_at  INTEGER NOT NULL,
    expires_at  INTEGER NOT NULL,
    PRIMARY KEY (namespace, key)
) STRICT, WITHOUT ROWID;
CREATE INDEX idempotency_expires ON idempotency (expires_at);

CREATE TABLE intents (
    tenant     TEXT    NOT NULL,
    id         TEXT    NOT NULL,
    subject    TEXT    NOT NULL,
    text       TEXT    NOT NULL,
    tags       TEXT    NOT NULL,
    trace_id   TEXT    NOT NULL,
    created_at INTEGER NOT NULL,
    PRIMARY KEY (tenant, id)
) STRICT, WITHOUT ROWID;
CREATE UNIQUE INDEX intents_id ON intents (id);

CREATE TABLE events (
    seq         INTEGER PRIMARY KEY AUTOINCREMENT,
    tenant      TEXT    NOT NULL,
    trace_id    TEXT    NOT NULL,
    type        TEXT    NOT NULL,
    at          INTEGER NOT NULL,
    subject     TEXT    NOT NULL,
    client_id   TEXT    NOT NULL,
    operation   TEXT    NOT NULL,
    tool        TEXT    NOT NULL,
    run_id      TEXT    NOT NULL,
    workflow_id TEXT    NOT NULL,
    outcome     TEXT    NOT NULL,
    code        TEXT    NOT NULL,
    request_id  TEXT    NOT NULL,
    attributes  TEXT    NOT NULL
) STRICT;
CREATE INDEX events_trace ON events (tenant, trace_id, at, seq);

CREATE TABLE revocations (
    jti        TEXT    PRIMARY KEY,
    revoked_at INTEGER NOT NULL,
    expires_at INTEGER NOT NULL,
    by_subject TEXT    NOT NULL,
    reason     TEXT    NOT NULL
) STRICT, WITHOUT ROWID;
CREATE INDEX revocations_revoked_at ON revocations (revoked_at);
