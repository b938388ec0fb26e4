package storetest

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/praxa/praxa/gateway/store"
)

func mission(tenant, id, runID string) store.Mission {
	return store.Mission{Tenant: tenant, ID: id, RunID: runID, DefinitionID: "deploy", DefinitionVersion: 1,
		State: "lint", Version: 1, Status: "active", Doc: []byte(`{"context":{}}`), CreatedAt: epoch, UpdatedAt: epoch}
}

// insertMissions inserts ms in tx, in order, and stops at the first
// failure.
func insertMissions(ctx context.Context, tx store.Tx, ms ...store.Mission) error {
	for _, m := range ms {
		if err := tx.InsertMission(ctx, m); err != nil {
			return err
		}
	}
	return nil
}

func testMissions(t *testing.T, o Opener) {
	s := o.Open(t)
	m := mission("a", "wf_1", "run-1")
	mustUpdate(t, s, func(ctx context.Context, tx store.Tx) error { return tx.InsertMission(ctx, m) })
	dupID := mission("a", "wf_1", "run-2")
	wantRefused(t, s, "duplicate id", store.ErrExists, func(ctx context.Context, tx store.Tx) error {
		return tx.InsertMission(ctx, dupID)
	})
	dupRun := mission("a", "wf_2", "run-1")
	wantRefused(t, s, "duplicate runId in one tenant", store.ErrExists, func(ctx context.Context, tx store.Tx) error {
		return tx.InsertMission(ctx, dupRun)
	})
	otherTenant := mission("b", "wf_3", "run-1")
	mustUpdate(t, s, func(ctx context.Context, tx store.Tx) error { return tx.InsertMission(ctx, otherTenant) })
	view(t, s, func(ctx context.Context, tx store.ReadTx) error {
		got, err := tx.GetMission(ctx, "a", "wf_1")
		if err != nil || got.RunID != "run-1" || string(got.Doc) != `{"context":{}}` || got.Version != 1 {
			t.Errorf("GetMission = %+v, %v", got, err)
		}
		if _, err := tx.GetMission(ctx, "b", "wf_1"); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("another tenant's mission: %v, want ErrNotFound", err)
		}
		byRun, err := tx.GetMissionByRunID(ctx, "b", "run-1")
		if err != nil || byRun.ID != "wf_3" {
			t.Errorf("GetMissionByRunID(b) = %+v, %v", byRun, err)
		}
		return nil
	})
	next := m
	next.State, next.Version, next.Doc, next.UpdatedAt = "test", 2, []byte(`{"context":{"a":1}}`), epoch.Add(time.Second)
	mustUpdate(t, s, func(ctx context.Context, tx store.Tx) error { return tx.UpdateMission(ctx, next, 1) })
	stale := m
	stale.State, stale.Version = "build", 2
	wantRefused(t, s, "stale update", store.ErrConflict, func(ctx context.Context, tx store.Tx) error {
		return tx.UpdateMission(ctx, stale, 1)
	})
	foreign := next
	foreign.Tenant = "b"
	wantRefused(t, s, "another tenant's update", store.ErrNotFound, func(ctx context.Context, tx store.Tx) error {
		return tx.UpdateMission(ctx, foreign, 2)
	})
	view(t, s, func(ctx context.Context, tx store.ReadTx) error {
		got, _ := tx.GetMission(ctx, "a", "wf_1")
		if got.State != "test" || got.Version != 2 {
			t.Errorf("after updates: %+v", got)
		}
		return nil
	})
}

// testMissionCompareAndSet races transitions from one version: exactly one
// may win, whichever goroutine (or, with a shared database, process) it is.
func testMissionCompareAndSet(t *testing.T, o Opener) {
	s := o.Open(t)
	mustUpdate(t, s, func(ctx context.Context, tx store.Tx) error {
		return tx.InsertMission(ctx, mission("a", "wf_cas", "run-cas"))
	})
	raceOnce(t, s, 16, store.ErrConflict, func(ctx context.Context, tx store.Tx, i int) error {
		m, err := tx.GetMission(ctx, "a", "wf_cas")
		if err != nil {
			return err
		}
		if m.Version != 1 {
			return store.ErrConflict
		}
		m.State, m.Version = fmt.Sprintf("s%d", i), 2
		return tx.UpdateMission(ctx, m, 1)
	})
}

