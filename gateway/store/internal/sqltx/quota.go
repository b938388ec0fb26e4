package sqltx

import (
	"context"
	"fmt"

	"github.com/praxa/praxa/gateway/store"
	"github.com/praxa/praxa/gateway/store/internal/sqlrow"
)

// This file counts what the tenant quotas bound (store.QuotaReadTx) and
// takes a tenant's quota lock (store.QuotaTx). The counts read the indexes
// of the tenant quota migrations (missions_open, start_leases_held) and
// the primary keys of approvals' and context_records' indexes; the lock
// is a row of tenant_quota_locks (PostgreSQL only: SQLite has one writer).

// usageSQL holds, per quota kind, the count of one tenant and the count of
// every tenant. 'proxy_default' is store.ProxyDefaultDefinition.
var usageSQL = map[string][2]string{
	store.QuotaOpenMissions: {
		`SELECT (SELECT count(*) FROM missions WHERE tenant = ? AND status = 'active' AND definition_id <> 'proxy_default')
		+ (SELECT count(*) FROM start_leases WHERE tenant = ? AND status = 0 AND definition_id <> 'proxy_default')`,
		`SELECT (SELECT count(*) FROM missions WHERE status = 'active' AND definition_id <> 'proxy_default')
		+ (SELECT count(*) FROM start_leases WHERE status = 0 AND definition_id <> 'proxy_default')`,
	},
	store.QuotaPendingApprovals: {
		`SELECT count(*) FROM approvals WHERE tenant = ? AND status = 'pending'`,
		`SELECT count(*) FROM approvals WHERE status = 'pending'`,
	},
	store.QuotaMemoryRecords: {
		`SELECT count(*) FROM context_records WHERE kind = 'memory' AND tenant = ?`,
		`SELECT count(*) FROM context_records WHERE kind = 'memory'`,
	},
	store.QuotaGoals: {
		`SELECT count(*) FROM context_records WHERE kind = 'goal' AND tenant = ?`,
		`SELECT count(*) FROM context_records WHERE kind = 'goal'`,
	},
}

// TenantUsage implements store.QuotaReadTx.
func (t *Tx) TenantUsage(ctx context.Context, tenant, kind string) (int, error) {
	q, ok := usageSQL[kind]
	if !ok {
		return 0, t.wrap("tenant usage", fmt.Errorf("unknown quota kind %q", kind))
	}
	var n int64
	var err error
	switch {
	case tenant == "":
		err = t.queryRow(ctx, q[1]).Scan(&n)
	case kind == store.QuotaOpenMissions:
		err = t.queryRow(ctx, q[0], tenant, tenant).Scan(&n)
	default:
		err = t.queryRow(ctx, q[0], tenant).Scan(&n)
	}
	if err != nil {
		return 0, t.wrap("tenant usage", err)
	}
	return int(n), nil
}

// OpenMissions implements store.QuotaReadTx.
func (t *Tx) OpenMissions(ctx context.Context, tenant string, limit int) ([]store.Mission, error) {
	return list(ctx, t, "open missions", "mission", sqlrow.Mission, `SELECT `+sqlrow.MissionColumns+` FROM missions
		WHERE tenant = ? AND status = 'active' AND definition_id <> 'proxy_default' ORDER BY created_at, id LIMIT `, limit, tenant)
}

// LockTenant implements store.QuotaTx. In an Update of a driver whose
// transactions run concurrently (LockMissions: pgstore) it locks the
// tenant's row of tenant_quota_locks until the transaction ends, creating
// it first: an INSERT ... ON CONFLICT DO NOTHING that waits for a
// concurrent insert of the row, then SELECT ... FOR UPDATE, which waits
// for the holder's commit. Elsewhere the driver's one writer serializes
// the transactions already.
func (t *Tx) LockTenant(ctx context.Context, tenant string) error {
	if !t.LockMissions {
		return nil
	}
	if _, err := t.exec(ctx, `INSERT INTO tenant_quota_locks (tenant) VALUES (?) ON CONFLICT DO NOTHING`, tenant); err != nil {
		return t.wrap("lock tenant", err)
	}
	var got string
	if err := t.queryRow(ctx, `SELECT tenant FROM tenant_quota_locks WHERE tenant = ? FOR UPDATE`, tenant).Scan(&got); err != nil {
		return t.wrap("lock tenant", err)
	}
	return nil
}
