package storetest

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/praxa/praxa/gateway/store"
)

// usage reads the tenant's usage of every quota kind ("" for every
// tenant's), keyed by kind.
func usage(t *testing.T, s store.Store, tenant string) map[string]int {
	t.Helper()
	out := map[string]int{}
	view(t, s, func(ctx context.Context, tx store.ReadTx) error {
		for _, k := range store.QuotaKinds() {
			n, err := tx.TenantUsage(ctx, tenant, k)
			if err != nil {
				return err
			}
			out[k] = n
		}
		return nil
	})
	return out
}

// testTenantUsage: TenantUsage counts what each quota kind says, of the
// tenant only (of every tenant for ""), the transaction's own writes
// included, and refuses an unknown kind.
func testTenantUsage(t *testing.T, o Opener) {
	s := o.Open(t)
	mustUpdate(t, s, func(ctx context.Context, tx store.Tx) error {
		open := mission("a", "wf_open", "run-open")
		done := mission("a", "wf_done", "run-done")
		done.Status = "completed"
		light := mission("a", "wf_light", "run-light")
		light.DefinitionID = store.ProxyDefaultDefinition
		other := mission("b", "wf_b", "run-b")
		if err := insertMissions(ctx, tx, open, done, light, other); err != nil {
			return err
		}
		held := startLease("a", "run:held", "gw1")
		lightLease := startLease("a", "run:light", "gw1")
		lightLease.DefinitionID = store.ProxyDefaultDefinition
		resolved := startLease("a", "run:resolved", "gw1")
		for _, l := range []store.StartLease{held, lightLease, resolved} {
			if err := tx.InsertStartLease(ctx, l); err != nil {
				return err
			}
		}
		if err := tx.ResolveStartLease(ctx, "a", "run:resolved", "gw1", 504, []byte(`{}`), epoch.Add(24*time.Hour)); err != nil {
			return err
		}
		for i, st := range []string{"pending", "pending", "approved"} {
			a := store.Approval{Tenant: "a", ID: fmt.Sprintf("apr_%d", i), WorkflowID: "wf_open", RunID: "run-open",
				Transition: "ship", Status: st, Doc: []byte(`{}`), CreatedAt: epoch}
			if err := tx.InsertApproval(ctx, a); err != nil {
				return err
			}
		}
		if err := tx.InsertApproval(ctx, store.Approval{Tenant: "b", ID: "apr_b", WorkflowID: "wf_b", RunID: "run-b",
			Transition: "ship", Status: "pending", Doc: []byte(`{}`), CreatedAt: epoch}); err != nil {
			return err
		}
		for _, r := range []store.ContextRecord{
			contextRecord(store.KindMemory, "a", "m1", "c", "p"), contextRecord(store.KindMemory, "a", "m2", "c", "p"),
			contextRecord(store.KindMemory, "a", "m2", "c", "p"), // an upsert, not a second record
			contextRecord(store.KindGoal, "a", "g1", "c", "p"), contextRecord(store.KindGoal, "b", "g1", "c", "p"),
		} {
			if err := tx.PutContextRecord(ctx, r); err != nil {
				return err
			}
		}
		// The transaction's own writes count.
		n, err := tx.TenantUsage(ctx, "a", store.QuotaOpenMissions)
		if err != nil {
			return err
		}
		if n != 2 {
			t.Errorf("open missions inside the transaction = %d, want 2", n)
		}
		return nil
	})
	want := map[string]int{store.QuotaOpenMissions: 2, store.QuotaPendingApprovals: 2, store.QuotaMemoryRecords: 2, store.QuotaGoals: 1}
	if got := usage(t, s, "a"); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("usage of a = %v, want %v", got, want)
	}
	want = map[string]int{store.QuotaOpenMissions: 1, store.QuotaPendingApprovals: 1, store.QuotaMemoryRecords: 0, store.QuotaGoals: 1}
	if got := usage(t, s, "b"); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("usage of b = %v, want %v", got, want)
	}
	want = map[string]int{store.QuotaOpenMissions: 3, store.QuotaPendingApprovals: 3, store.QuotaMemoryRecords: 2, store.QuotaGoals: 2}
	if got := usage(t, s, ""); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("usage of every tenant = %v, want %v", got, want)
	}
	view(t, s, func(ctx context.Context, tx store.ReadTx) error {
		open, err := tx.OpenMissions(ctx, "a", 10)
		if err != nil {
			return err
		}
		if len(open) != 1 || open[0].ID != "wf_open" {
			t.Errorf("open missions of a = %v, want wf_open alone", open)
		}
		if none, err := tx.OpenMissions(ctx, "a", 0); err != nil || len(none) != 0 {
			t.Errorf("open missions of a, limit 0 = %v, %v", none, err)
		}
		return nil
	})
	// A mission that completes, a held lease that resolves and an approval
	// that is decided stop counting.
	mustUpdate(t, s, func(ctx context.Context, tx store.Tx) error {
		m, err := tx.GetMission(ctx, "a", "wf_open")
		if err != nil {
			return err
		}
		m.Status, m.Version = "completed", 2
		if err := tx.UpdateMission(ctx, m, 1); err != nil {
			return err
		}
		if err := tx.DeleteStartLease(ctx, "a", "run:held", "gw1"); err != nil {
			return err
		}
		a, err := tx.GetApproval(ctx, "a", "apr_0")
		if err != nil {
			return err
		}
		a.Status = "cancelled"
		return tx.UpdateApproval(ctx, a, "pending")
	})
	if got := usage(t, s, "a"); got[store.QuotaOpenMissions] != 0 || got[store.QuotaPendingApprovals] != 1 {
		t.Errorf("usage of a after closing = %v, want 0 open missions and 1 pending approval", got)
	}
	view(t, s, func(ctx context.Context, tx store.ReadTx) error {
		if _, err := tx.TenantUsage(ctx, "a", "bogus"); err == nil {
			t.Error("an unknown quota kind counted")
		}
		return nil
	})
}

