CREATE TABLE missions (
    tenant             TEXT    NOT NULL,
    id                 TEXT    NOT NULL,
    run_id             TEXT    NOT NULL,
    definition_id      TEXT    NOT NULL,
    definition_version INTEGER NOT NULL,
    state              TEXT    NOT NULL,
    version            BIGINT  NOT NULL,
    status             TEXT    NOT NULL,
    parent_id          TEXT    NOT NULL,
    doc                BYTEA   NOT NULL,
    created_at         BIGINT  NOT NULL,
    updated_at         BIGINT  NOT NULL,
    PRIMARY KEY (id)
);
CREATE UNIQUE INDEX missions_run_id ON missions (tenant, run_id);

CREATE TABLE mission_submits (
    tenant           TEXT   NOT NULL,
    workflow_id      TEXT   NOT NULL,
    expected_version BIGINT NOT NULL,
    fingerprint      TEXT   NOT NULL,
    response         BYTEA  NOT NULL,
    created_at       BIGINT NOT NULL,
    PRIMARY KEY (workflow_id, expected_version)
);

CREATE TABLE approvals (
    tenant       TEXT   NOT NULL,
    id           TEXT   NOT NULL,
    workflow_id  TEXT   NOT NULL,
    run_id       TEXT   NOT NULL,
    transition   TEXT   NOT NULL,
    queue        TEXT   NOT NULL,
    status       TEXT   NOT NULL,
    requested_by TEXT   NOT NULL,
    resolved_by  TEXT   NOT NULL,
    doc          BYTEA  NOT NULL,
    created_at   BIGINT NOT NULL,
    resolved_at  BIGINT NOT NULL,
    PRIMARY KEY (id)
);
CREATE INDEX approvals_tenant_status ON approvals (tenant, status, created_at);
