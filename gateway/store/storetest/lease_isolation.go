package storetest

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/praxa/praxa/gateway/store"
)

// The interleavings below are the ones a gateway meets when two replicas
// share one store: a transaction that reads a workflow in order to write
// (a move's lease check and compare-and-set, taking a move lease) must not
// have what it read changed under it by another transaction on the same
// workflow before it commits. Each pauses one transaction between its
// read and its write while the other runs; the pause is bounded (a driver
// that serializes the two makes the other wait for it), so the checks
// never depend on timing, only a driver that does not serialize fails.

// pause is how long a transaction of these tests waits, between its read
// and its write, for the other to finish.
const pause = 300 * time.Millisecond

// errMoved stops a lease taker that finds the version moved.
var errMoved = errors.New("storetest: the version moved")

// waitOrPause waits for ch, at most pause.
func waitOrPause(ch <-chan struct{}) {
	select {
	case <-ch:
	case <-time.After(pause):
	}
}

// noMoveLease checks, in tx, that no move lease stands on version of the
// workflow wf_iso of tenant a: store.ErrExists when one does, the read's
// error when it fails.
func noMoveLease(ctx context.Context, tx store.ReadTx, version int64) error {
	if _, err := tx.GetMoveLease(ctx, "a", "wf_iso", version); err == nil {
		return store.ErrExists
	} else if !errors.Is(err, store.ErrNotFound) {
		return err
	}
	return nil
}

// testLeaseCheckSerialized: a move checks that no lease stands on its
// version, then compare-and-sets the workflow; a lease taker reads the
// workflow at that version and inserts its lease. Whichever goes first,
// the other must see it: never both a lease committed on version 1 and
// the move from version 1 (the lease holder would call outside on a
// version that moved).
func testLeaseCheckSerialized(t *testing.T, o Opener) {
	s := o.Open(t)
	m := mission("a", "wf_iso", "run-iso")
	mustUpdate(t, s, func(ctx context.Context, tx store.Tx) error { return tx.InsertMission(ctx, m) })
	checked, leased := make(chan struct{}), make(chan struct{})
	moveErr := make(chan error, 1)
	go func() {
		moveErr <- s.Update(context.Background(), func(ctx context.Context, tx store.Tx) error {
			got, err := tx.GetMission(ctx, "a", "wf_iso")
			if err != nil {
				return err
			}
			if err := noMoveLease(ctx, tx, got.Version); err != nil {
				return err // ErrExists: refused, a lease stands
			}
			close(checked)
			waitOrPause(leased)
			got.Version++
			return tx.UpdateMission(ctx, got, got.Version-1)
		})
	}()
	<-checked
	leaseErr := s.Update(context.Background(), func(ctx context.Context, tx store.Tx) error {
		if err := noMoveLease(ctx, tx, 1); err != nil {
			return err
		}
		got, err := tx.GetMission(ctx, "a", "wf_iso")
		if err != nil {
			return err
		}
		if got.Version != 1 {
			return errMoved
		}
		return tx.InsertMoveLease(ctx, lease("a", "wf_iso", 1, "replica-b"))
	})
	close(leased)
	mErr := <-moveErr
	if leaseErr == nil && mErr == nil {
		t.Fatalf("a lease was taken on version 1 and the workflow moved from version 1 anyway: the lease check of the move did not serialize with the lease")
	}
	if leaseErr != nil && !errors.Is(leaseErr, errMoved) && !errors.Is(leaseErr, store.ErrExists) {
		t.Errorf("lease: %v", leaseErr)
	}
	if mErr != nil && !errors.Is(mErr, store.ErrExists) && !errors.Is(mErr, store.ErrConflict) {
		t.Errorf("move: %v", mErr)
	}
}

