package memstore

import (
	"cmp"
	"context"
	"fmt"
	"slices"

	"github.com/praxa/praxa/gateway/store"
)

// TenantUsage implements store.QuotaReadTx, over the DB's maps and the
// transaction's staged writes.
func (t *txn) TenantUsage(ctx context.Context, tenant, kind string) (int, error) {
	ours := func(tn string) bool { return tenant == "" || tn == tenant }
	n := 0
	switch kind {
	case store.QuotaOpenMissions:
		open := func(m store.Mission) bool {
			return ours(m.Tenant) && m.Status == "active" && m.DefinitionID != store.ProxyDefaultDefinition
		}
		for _, m := range t.missions {
			if open(m) {
				n++
			}
		}
		for id, m := range t.db.missions {
			if !t.staged(id) && open(m) {
				n++
			}
		}
		held := func(l store.StartLease) bool {
			return ours(l.Tenant) && l.Status == 0 && l.DefinitionID != store.ProxyDefaultDefinition
		}
		for _, l := range view(t.startLeases, t.db.startLeases) {
			if held(l) {
				n++
			}
		}
	case store.QuotaPendingApprovals:
		for _, a := range t.approvals {
			if ours(a.Tenant) && a.Status == "pending" {
				n++
			}
		}
		for id, a := range t.db.approvals {
			if _, staged := t.approvals[id]; !staged && ours(a.Tenant) && a.Status == "pending" {
				n++
			}
		}
	case store.QuotaMemoryRecords, store.QuotaGoals:
		want := store.KindMemory
		if kind == store.QuotaGoals {
			want = store.KindGoal
		}
		for k := range t.context.records {
			if k.kind == want && ours(k.tenant) {
				n++
			}
		}
		for k := range t.db.context.records {
			if _, staged := t.context.records[k]; !staged && k.kind == want && ours(k.tenant) {
				n++
			}
		}
	default:
		return 0, fmt.Errorf("memstore: tenant usage: unknown quota kind %q", kind)
	}
	return n, nil
}

// OpenMissions implements store.QuotaReadTx.
func (t *txn) OpenMissions(ctx context.Context, tenant string, limit int) ([]store.Mission, error) {
	var out []store.Mission
	add := func(m store.Mission) {
		if m.Tenant == tenant && m.Status == "active" && m.DefinitionID != store.ProxyDefaultDefinition {
			out = append(out, m)
		}
	}
	for _, m := range t.missions {
		add(m)
	}
	for id, m := range t.db.missions {
		if !t.staged(id) {
			add(m)
		}
	}
	slices.SortFunc(out, func(a, b store.Mission) int {
		return cmp.Or(a.CreatedAt.Compare(b.CreatedAt), cmp.Compare(a.ID, b.ID))
	})
	if len(out) > limit {
		out = out[:max(limit, 0)]
	}
	for i := range out {
		out[i].Doc = slices.Clone(out[i].Doc)
	}
	return out, nil
}

// LockTenant implements store.QuotaTx: Updates are serialized already.
func (t *txn) LockTenant(ctx context.Context, tenant string) error {
	t.mustWrite()
	return nil
}
