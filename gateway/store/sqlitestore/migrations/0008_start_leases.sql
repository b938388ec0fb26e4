-- Start leases (issue 8): the claim a gateway takes on a start (keyed by
-- its runId, else its idempotency key) before the start's chain calls
-- outside, in a transaction of its own. A resolved lease (status > 0)
-- keeps the recorded answer of a start whose outcome is unknown.
CREATE TABLE start_leases (
    tenant          TEXT    NOT NULL,
    ref             TEXT    NOT NULL,
    definition_id   TEXT    NOT NULL,
    fingerprint     TEXT    NOT NULL,
    namespace       TEXT    NOT NULL,
    key             TEXT    NOT NULL,
    operation       TEXT    NOT NULL,
    key_fingerprint TEXT    NOT NULL,
    owner           TEXT    NOT NULL,
    created_at      INTEGER NOT NULL,
    deadline        INTEGER NOT NULL,
    status          INTEGER NOT NULL DEFAULT 0,
    response        BLOB    NOT NULL,
    PRIMARY KEY (tenant, ref)
) STRICT, WITHOUT ROWID;

-- The lease sweeper lists the expired leases by deadline.
CREATE INDEX start_leases_deadline ON start_leases (deadline) WHERE status = 0;
CREATE INDEX move_leases_deadline ON move_leases (deadline);
