package store

import "context"

// The kinds of tenant quota (server.quotas in praxec.yaml): what
// TenantUsage counts for each.
const (
	// QuotaOpenMissions counts the tenant's open missions: those with
	// Status active whose definition is not proxy_default (the runs of the
	// light path and of proxied calls, which the run sweeper expires),
	// plus the held start leases (Status 0) of such definitions, each a
	// start that is calling outside and will store a mission.
	QuotaOpenMissions = "openMissions"
	// QuotaPendingApprovals counts the tenant's approvals with Status
	// pending.
	QuotaPendingApprovals = "pendingApprovals"
	// QuotaMemoryRecords counts the tenant's context records of
	// KindMemory.
	QuotaMemoryRecords = "memoryRecords"
	// QuotaGoals counts the tenant's context records of KindGoal.
	QuotaGoals = "goals"
)

// QuotaKinds lists the quota kinds, in the order /metrics reports them.
func QuotaKinds() []string {
	return []string{QuotaOpenMissions, QuotaPendingApprovals, QuotaMemoryRecords, QuotaGoals}
}

// ProxyDefaultDefinition is the definition id whose missions never count
// toward QuotaOpenMissions (config.ProxyDefaultWorkflow; a test holds them
// equal).
const ProxyDefaultDefinition = "proxy_default"

// QuotaReadTx counts what the tenant quotas bound.
type QuotaReadTx interface {
	// TenantUsage counts the tenant's objects of the quota kind (see the
	// Quota constants); an empty tenant counts every tenant's (the
	// gateway's /metrics). An unknown kind is an error.
	TenantUsage(ctx context.Context, tenant, kind string) (int, error)
	// OpenMissions returns up to limit of the tenant's open missions
	// (Status active, definition not proxy_default), oldest first (by
	// CreatedAt, then ID): what a quota-exceeded answer links to.
	OpenMissions(ctx context.Context, tenant string, limit int) ([]Mission, error)
}

// QuotaTx serializes the writes a tenant quota checks.
type QuotaTx interface {
	// LockTenant makes the transaction the only one, until it ends, that
	// holds the tenant's quota lock: a transaction that checks a quota
	// calls it, then TenantUsage, then writes, so two transactions (of
	// any replica) cannot both take the last slot. TenantUsage after
	// LockTenant sees every write committed by the transactions that held
	// the lock before. On a driver with one writer at a time (SQLite, the
	// memory store) it does nothing more.
	LockTenant(ctx context.Context, tenant string) error
}
