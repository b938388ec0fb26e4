package config

// Quotas are the tenant quotas of server.quotas: the limits every tenant
// gets and per-tenant overrides. A limit of 0 (or absent) is unlimited.
// The gateway enforces them across every replica of one store
// (gateway/quotas.go).
type Quotas struct {
	// OpenMissions bounds the tenant's open missions (store.QuotaOpenMissions).
	OpenMissions int `json:"openMissions,omitempty"`
	// PendingApprovals bounds the tenant's pending approvals.
	PendingApprovals int `json:"pendingApprovals,omitempty"`
	// MemoryRecords bounds the tenant's memory records.
	MemoryRecords int `json:"memoryRecords,omitempty"`
	// Goals bounds the tenant's goals.
	Goals int `json:"goals,omitempty"`
	// Tenants overrides limits by tenant id: a limit given replaces the
	// default (0: unlimited), a limit absent keeps it.
	Tenants map[string]QuotaOverride `json:"tenants,omitempty"`
}

// QuotaOverride is one tenant's override: nil keeps the default limit.
type QuotaOverride struct {
	OpenMissions     *int `json:"openMissions,omitempty"`
	PendingApprovals *int `json:"pendingApprovals,omitempty"`
	MemoryRecords    *int `json:"memoryRecords,omitempty"`
	Goals            *int `json:"goals,omitempty"`
}

// QuotaLimits are the limits in force for one tenant (0: unlimited).
type QuotaLimits struct {
	OpenMissions, PendingApprovals, MemoryRecords, Goals int
}

// For returns the limits in force for tenant: the defaults with the
// tenant's overrides applied.
func (q *Quotas) For(tenant string) QuotaLimits {
	if q == nil {
		return QuotaLimits{}
	}
	l := QuotaLimits{OpenMissions: q.OpenMissions, PendingApprovals: q.PendingApprovals, MemoryRecords: q.MemoryRecords, Goals: q.Goals}
	o, ok := q.Tenants[tenant]
	if !ok {
		return l
	}
	for _, p := range []struct {
		over *int
		dst  *int
	}{{o.OpenMissions, &l.OpenMissions}, {o.PendingApprovals, &l.PendingApprovals}, {o.MemoryRecords, &l.MemoryRecords}, {o.Goals, &l.Goals}} {
		if p.over != nil {
			*p.dst = *p.over
		}
	}
	return l
}

// Any reports whether any limit is set, for any tenant.
func (q *Quotas) Any() bool {
	if q == nil {
		return false
	}
	if q.OpenMissions > 0 || q.PendingApprovals > 0 || q.MemoryRecords > 0 || q.Goals > 0 {
		return true
	}
	for _, o := range q.Tenants {
		for _, p := range []*int{o.OpenMissions, o.PendingApprovals, o.MemoryRecords, o.Goals} {
			if p != nil && *p > 0 {
				return true
			}
		}
	}
	return false
}
