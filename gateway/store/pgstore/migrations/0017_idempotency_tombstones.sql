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

-- The records written before this migration keep a tombstone for the
-- default window (30 days from their creation); their object is unknown.
UPDATE idempotency SET forget_at = GREATEST(expires_at, created_at + 2592000000000000);

-- The sweeper reads two ranges: the expired records whose answer it drops
-- (tombstones have status 0 and leave this index), and the rows to delete.
DROP INDEX idempotency_expires;
CREATE INDEX idempotency_unswept ON idempotency (expires_at) WHERE status <> 0;
CREATE INDEX idempotency_forget ON idempotency (forget_at);
