package storetest

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/praxa/praxa/gateway/store"
)

// testExpiredWaits: a mission's WaitDeadline is stored by InsertMission
// and UpdateMission and read back; ExpiredWaits lists the active
// missions, of every tenant, whose deadline is set and before now, by
// deadline then id; a mission whose wait ended (deadline cleared) or that
// ended is left out.
func testExpiredWaits(t *testing.T, o Opener) {
	s := o.Open(t)
	parked := func(tenant, id string, deadline time.Duration, status string) store.Mission {
		m := mission(tenant, id, "run-"+id)
		m.Status = status
		if deadline >= 0 {
			m.WaitDeadline = epoch.Add(deadline)
		}
		return m
	}
	ms := []store.Mission{
		parked("a", "wf_2", 2*time.Minute, "active"),
		parked("b", "wf_1", time.Minute, "active"),
		parked("a", "wf_0", time.Minute, "active"), // same deadline as wf_1: by id
		parked("a", "wf_later", time.Hour, "active"),
		parked("b", "wf_none", -1, "active"),
		parked("a", "wf_done", 0, "cancelled"),
		parked("b", "wf_cleared", 0, "active"),
	}
	mustUpdate(t, s, func(ctx context.Context, tx store.Tx) error {
		if err := insertMissions(ctx, tx, ms...); err != nil {
			return err
		}
		// The wait of wf_cleared ends: UpdateMission clears its deadline.
		m, err := tx.GetMission(ctx, "b", "wf_cleared")
		if err != nil {
			return err
		}
		if !m.WaitDeadline.Equal(epoch) {
			t.Errorf("stored WaitDeadline = %v, want %v", m.WaitDeadline, epoch)
		}
		m.WaitDeadline, m.Version = time.Time{}, m.Version+1
		return tx.UpdateMission(ctx, m, m.Version-1)
	})
	now := epoch.Add(30 * time.Minute)
	view(t, s, func(ctx context.Context, tx store.ReadTx) error {
		got, err := tx.ExpiredWaits(ctx, now, 10)
		if err != nil {
			t.Fatalf("ExpiredWaits: %v", err)
		}
		if want := []string{"a/wf_0", "b/wf_1", "a/wf_2"}; !slices.Equal(tenantIDs(got), want) {
			t.Errorf("ExpiredWaits = %v, want %v", tenantIDs(got), want)
		}
		if len(got) > 0 && !got[0].WaitDeadline.Equal(epoch.Add(time.Minute)) {
			t.Errorf("listed WaitDeadline = %v", got[0].WaitDeadline)
		}
		if got, _ := tx.ExpiredWaits(ctx, now, 1); len(got) != 1 {
			t.Errorf("ExpiredWaits limit 1 = %v", tenantIDs(got))
		}
		m, err := tx.GetMission(ctx, "b", "wf_cleared")
		if err != nil || !m.WaitDeadline.IsZero() {
			t.Errorf("after UpdateMission: WaitDeadline = %v, %v; want zero", m.WaitDeadline, err)
		}
		return nil
	})
	// A parked mission's deadline moves with UpdateMission too.
	mustUpdate(t, s, func(ctx context.Context, tx store.Tx) error {
		m, err := tx.GetMission(ctx, "a", "wf_later")
		if err != nil {
			return err
		}
		m.WaitDeadline, m.Version = epoch.Add(10*time.Minute), m.Version+1
		return tx.UpdateMission(ctx, m, m.Version-1)
	})
	view(t, s, func(ctx context.Context, tx store.ReadTx) error {
		got, _ := tx.ExpiredWaits(ctx, now, 10)
		if want := []string{"a/wf_0", "b/wf_1", "a/wf_2", "a/wf_later"}; !slices.Equal(tenantIDs(got), want) {
			t.Errorf("after moving a deadline: ExpiredWaits = %v, want %v", tenantIDs(got), want)
		}
		return nil
	})
}
