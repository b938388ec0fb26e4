-- Move leases: the claim a gateway takes on a workflow's version before a
-- move on it calls outside, in a transaction of its own.
CREATE TABLE move_leases (
    tenant           TEXT   NOT NULL,
    workflow_id      TEXT   NOT NULL,
    expected_version BIGINT NOT NULL,
    transition       TEXT   NOT NULL,
    fingerprint      TEXT   NOT NULL,
    namespace        TEXT   NOT NULL,
    key              TEXT   NOT NULL,
    operation        TEXT   NOT NULL,
    key_fingerprint  TEXT   NOT NULL,
    owner            TEXT   NOT NULL,
    created_at       BIGINT NOT NULL,
    deadline         BIGINT NOT NULL,
    PRIMARY KEY (workflow_id, expected_version)
);

-- A submit record may hold a refusal (an outcome-unknown) instead of a
-- projection: its HTTP status, 0 for a success.
ALTER TABLE mission_submits ADD COLUMN status INTEGER NOT NULL DEFAULT 0;