// errAtLimit refuses a write at the quota in testQuotaSerialized.
var errAtLimit = errors.New("storetest: at the limit")

// testQuotaSerialized: two transactions check the same tenant's quota of
// one open mission (LockTenant, TenantUsage, then the insert); the first
// pauses between its count and its insert while the second runs. Only one
// may insert: a driver whose LockTenant does not serialize them lets both
// count 0 and both insert.
func testQuotaSerialized(t *testing.T, o Opener) {
	s := o.Open(t)
	take := func(ctx context.Context, tx store.Tx, tenant, id string, counted chan<- struct{}, wait <-chan struct{}) error {
		if err := tx.LockTenant(ctx, tenant); err != nil {
			return err
		}
		n, err := tx.TenantUsage(ctx, tenant, store.QuotaOpenMissions)
		if err != nil {
			return err
		}
		if counted != nil {
			close(counted)
		}
		if wait != nil {
			waitOrPause(wait)
		}
		if n >= 1 {
			return errAtLimit
		}
		return tx.InsertMission(ctx, mission(tenant, id, "run-"+id))
	}
	counted, second := make(chan struct{}), make(chan struct{})
	first := make(chan error, 1)
	go func() {
		first <- s.Update(context.Background(), func(ctx context.Context, tx store.Tx) error {
			return take(ctx, tx, "a", "wf_q1", counted, second)
		})
	}()
	<-counted
	err2 := s.Update(context.Background(), func(ctx context.Context, tx store.Tx) error {
		return take(ctx, tx, "a", "wf_q2", nil, nil)
	})
	close(second)
	err1 := <-first
	if (err1 == nil) == (err2 == nil) {
		t.Fatalf("first = %v, second = %v: want exactly one insert", err1, err2)
	}
	for _, err := range []error{err1, err2} {
		if err != nil && !errors.Is(err, errAtLimit) {
			t.Fatalf("refusal = %v, want errAtLimit", err)
		}
	}
	if got := usage(t, s, "a")[store.QuotaOpenMissions]; got != 1 {
		t.Errorf("open missions of a = %d, want 1", got)
	}
	// The quota is per tenant: b's first slot is free.
	mustUpdate(t, s, func(ctx context.Context, tx store.Tx) error { return take(ctx, tx, "b", "wf_qb", nil, nil) })
}