// testDeleteMission: a mission is deleted only at the version expected
// and only by its tenant, atomically with the rest of its transaction;
// its runId is free again afterwards, within the transaction and after.
func testDeleteMission(t *testing.T, o Opener) {
	s := o.Open(t)
	starting := mission("a", "wf_start", "run-start")
	starting.Version, starting.Status = 0, "starting"
	mustUpdate(t, s, func(ctx context.Context, tx store.Tx) error { return tx.InsertMission(ctx, starting) })
	for _, c := range []struct {
		tenant  string
		version int64
		want    error
	}{{"b", 0, store.ErrNotFound}, {"a", 1, store.ErrConflict}} {
		if err := update(t, s, func(ctx context.Context, tx store.Tx) error {
			return tx.DeleteMission(ctx, c.tenant, "wf_start", c.version)
		}); !errors.Is(err, c.want) {
			t.Errorf("DeleteMission(%s, version %d) = %v, want %v", c.tenant, c.version, err, c.want)
		}
	}
	// A failed transaction deletes nothing.
	failed := errors.New("rolled back")
	if err := update(t, s, func(ctx context.Context, tx store.Tx) error {
		if err := tx.DeleteMission(ctx, "a", "wf_start", 0); err != nil {
			return err
		}
		return failed
	}); !errors.Is(err, failed) {
		t.Fatalf("Update = %v", err)
	}
	view(t, s, func(ctx context.Context, tx store.ReadTx) error {
		if m, err := tx.GetMissionByRunID(ctx, "a", "run-start"); err != nil || m.Status != "starting" {
			t.Errorf("after a rolled-back delete: %+v, %v", m, err)
		}
		return nil
	})
	mustUpdate(t, s, func(ctx context.Context, tx store.Tx) error {
		if err := tx.DeleteMission(ctx, "a", "wf_start", 0); err != nil {
			return err
		}
		if _, err := tx.GetMissionByRunID(ctx, "a", "run-start"); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("the runId of a deleted mission, in its transaction: %v, want ErrNotFound", err)
		}
		if err := tx.DeleteMission(ctx, "a", "wf_start", 0); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("a second delete: %v, want ErrNotFound", err)
		}
		return nil
	})
	view(t, s, func(ctx context.Context, tx store.ReadTx) error {
		if _, err := tx.GetMission(ctx, "a", "wf_start"); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("a deleted mission: %v, want ErrNotFound", err)
		}
		if list, err := tx.ListMissions(ctx, "a", store.MissionFilter{}, 10); err != nil || len(list) != 0 {
			t.Errorf("ListMissions after the delete = %+v, %v", list, err)
		}
		return nil
	})
	// The runId is free again.
	mustUpdate(t, s, func(ctx context.Context, tx store.Tx) error {
		return tx.InsertMission(ctx, mission("a", "wf_again", "run-start"))
	})
}

func testSubmits(t *testing.T, o Opener) {
	s := o.Open(t)
	r := store.SubmitRecord{Tenant: "a", WorkflowID: "wf_1", ExpectedVersion: 4, Fingerprint: "fp", Response: []byte(`{"ok":1}`), CreatedAt: epoch}
	mustUpdate(t, s, func(ctx context.Context, tx store.Tx) error { return tx.PutSubmit(ctx, r) })
	wantRefused(t, s, "second submit at one version", store.ErrExists, func(ctx context.Context, tx store.Tx) error {
		return tx.PutSubmit(ctx, r)
	})
	view(t, s, func(ctx context.Context, tx store.ReadTx) error {
		got, err := tx.GetSubmit(ctx, "a", "wf_1", 4)
		if err != nil || got.Fingerprint != "fp" || string(got.Response) != `{"ok":1}` {
			t.Errorf("GetSubmit = %+v, %v", got, err)
		}
		if _, err := tx.GetSubmit(ctx, "b", "wf_1", 4); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("another tenant's submit: %v", err)
		}
		if _, err := tx.GetSubmit(ctx, "a", "wf_1", 5); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("missing submit: %v", err)
		}
		return nil
	})
}

func testApprovals(t *testing.T, o Opener) {
	s := o.Open(t)
	a := store.Approval{Tenant: "a", ID: "apr_1", WorkflowID: "wf_1", RunID: "run-1", Transition: "approve", Queue: "releases",
		Status: "pending", RequestedBy: "agent", Doc: []byte(`{}`), CreatedAt: epoch}
	b := a
	b.ID, b.CreatedAt = "apr_2", epoch.Add(time.Second)
	mustUpdate(t, s, func(ctx context.Context, tx store.Tx) error {
		if err := tx.InsertApproval(ctx, a); err != nil {
			return err
		}
		return tx.InsertApproval(ctx, b)
	})
	if err := update(t, s, func(ctx context.Context, tx store.Tx) error { return tx.InsertApproval(ctx, a) }); !errors.Is(err, store.ErrExists) {
		t.Errorf("duplicate approval: %v", err)
	}
	done := a
	done.Status, done.ResolvedBy, done.ResolvedAt = "approved", "ops", epoch.Add(time.Minute)
	mustUpdate(t, s, func(ctx context.Context, tx store.Tx) error { return tx.UpdateApproval(ctx, done, "pending") })
	wantRefused(t, s, "resolving twice", store.ErrConflict, func(ctx context.Context, tx store.Tx) error {
		return tx.UpdateApproval(ctx, done, "pending")
	})
	view(t, s, func(ctx context.Context, tx store.ReadTx) error {
		pending, err := tx.ListApprovals(ctx, "a", "pending", 10)
		if err != nil || len(pending) != 1 || pending[0].ID != "apr_2" {
			t.Errorf("pending = %+v, %v", pending, err)
		}
		all, _ := tx.ListApprovals(ctx, "a", "", 10)
		if len(all) != 2 || all[0].ID != "apr_1" {
			t.Errorf("all = %+v", all)
		}
		if none, _ := tx.ListApprovals(ctx, "b", "", 10); len(none) != 0 {
			t.Errorf("another tenant sees %d approvals", len(none))
		}
		got, err := tx.GetApproval(ctx, "a", "apr_1")
		if err != nil || got.Status != "approved" || got.ResolvedBy != "ops" || !got.ResolvedAt.Equal(done.ResolvedAt) {
			t.Errorf("GetApproval = %+v, %v", got, err)
		}
		return nil
	})
}