// testLeaseTakeSerialized: a lease taker reads the workflow at version 1
// (no lease yet seen), and the move holding the lease on version 1
// completes meanwhile (it moves the workflow and deletes its lease in one
// transaction). The taker must then either see the lease, or see the
// version moved: never insert a second lease on version 1 (whose holder
// would call outside again for a move that completed).
func testLeaseTakeSerialized(t *testing.T, o Opener) {
	s := o.Open(t)
	m := mission("a", "wf_iso", "run-iso")
	mustUpdate(t, s, func(ctx context.Context, tx store.Tx) error {
		if err := tx.InsertMission(ctx, m); err != nil {
			return err
		}
		return tx.InsertMoveLease(ctx, lease("a", "wf_iso", 1, "replica-a"))
	})
	read, completed := make(chan struct{}), make(chan struct{})
	takeErr := make(chan error, 1)
	go func() {
		takeErr <- s.Update(context.Background(), func(ctx context.Context, tx store.Tx) error {
			got, err := tx.GetMission(ctx, "a", "wf_iso")
			if err != nil {
				return err
			}
			close(read)
			waitOrPause(completed)
			if got.Version != 1 {
				return errMoved
			}
			if err := noMoveLease(ctx, tx, 1); err != nil {
				return err // ErrExists: busy, the holder is still calling
			}
			return tx.InsertMoveLease(ctx, lease("a", "wf_iso", 1, "replica-b"))
		})
	}()
	<-read
	err := s.Update(context.Background(), func(ctx context.Context, tx store.Tx) error {
		got, err := tx.GetMission(ctx, "a", "wf_iso")
		if err != nil {
			return err
		}
		got.Version++
		if err := tx.UpdateMission(ctx, got, 1); err != nil {
			return err
		}
		return tx.DeleteMoveLease(ctx, "a", "wf_iso", 1, "replica-a")
	})
	close(completed)
	if err != nil {
		t.Fatalf("the completing move: %v", err)
	}
	if err := <-takeErr; err == nil {
		t.Fatalf("a second lease was taken on version 1 after the move holding the first completed")
	} else if !errors.Is(err, store.ErrExists) && !errors.Is(err, errMoved) {
		t.Errorf("lease: %v", err)
	}
	view(t, s, func(ctx context.Context, tx store.ReadTx) error {
		if l, err := tx.GetMoveLease(ctx, "a", "wf_iso", 1); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("lease on version 1 after the move: %+v, %v", l, err)
		}
		return nil
	})
}

// testStartLeaseExpiry: a resolved start lease keeps its expiry; the
// idempotency sweep deletes the resolved leases that expired with it and
// keeps those without one (runId records), those not yet expired and the
// held ones; the ref can then be leased again.
func testStartLeaseExpiry(t *testing.T, o Opener) {
	s := o.Open(t)
	mustUpdate(t, s, func(ctx context.Context, tx store.Tx) error {
		for _, ref := range []string{"key:ns:k1", "key:ns:k2", "run:r1", "key:ns:held"} {
			if err := tx.InsertStartLease(ctx, startLease("a", ref, "p1")); err != nil {
				return err
			}
		}
		if err := tx.ResolveStartLease(ctx, "a", "key:ns:k1", "p1", 504, []byte("{}"), epoch.Add(time.Hour)); err != nil {
			return err
		}
		if err := tx.ResolveStartLease(ctx, "a", "key:ns:k2", "p1", 504, []byte("{}"), epoch.Add(3*time.Hour)); err != nil {
			return err
		}
		if err := tx.ResolveStartLease(ctx, "a", "run:r1", "p1", 504, []byte("{}"), time.Time{}); err != nil {
			return err
		}
		return tx.InsertIdempotency(ctx, record("ns", "k1", "fp")) // expires at epoch+1h
	})
	view(t, s, func(ctx context.Context, tx store.ReadTx) error {
		if l, err := tx.GetStartLease(ctx, "a", "key:ns:k1"); err != nil || !l.ExpiresAt.Equal(epoch.Add(time.Hour)) {
			t.Errorf("key:ns:k1 = %+v, %v; want expiring at %v", l, err, epoch.Add(time.Hour))
		}
		if l, err := tx.GetStartLease(ctx, "a", "run:r1"); err != nil || !l.ExpiresAt.IsZero() {
			t.Errorf("run:r1 = %+v, %v; want no expiry", l, err)
		}
		return nil
	})
	n, err := s.SweepIdempotency(context.Background(), epoch.Add(2*time.Hour))
	if err != nil || n != 2 {
		t.Errorf("SweepIdempotency = %d, %v; want 2 (the record and key:ns:k1)", n, err)
	}
	view(t, s, func(ctx context.Context, tx store.ReadTx) error {
		if _, err := tx.GetStartLease(ctx, "a", "key:ns:k1"); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("expired key:ns:k1 after the sweep: %v, want ErrNotFound", err)
		}
		for _, ref := range []string{"key:ns:k2", "run:r1", "key:ns:held"} {
			if _, err := tx.GetStartLease(ctx, "a", ref); err != nil {
				t.Errorf("%s after the sweep: %v", ref, err)
			}
		}
		return nil
	})
	mustUpdate(t, s, func(ctx context.Context, tx store.Tx) error {
		return tx.InsertStartLease(ctx, startLease("a", "key:ns:k1", "p2"))
	})
}
