-- Tombstones of expired idempotency keys (issue 27 item 6). A record past
-- its expiry stays, as a tombstone, until forget_at: the sweeper drops its
-- answer (status 0, header null, an empty body) and keeps the key, its
-- operation, fingerprint, object and created_at, so that a late retry of
-- the key is refused (409 idempotency-key-expired) instead of acting
-- again. forget_at is the end of the tombstone window
-- (server.idempotency.tombstoneRetention from created_at), or expires_at
-- for a record without a tombstone; object names the mission the request
-- created or acted on ('' for none), for the refusal's link. One row a
-- key, record then tombstone, deleted at forget_at.
ALTER TABLE idempotency ADD COLUMN object TEXT NOT NULL DEFAULT '';
ALTER TABLE idempotency ADD COLUMN forget_at BIGINT NOT NULL DEFAULT 0;
-- sweep_at is when the sweeper next has work on the row: expires_at for a
-- record (its answer is dropped then), forget_at for a tombstone (it is
-- deleted then). The sweep reads one range of its index and touches only
-- the rows due, however many tombstones wait; a write maintains one index,
-- as before (idempotency_expires goes).
ALTER TABLE idempotency ADD COLUMN sweep_at BIGINT NOT NULL DEFAULT 0;

-- The records written before this migration keep a tombstone for the
-- default window (30 days from their creation); their object is unknown.
UPDATE idempotency SET forget_at = GREATEST(expires_at, created_at + 2592000000000000), sweep_at = expires_at;

-- tolerated: a binary from before this migration sweeps with DELETE ...
-- WHERE expires_at < now, which reads the whole table without this index
-- (slower, not wrong) while it serves.
DROP INDEX idempotency_expires;
CREATE INDEX idempotency_sweep ON idempotency (sweep_at);
