package storetest

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/praxa/praxa/gateway/store"
)

func contextRecord(kind, tenant, id, compartment string, purposes ...string) store.ContextRecord {
	return store.ContextRecord{Kind: kind, Tenant: tenant, ID: id, Compartment: compartment, Purposes: purposes,
		Tags: []string{"t1"}, Doc: []byte(`{"content":"` + id + `"}`), CreatedAt: epoch, UpdatedAt: epoch}
}

func ids(list []store.ContextRecord) []string {
	return each(list, func(r store.ContextRecord) string { return r.ID })
}

// testContextRecords: a put inserts or replaces (never duplicates) by kind,
// tenant and id; a record is read back whole, copied, and durable across a
// reopen; another tenant's or kind's record is not found.
func testContextRecords(t *testing.T, o Opener) {
	s := o.Open(t)
	view(t, s, func(ctx context.Context, tx store.ReadTx) error {
		if _, err := tx.GetContextRecord(ctx, store.KindMemory, "a", "m1"); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("empty store: %v, want ErrNotFound", err)
		}
		if got, err := tx.ListContextRecords(ctx, store.KindMemory, "a", "", ""); err != nil || len(got) != 0 {
			t.Errorf("empty store lists %v, %v", got, err)
		}
		return nil
	})
	first := contextRecord(store.KindMemory, "a", "m1", "payments", "support", "audit")
	purposes := first.Purposes
	mustUpdate(t, s, func(ctx context.Context, tx store.Tx) error {
		if err := tx.PutContextRecord(ctx, first); err != nil {
			return err
		}
		purposes[0] = "changed" // the store keeps its own copy
		got, err := tx.GetContextRecord(ctx, store.KindMemory, "a", "m1")
		if err != nil || !slices.Equal(got.Purposes, []string{"support", "audit"}) {
			t.Errorf("read own write: %+v, %v", got, err)
		}
		// The same id as a goal, and in another tenant: other records.
		if err := tx.PutContextRecord(ctx, contextRecord(store.KindGoal, "a", "m1", "payments", "support")); err != nil {
			return err
		}
		return tx.PutContextRecord(ctx, contextRecord(store.KindMemory, "b", "m1", "payments", "support"))
	})
	replaced := contextRecord(store.KindMemory, "a", "m1", "hr", "audit")
	replaced.Doc, replaced.Tags, replaced.UpdatedAt = []byte(`{"content":"v2"}`), nil, epoch.Add(time.Hour)
	mustUpdate(t, s, func(ctx context.Context, tx store.Tx) error { return tx.PutContextRecord(ctx, replaced) })
	s = reopen(t, o, s)
	view(t, s, func(ctx context.Context, tx store.ReadTx) error {
		got, err := tx.GetContextRecord(ctx, store.KindMemory, "a", "m1")
		if err != nil {
			t.Fatalf("after reopen: %v", err)
		}
		if got.Compartment != "hr" || !slices.Equal(got.Purposes, []string{"audit"}) || len(got.Tags) != 0 || got.Tags == nil ||
			string(got.Doc) != `{"content":"v2"}` || !got.CreatedAt.Equal(epoch) || !got.UpdatedAt.Equal(epoch.Add(time.Hour)) {
			t.Errorf("replaced record = %+v", got)
		}
		got.Doc[0] = 'X'
		if again, _ := tx.GetContextRecord(ctx, store.KindMemory, "a", "m1"); again.Doc[0] != '{' {
			t.Error("the stored record changed through a returned slice")
		}
		all, err := tx.ListContextRecords(ctx, store.KindMemory, "a", "", "")
		if err != nil || !slices.Equal(ids(all), []string{"m1"}) {
			t.Errorf("tenant a's memory: %v, %v (a put must never duplicate)", ids(all), err)
		}
		if _, err := tx.GetContextRecord(ctx, store.KindMemory, "c", "m1"); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("another tenant's record: %v, want ErrNotFound", err)
		}
		if g, err := tx.GetContextRecord(ctx, store.KindGoal, "a", "m1"); err != nil || g.Compartment != "payments" {
			t.Errorf("the goal with the same id: %+v, %v", g, err)
		}
		return nil
	})
}

