-- Resolved start leases keyed by an idempotency key ("key:" refs) are kept
-- only as long as the idempotency record of their key: expires_at (unix
-- nanoseconds, 0 for never) is when SweepIdempotency deletes one. A lease
-- keyed by runId is kept for good (a runId is single-use).
ALTER TABLE start_leases ADD COLUMN expires_at BIGINT NOT NULL DEFAULT 0;

-- The key records resolved before this migration expire one default
-- idempotency retention (24 hours) after they were taken.
UPDATE start_leases SET expires_at = created_at + 86400000000000
    WHERE status <> 0 AND ref LIKE 'key:%';

CREATE INDEX start_leases_expiry ON start_leases (expires_at) WHERE expires_at > 0;
