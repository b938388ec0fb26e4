-- The tenant quotas (gateway/quotas.go) count a tenant's open missions
-- and its held start leases inside the write transaction that would add
-- one: a range of these indexes, whatever the tenant's proxy_default runs
-- and resolved start leases number.
CREATE INDEX missions_open ON missions (tenant, status, definition_id);
CREATE INDEX start_leases_held ON start_leases (tenant, definition_id) WHERE status = 0;

-- One row per tenant that ever checked a quota: the transaction that
-- checks a quota locks it (SELECT ... FOR UPDATE) before it counts, so
-- two replicas cannot both take a tenant's last slot.
CREATE TABLE tenant_quota_locks (
    tenant TEXT NOT NULL PRIMARY KEY
);