// testContextRecordFilters: a list sees exactly the tenant's records of
// the kind in the compartment allowed for the purpose, by id.
func testContextRecordFilters(t *testing.T, o Opener) {
	s := o.Open(t)
	mustUpdate(t, s, func(ctx context.Context, tx store.Tx) error {
		for _, r := range []store.ContextRecord{
			contextRecord(store.KindMemory, "a", "m3", "payments", "support"),
			contextRecord(store.KindMemory, "a", "m1", "payments", "support", "audit"),
			contextRecord(store.KindMemory, "a", "m2", "payments", "marketing"),
			contextRecord(store.KindMemory, "a", "m4", "hr", "support"),
			contextRecord(store.KindMemory, "a", "m5", "payments"),
			contextRecord(store.KindMemory, "b", "m6", "payments", "support"),
			contextRecord(store.KindGoal, "a", "g1", "payments", "support"),
			// A purpose that is a prefix or a substring of another matches
			// nothing but itself.
			contextRecord(store.KindMemory, "a", "m7", "payments", "support-extended"),
		} {
			if err := tx.PutContextRecord(ctx, r); err != nil {
				return err
			}
		}
		return nil
	})
	view(t, s, func(ctx context.Context, tx store.ReadTx) error {
		for _, tc := range []struct {
			kind, tenant, compartment, purpose string
			want                               []string
		}{
			{store.KindMemory, "a", "payments", "support", []string{"m1", "m3"}},
			{store.KindMemory, "a", "payments", "audit", []string{"m1"}},
			{store.KindMemory, "a", "payments", "marketing", []string{"m2"}},
			{store.KindMemory, "a", "payments", "sup", nil},
			{store.KindMemory, "a", "hr", "support", []string{"m4"}},
			{store.KindMemory, "a", "payments", "", []string{"m1", "m2", "m3", "m5", "m7"}},
			{store.KindMemory, "b", "payments", "support", []string{"m6"}},
			{store.KindMemory, "c", "payments", "support", nil},
			{store.KindGoal, "a", "payments", "support", []string{"g1"}},
			{store.KindMemory, "a", "", "support", []string{"m1", "m3", "m4"}},
		} {
			got, err := tx.ListContextRecords(ctx, tc.kind, tc.tenant, tc.compartment, tc.purpose)
			if err != nil {
				t.Fatal(err)
			}
			if want := append([]string{}, tc.want...); !slices.Equal(ids(got), want) {
				t.Errorf("List(%s, %s, %q, %q) = %v, want %v", tc.kind, tc.tenant, tc.compartment, tc.purpose, ids(got), want)
			}
		}
		return nil
	})
}

// testCertificates: certificates are one gateway-wide keyspace, listed by
// id (optionally of one issuer), replaced by a put of the same id, durable.
func testCertificates(t *testing.T, o Opener) {
	s := o.Open(t)
	cert := func(id, issuer, doc string) store.Certificate {
		return store.Certificate{ID: id, Issuer: issuer, Subject: "model-1", Doc: []byte(doc), CreatedAt: epoch, UpdatedAt: epoch}
	}
	mustUpdate(t, s, func(ctx context.Context, tx store.Tx) error {
		for _, c := range []store.Certificate{cert("c2", "lab", `{"v":1}`), cert("c1", "evals", `{"v":1}`), cert("c3", "lab", `{"v":1}`)} {
			if err := tx.PutCertificate(ctx, c); err != nil {
				return err
			}
		}
		return nil
	})
	mustUpdate(t, s, func(ctx context.Context, tx store.Tx) error {
		c := cert("c2", "lab", `{"v":2}`)
		c.UpdatedAt = epoch.Add(time.Minute)
		return tx.PutCertificate(ctx, c)
	})
	s = reopen(t, o, s)
	view(t, s, func(ctx context.Context, tx store.ReadTx) error {
		all, err := tx.ListCertificates(ctx, "")
		var got []string
		for _, c := range all {
			got = append(got, c.ID+"/"+c.Issuer+"/"+string(c.Doc))
		}
		if err != nil || !slices.Equal(got, []string{`c1/evals/{"v":1}`, `c2/lab/{"v":2}`, `c3/lab/{"v":1}`}) {
			t.Errorf("ListCertificates = %v, %v", got, err)
		}
		lab, _ := tx.ListCertificates(ctx, "lab")
		if len(lab) != 2 || lab[0].ID != "c2" || lab[1].ID != "c3" {
			t.Errorf("ListCertificates(lab) = %+v", lab)
		}
		c, err := tx.GetCertificate(ctx, "c2")
		if err != nil || c.Subject != "model-1" || !c.CreatedAt.Equal(epoch) || !c.UpdatedAt.Equal(epoch.Add(time.Minute)) {
			t.Errorf("GetCertificate = %+v, %v", c, err)
		}
		if _, err := tx.GetCertificate(ctx, "nope"); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("missing certificate: %v", err)
		}
		return nil
	})
}
