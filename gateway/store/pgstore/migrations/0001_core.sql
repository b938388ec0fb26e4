-- PostgreSQL twin of sqlitestore's migrations: the same tables and keys;
-- times are Unix nanoseconds (BIGINT, 0 for the zero time), documents BYTEA,
-- string lists and maps JSON text.
CREATE TABLE idempotency (
    namespace   TEXT    NOT NULL,
    key         TEXT    NOT NULL,
    operation   TEXT    NOT NULL,
    fingerprint TEXT    NOT NULL,
    status      INTEGER NOT NULL,
    header      TEXT    NOT NULL,
    body        BYTEA   NOT NULL,
    created_at  BIGINT  NOT NULL,
    expires_at  BIGINT  NOT NULL,
    PRIMARY KEY (namespace, key)
);
CREATE INDEX idempotency_expires ON idempotency (expires_at);

CREATE TABLE intents (
    tenant     TEXT   NOT NULL,
    id         TEXT   NOT NULL,
    subject    TEXT   NOT NULL,
    text       TEXT   NOT NULL,
    tags       TEXT   NOT NULL,
    trace_id   TEXT   NOT NULL,
    created_at BIGINT NOT NULL,
    PRIMARY KEY (tenant, id)
);
CREATE UNIQUE INDEX intents_id ON intents (id);

CREATE TABLE events (
    seq         BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    tenant      TEXT   NOT NULL,
    trace_id    TEXT   NOT NULL,
    type        TEXT   NOT NULL,
    at          BIGINT NOT NULL,
    subject     TEXT   NOT NULL,
    client_id   TEXT   NOT NULL,
    operation   TEXT   NOT NULL,
    tool        TEXT   NOT NULL,
    run_id      TEXT   NOT NULL,
    workflow_id TEXT   NOT NULL,
    outcome     TEXT   NOT NULL,
    code        TEXT   NOT NULL,
    request_id  TEXT   NOT NULL,
    attributes  TEXT   NOT NULL
);
CREATE INDEX events_trace ON events (tenant, trace_id, at, seq);

CREATE TABLE revocations (
    jti        TEXT   PRIMARY KEY,
    revoked_at BIGINT NOT NULL,
    expires_at BIGINT NOT NULL,
    by_subject TEXT   NOT NULL,
    reason     TEXT   NOT NULL
);
CREATE INDEX revocations_revoked_at ON revocations (revoked_at);
