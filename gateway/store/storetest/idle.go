package storetest

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/praxa/praxa/gateway/store"
)

// testIdleMissions: IdleMissions lists the active missions of one
// definition, of every tenant, last changed before a time, by update time
// then id, a page at a time from a cursor; missions of other definitions,
// ended ones and recent ones are left out, and so is a mission once it
// ended (the run sweeper's compare-and-set).
func testIdleMissions(t *testing.T, o Opener) {
	s := o.Open(t)
	run := func(tenant, id string, updated time.Duration, status string) store.Mission {
		m := mission(tenant, id, "run-"+id)
		m.DefinitionID, m.State, m.Status, m.UpdatedAt = "proxy_default", "running", status, epoch.Add(updated)
		return m
	}
	other := mission("a", "wf_other", "run-other") // another definition, idle at epoch
	ms := []store.Mission{
		run("a", "wf_3", time.Minute, "active"),
		run("b", "wf_1", time.Minute, "active"), // same time as wf_3: by id
		run("a", "wf_0", 0, "active"),
		run("a", "wf_done", 0, "completed"),
		run("b", "wf_cancelled", 0, "cancelled"),
		run("a", "wf_recent", time.Hour, "active"),
		run("b", "wf_2", 2*time.Minute, "active"),
		other,
	}
	mustUpdate(t, s, func(ctx context.Context, tx store.Tx) error { return insertMissions(ctx, tx, ms...) })
	before := epoch.Add(30 * time.Minute)
	want := []string{"a/wf_0", "b/wf_1", "a/wf_3", "b/wf_2"}
	view(t, s, func(ctx context.Context, tx store.ReadTx) error {
		got, err := tx.IdleMissions(ctx, "proxy_default", before, store.MissionCursor{}, 10)
		if err != nil {
			t.Fatalf("IdleMissions: %v", err)
		}
		if !slices.Equal(tenantIDs(got), want) {
			t.Errorf("IdleMissions = %v, want %v", tenantIDs(got), want)
		}
		if len(got) > 0 && (got[0].State != "running" || got[0].Version != 1 || string(got[0].Doc) != `{"context":{}}` || !got[0].UpdatedAt.Equal(epoch)) {
			t.Errorf("first idle mission = %+v", got[0])
		}
		// Page by page, two at a time, from the last of each page.
		var paged []string
		cur := store.MissionCursor{}
		for range 4 {
			page, err := tx.IdleMissions(ctx, "proxy_default", before, cur, 2)
			if err != nil {
				t.Fatalf("IdleMissions page: %v", err)
			}
			paged = append(paged, tenantIDs(page)...)
			if len(page) < 2 {
				break
			}
			last := page[len(page)-1]
			cur = store.MissionCursor{UpdatedAt: last.UpdatedAt, ID: last.ID}
		}
		if !slices.Equal(paged, want) {
			t.Errorf("paged = %v, want %v", paged, want)
		}
		if got, _ := tx.IdleMissions(ctx, "proxy_default", epoch, store.MissionCursor{}, 10); len(got) != 0 {
			t.Errorf("none changed before epoch: %v", tenantIDs(got))
		}
		if got, _ := tx.IdleMissions(ctx, "deploy", before, store.MissionCursor{}, 10); !slices.Equal(tenantIDs(got), []string{"a/wf_other"}) {
			t.Errorf("IdleMissions(deploy) = %v", tenantIDs(got))
		}
		return nil
	})
	// A mission that ends (as the sweeper expires it) leaves the list; one
	// that moves is listed by its new update time; a mission inserted in
	// the same transaction is listed there.
	mustUpdate(t, s, func(ctx context.Context, tx store.Tx) error {
		m, err := tx.GetMission(ctx, "a", "wf_0")
		if err != nil {
			return err
		}
		m.State, m.Status, m.Version, m.UpdatedAt = "expired", "expired", 2, before
		if err := tx.UpdateMission(ctx, m, 1); err != nil {
			return err
		}
		m, err = tx.GetMission(ctx, "b", "wf_2")
		if err != nil {
			return err
		}
		m.Version, m.UpdatedAt = 2, epoch.Add(-time.Minute)
		if err := tx.UpdateMission(ctx, m, 1); err != nil {
			return err
		}
		if err := tx.InsertMission(ctx, run("c", "wf_new", 5*time.Minute, "active")); err != nil {
			return err
		}
		got, err := tx.IdleMissions(ctx, "proxy_default", before, store.MissionCursor{}, 10)
		if err != nil {
			return err
		}
		if want := []string{"b/wf_2", "b/wf_1", "a/wf_3", "c/wf_new"}; !slices.Equal(tenantIDs(got), want) {
			t.Errorf("in the writing transaction: IdleMissions = %v, want %v", tenantIDs(got), want)
		}
		return nil
	})
	view(t, s, func(ctx context.Context, tx store.ReadTx) error {
		got, err := tx.IdleMissions(ctx, "proxy_default", before, store.MissionCursor{}, 10)
		if err != nil {
			t.Fatalf("IdleMissions: %v", err)
		}
		if want := []string{"b/wf_2", "b/wf_1", "a/wf_3", "c/wf_new"}; !slices.Equal(tenantIDs(got), want) {
			t.Errorf("after the commit: IdleMissions = %v, want %v", tenantIDs(got), want)
		}
		if got, _ := tx.IdleMissions(ctx, "proxy_default", before, store.MissionCursor{}, 1); len(got) != 1 {
			t.Errorf("limit 1: %d missions", len(got))
		}
		return nil
	})
}

// testIdleMissionsMany: a page of IdleMissions is the oldest limit of
// many, and paging visits every one once.
func testIdleMissionsMany(t *testing.T, o Opener) {
	s := o.Open(t)
	const n = 250
	mustUpdate(t, s, func(ctx context.Context, tx store.Tx) error {
		for i := range n {
			m := mission("a", fmt.Sprintf("wf_%03d", i), fmt.Sprintf("run-%03d", i))
			// Ten missions share each update time.
			m.DefinitionID, m.UpdatedAt = "proxy_default", epoch.Add(time.Duration(i/10)*time.Second)
			if err := tx.InsertMission(ctx, m); err != nil {
				return err
			}
		}
		return nil
	})
	view(t, s, func(ctx context.Context, tx store.ReadTx) error {
		seen := 0
		cur := store.MissionCursor{}
		for {
			page, err := tx.IdleMissions(ctx, "proxy_default", epoch.Add(time.Hour), cur, 100)
			if err != nil {
				t.Fatalf("IdleMissions: %v", err)
			}
			for _, m := range page {
				if want := fmt.Sprintf("wf_%03d", seen); m.ID != want {
					t.Fatalf("mission %d is %s, want %s", seen, m.ID, want)
				}
				seen++
			}
			if len(page) < 100 {
				break
			}
			last := page[len(page)-1]
			cur = store.MissionCursor{UpdatedAt: last.UpdatedAt, ID: last.ID}
		}
		if seen != n {
			t.Errorf("paging visited %d missions, want %d", seen, n)
		}
		return nil
	})
}

// tenantIDs names each mission of ms as tenant/id, in order.
func tenantIDs(ms []store.Mission) []string {
	return each(ms, func(m store.Mission) string { return m.Tenant + "/" + m.ID })
}
