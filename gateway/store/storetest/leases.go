package storetest

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/praxa/praxa/gateway/store"
)

func lease(tenant, wf string, version int64, owner string) store.MoveLease {
	return store.MoveLease{Tenant: tenant, WorkflowID: wf, ExpectedVersion: version, Transition: "deploy", Fingerprint: "fp-" + owner,
		Namespace: "ns", Key: "key-0000000000000001", Operation: "praxecCommand", KeyFingerprint: "kfp", Owner: owner,
		CreatedAt: epoch, Deadline: epoch.Add(time.Minute)}
}

// testMoveLeases: a lease is inserted once per workflow version (expired
// or not), read back whole only by its tenant, and deleted only by its
// owner.
func testMoveLeases(t *testing.T, o Opener) {
	s := o.Open(t)
	want := lease("a", "wf_1", 3, "p1/r1")
	mustUpdate(t, s, func(ctx context.Context, tx store.Tx) error { return tx.InsertMoveLease(ctx, want) })
	view(t, s, func(ctx context.Context, tx store.ReadTx) error {
		got, err := tx.GetMoveLease(ctx, "a", "wf_1", 3)
		if err != nil {
			t.Fatalf("GetMoveLease: %v", err)
		}
		if !got.CreatedAt.Equal(want.CreatedAt) || !got.Deadline.Equal(want.Deadline) {
			t.Errorf("times = %v, %v; want %v, %v", got.CreatedAt, got.Deadline, want.CreatedAt, want.Deadline)
		}
		got.CreatedAt, got.Deadline = want.CreatedAt, want.Deadline
		if got != want {
			t.Errorf("GetMoveLease = %+v, want %+v", got, want)
		}
		if _, err := tx.GetMoveLease(ctx, "b", "wf_1", 3); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("another tenant's lease: %v, want ErrNotFound", err)
		}
		if _, err := tx.GetMoveLease(ctx, "a", "wf_1", 4); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("another version: %v, want ErrNotFound", err)
		}
		return nil
	})
	// A second lease on the version is refused, even once the first has
	// expired: an expired lease is resolved, never replaced.
	late := lease("a", "wf_1", 3, "p2/r1")
	late.CreatedAt, late.Deadline = epoch.Add(time.Hour), epoch.Add(2*time.Hour)
	if err := update(t, s, func(ctx context.Context, tx store.Tx) error { return tx.InsertMoveLease(ctx, late) }); !errors.Is(err, store.ErrExists) {
		t.Errorf("second lease on a version: %v, want ErrExists", err)
	}
	// The next version is another lease.
	mustUpdate(t, s, func(ctx context.Context, tx store.Tx) error {
		return tx.InsertMoveLease(ctx, lease("a", "wf_1", 4, "p2/r1"))
	})
	if err := update(t, s, func(ctx context.Context, tx store.Tx) error { return tx.DeleteMoveLease(ctx, "a", "wf_1", 3, "p2/r1") }); !errors.Is(err, store.ErrConflict) {
		t.Errorf("delete by another owner: %v, want ErrConflict", err)
	}
	if err := update(t, s, func(ctx context.Context, tx store.Tx) error { return tx.DeleteMoveLease(ctx, "b", "wf_1", 3, "p1/r1") }); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("delete by another tenant: %v, want ErrNotFound", err)
	}
	// A delete rolled back with its transaction leaves the lease.
	if err := update(t, s, func(ctx context.Context, tx store.Tx) error {
		if err := tx.DeleteMoveLease(ctx, "a", "wf_1", 3, "p1/r1"); err != nil {
			return err
		}
		if _, err := tx.GetMoveLease(ctx, "a", "wf_1", 3); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("a deleted lease is still read in its transaction: %v", err)
		}
		return errBoom
	}); !errors.Is(err, errBoom) {
		t.Fatalf("Update = %v", err)
	}
	view(t, s, func(ctx context.Context, tx store.ReadTx) error {
		if _, err := tx.GetMoveLease(ctx, "a", "wf_1", 3); err != nil {
			t.Errorf("a rolled back delete removed the lease: %v", err)
		}
		return nil
	})
	mustUpdate(t, s, func(ctx context.Context, tx store.Tx) error { return tx.DeleteMoveLease(ctx, "a", "wf_1", 3, "p1/r1") })
	if err := update(t, s, func(ctx context.Context, tx store.Tx) error { return tx.DeleteMoveLease(ctx, "a", "wf_1", 3, "p1/r1") }); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("second delete: %v, want ErrNotFound", err)
	}
	// Deleted, the version can be leased again; the lease is durable.
	mustUpdate(t, s, func(ctx context.Context, tx store.Tx) error { return tx.InsertMoveLease(ctx, late) })
	if err := s.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	s = o.Open(t)
	view(t, s, func(ctx context.Context, tx store.ReadTx) error {
		if got, err := tx.GetMoveLease(ctx, "a", "wf_1", 3); err != nil || got.Owner != "p2/r1" {
			t.Errorf("after reopen: %+v, %v", got, err)
		}
		if got, err := tx.GetMoveLease(ctx, "a", "wf_1", 4); err != nil || got.Owner != "p2/r1" {
			t.Errorf("after reopen: %+v, %v", got, err)
		}
		return nil
	})
}

