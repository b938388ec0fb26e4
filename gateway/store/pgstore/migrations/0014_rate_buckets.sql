-- The cluster-wide rate limits (gateway/ratelimit): one token bucket per
-- key (a principal, a tenant, a capability) shared by every replica, which
-- lease slices of it (pgstore's TakeTokens). granted is what the last
-- take took; full_at is when the bucket is full again, after which its
-- row means nothing a missing row does not (a missing bucket is full) and
-- RateReplicas deletes it.
CREATE TABLE rate_buckets (
    key TEXT NOT NULL PRIMARY KEY,
    tokens DOUBLE PRECISION NOT NULL,
    granted INTEGER NOT NULL,
    updated_at TIMESTAMPTZ NOT NULL,
    full_at TIMESTAMPTZ NOT NULL
);
CREATE INDEX rate_buckets_full ON rate_buckets (full_at);

-- The replicas that took tokens lately, each with its last heartbeat:
-- their count is the share of a budget a replica keeps to when the
-- database cannot be reached.
CREATE TABLE rate_replicas (
    id TEXT NOT NULL PRIMARY KEY,
    seen_at TIMESTAMPTZ NOT NULL
);