// testMoveLeaseRace: many transactions try to lease one version at once;
// exactly one wins.
func testMoveLeaseRace(t *testing.T, o Opener) {
	s := o.Open(t)
	const n = 32
	var wins, lost atomic.Int32
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			err := s.Update(context.Background(), func(ctx context.Context, tx store.Tx) error {
				if _, err := tx.GetMoveLease(ctx, "a", "wf_race", 1); err == nil {
					return store.ErrExists
				}
				return tx.InsertMoveLease(ctx, lease("a", "wf_race", 1, string(rune('A'+i))))
			})
			switch {
			case err == nil:
				wins.Add(1)
			case errors.Is(err, store.ErrExists):
				lost.Add(1)
			default:
				t.Errorf("Update: %v", err)
			}
		}()
	}
	close(start)
	wg.Wait()
	if wins.Load() != 1 || lost.Load() != n-1 {
		t.Errorf("winners = %d, losers = %d; want 1 and %d", wins.Load(), lost.Load(), n-1)
	}
}

// testSubmitRefusal: a submit record keeps the status of a recorded
// refusal (an outcome-unknown); a success reads back status 0.
func testSubmitRefusal(t *testing.T, o Opener) {
	s := o.Open(t)
	ok := store.SubmitRecord{Tenant: "a", WorkflowID: "wf_1", ExpectedVersion: 1, Fingerprint: "fp", Response: []byte(`{"ok":true}`), CreatedAt: epoch}
	unknown := store.SubmitRecord{Tenant: "a", WorkflowID: "wf_1", ExpectedVersion: 2, Fingerprint: "fp", Status: 504,
		Response: []byte(`{"error":{"code":"outcome-unknown"}}`), CreatedAt: epoch}
	mustUpdate(t, s, func(ctx context.Context, tx store.Tx) error {
		if err := tx.PutSubmit(ctx, ok); err != nil {
			return err
		}
		return tx.PutSubmit(ctx, unknown)
	})
	view(t, s, func(ctx context.Context, tx store.ReadTx) error {
		if got, err := tx.GetSubmit(ctx, "a", "wf_1", 1); err != nil || got.Status != 0 {
			t.Errorf("success: %+v, %v", got, err)
		}
		if got, err := tx.GetSubmit(ctx, "a", "wf_1", 2); err != nil || got.Status != 504 || string(got.Response) != string(unknown.Response) {
			t.Errorf("refusal: %+v, %v", got, err)
		}
		return nil
	})
}
