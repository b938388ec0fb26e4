package storetest

import (
	"context"
	"errors"
	"strings"
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
		wantStored(t, "GetMoveLease", got, want, func(l *store.MoveLease) []*time.Time { return []*time.Time{&l.CreatedAt, &l.Deadline} })
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
	wantRefused(t, s, "second lease on a version", store.ErrExists, func(ctx context.Context, tx store.Tx) error {
		return tx.InsertMoveLease(ctx, late)
	})
	// The next version is another lease.
	mustUpdate(t, s, func(ctx context.Context, tx store.Tx) error {
		return tx.InsertMoveLease(ctx, lease("a", "wf_1", 4, "p2/r1"))
	})
	wantRefused(t, s, "delete by another owner", store.ErrConflict, func(ctx context.Context, tx store.Tx) error {
		return tx.DeleteMoveLease(ctx, "a", "wf_1", 3, "p2/r1")
	})
	wantRefused(t, s, "delete by another tenant", store.ErrNotFound, func(ctx context.Context, tx store.Tx) error {
		return tx.DeleteMoveLease(ctx, "b", "wf_1", 3, "p1/r1")
	})
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
	wantRefused(t, s, "second delete", store.ErrNotFound, func(ctx context.Context, tx store.Tx) error {
		return tx.DeleteMoveLease(ctx, "a", "wf_1", 3, "p1/r1")
	})
	// Deleted, the version can be leased again; the lease is durable.
	mustUpdate(t, s, func(ctx context.Context, tx store.Tx) error { return tx.InsertMoveLease(ctx, late) })
	s = reopen(t, o, s)
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
	raceOnce(t, s, raceN, store.ErrExists, func(ctx context.Context, tx store.Tx, i int) error {
		if _, err := tx.GetMoveLease(ctx, "a", "wf_race", 1); err == nil {
			return store.ErrExists
		}
		return tx.InsertMoveLease(ctx, lease("a", "wf_race", 1, string(rune('A'+i))))
	})
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

func startLease(tenant, ref, owner string) store.StartLease {
	return store.StartLease{Tenant: tenant, Ref: ref, DefinitionID: "deploy", Fingerprint: "fp-" + owner,
		Namespace: "ns", Key: "key-0000000000000001", Operation: "createMission", KeyFingerprint: "kfp", Owner: owner,
		CreatedAt: epoch, Deadline: epoch.Add(time.Minute), WorkflowID: "wf_" + strings.ReplaceAll(owner, "/", "_")}
}

// testStartLeases: a start lease is inserted once per tenant and ref (held
// or resolved), read back whole only by its tenant, deleted or resolved
// only by its owner while held, and a resolved one keeps its answer.
func testStartLeases(t *testing.T, o Opener) {
	s := o.Open(t)
	want := startLease("a", "run:deploy-1", "p1/r1")
	mustUpdate(t, s, func(ctx context.Context, tx store.Tx) error { return tx.InsertStartLease(ctx, want) })
	view(t, s, func(ctx context.Context, tx store.ReadTx) error {
		got, err := tx.GetStartLease(ctx, "a", "run:deploy-1")
		if err != nil {
			t.Fatalf("GetStartLease: %v", err)
		}
		wantStored(t, "GetStartLease", got, want, func(l *store.StartLease) []*time.Time { return []*time.Time{&l.CreatedAt, &l.Deadline} })
		if _, err := tx.GetStartLease(ctx, "b", "run:deploy-1"); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("another tenant's lease: %v, want ErrNotFound", err)
		}
		return nil
	})
	// Another tenant's ref of the same name is another lease; a second
	// lease on the ref is refused.
	mustUpdate(t, s, func(ctx context.Context, tx store.Tx) error {
		return tx.InsertStartLease(ctx, startLease("b", "run:deploy-1", "p2/r1"))
	})
	wantRefused(t, s, "second lease on a ref", store.ErrExists, func(ctx context.Context, tx store.Tx) error {
		return tx.InsertStartLease(ctx, startLease("a", "run:deploy-1", "p2/r2"))
	})
	wantRefused(t, s, "delete by another owner", store.ErrConflict, func(ctx context.Context, tx store.Tx) error {
		return tx.DeleteStartLease(ctx, "a", "run:deploy-1", "p2/r1")
	})
	wantRefused(t, s, "resolve by another owner", store.ErrConflict, func(ctx context.Context, tx store.Tx) error {
		return tx.ResolveStartLease(ctx, "a", "run:deploy-1", "p2/r1", 504, []byte("x"), time.Time{})
	})
	wantRefused(t, s, "delete of no lease", store.ErrNotFound, func(ctx context.Context, tx store.Tx) error {
		return tx.DeleteStartLease(ctx, "a", "run:nope", "p1/r1")
	})
	// A resolve rolled back with its transaction leaves the lease held.
	if err := update(t, s, func(ctx context.Context, tx store.Tx) error {
		if err := tx.ResolveStartLease(ctx, "a", "run:deploy-1", "p1/r1", 504, []byte(`{"error":{}}`), time.Time{}); err != nil {
			return err
		}
		if got, err := tx.GetStartLease(ctx, "a", "run:deploy-1"); err != nil || got.Status != 504 || got.Owner != "" {
			t.Errorf("resolved in its transaction: %+v, %v", got, err)
		}
		return errBoom
	}); !errors.Is(err, errBoom) {
		t.Fatalf("Update = %v", err)
	}
	view(t, s, func(ctx context.Context, tx store.ReadTx) error {
		if got, err := tx.GetStartLease(ctx, "a", "run:deploy-1"); err != nil || got.Status != 0 || got.Owner != "p1/r1" {
			t.Errorf("a rolled back resolve changed the lease: %+v, %v", got, err)
		}
		return nil
	})
	body := []byte(`{"error":{"code":"outcome-unknown"}}`)
	mustUpdate(t, s, func(ctx context.Context, tx store.Tx) error {
		return tx.ResolveStartLease(ctx, "a", "run:deploy-1", "p1/r1", 504, body, time.Time{})
	})
	// Resolved, the lease is a record: not held, not deletable, still
	// refusing a new lease on its ref, durable.
	wantRefused(t, s, "delete of a resolved lease", store.ErrConflict, func(ctx context.Context, tx store.Tx) error {
		return tx.DeleteStartLease(ctx, "a", "run:deploy-1", "p1/r1")
	})
	wantRefused(t, s, "second resolve", store.ErrConflict, func(ctx context.Context, tx store.Tx) error {
		return tx.ResolveStartLease(ctx, "a", "run:deploy-1", "p1/r1", 504, body, time.Time{})
	})
	wantRefused(t, s, "lease on a resolved ref", store.ErrExists, func(ctx context.Context, tx store.Tx) error {
		return tx.InsertStartLease(ctx, startLease("a", "run:deploy-1", "p3/r1"))
	})
	// A held lease is deleted by its owner, and its ref can be leased again.
	mustUpdate(t, s, func(ctx context.Context, tx store.Tx) error {
		return tx.DeleteStartLease(ctx, "b", "run:deploy-1", "p2/r1")
	})
	mustUpdate(t, s, func(ctx context.Context, tx store.Tx) error {
		return tx.InsertStartLease(ctx, startLease("b", "run:deploy-1", "p2/r2"))
	})
	s = reopen(t, o, s)
	view(t, s, func(ctx context.Context, tx store.ReadTx) error {
		got, err := tx.GetStartLease(ctx, "a", "run:deploy-1")
		if err != nil || got.Status != 504 || got.Owner != "" || string(got.Response) != string(body) || got.Fingerprint != "fp-p1/r1" {
			t.Errorf("resolved after reopen: %+v, %v", got, err)
		}
		if got, err := tx.GetStartLease(ctx, "b", "run:deploy-1"); err != nil || got.Owner != "p2/r2" || got.Status != 0 || got.Response != nil {
			t.Errorf("held after reopen: %+v, %v", got, err)
		}
		return nil
	})
}

// testStartLeaseRace: many transactions try to lease one start at once;
// exactly one wins.
func testStartLeaseRace(t *testing.T, o Opener) {
	s := o.Open(t)
	raceOnce(t, s, raceN, store.ErrExists, func(ctx context.Context, tx store.Tx, i int) error {
		if _, err := tx.GetStartLease(ctx, "a", "key:ns:k"); err == nil {
			return store.ErrExists
		}
		return tx.InsertStartLease(ctx, startLease("a", "key:ns:k", string(rune('A'+i))))
	})
	// Of the racing resolvers of the one lease, exactly one resolves it.
	var owner string
	view(t, s, func(ctx context.Context, tx store.ReadTx) error {
		l, err := tx.GetStartLease(ctx, "a", "key:ns:k")
		owner = l.Owner
		return err
	})
	var wins atomic.Int32
	race(raceN, func(int) {
		err := s.Update(context.Background(), func(ctx context.Context, tx store.Tx) error {
			return tx.ResolveStartLease(ctx, "a", "key:ns:k", owner, 504, []byte("{}"), time.Time{})
		})
		if err == nil {
			wins.Add(1)
		} else if !errors.Is(err, store.ErrConflict) {
			t.Errorf("resolve: %v", err)
		}
	})
	if wins.Load() != 1 {
		t.Errorf("%d resolvers resolved the lease, want 1", wins.Load())
	}
}

// testExpiredLeases: the sweeper's listing holds the move leases and the
// held start leases past their deadline, of every tenant, oldest deadline
// first, up to the limit; live and resolved leases are not listed.
func testExpiredLeases(t *testing.T, o Opener) {
	s := o.Open(t)
	mustUpdate(t, s, func(ctx context.Context, tx store.Tx) error {
		for i, m := range []store.MoveLease{lease("a", "wf_1", 1, "p1"), lease("b", "wf_2", 5, "p2"), lease("a", "wf_3", 2, "p3")} {
			m.Deadline = epoch.Add(time.Duration(3-i) * time.Minute) // 3m, 2m, 1m
			if err := tx.InsertMoveLease(ctx, m); err != nil {
				return err
			}
		}
		for i, l := range []store.StartLease{startLease("a", "run:r1", "p1"), startLease("b", "key:ns:k", "p2"), startLease("a", "run:r2", "p3")} {
			l.Deadline = epoch.Add(time.Duration(3-i) * time.Minute)
			if err := tx.InsertStartLease(ctx, l); err != nil {
				return err
			}
		}
		return nil
	})
	mustUpdate(t, s, func(ctx context.Context, tx store.Tx) error {
		return tx.ResolveStartLease(ctx, "a", "run:r2", "p3", 504, []byte("{}"), time.Time{})
	})
	now := epoch.Add(150 * time.Second) // past the 1m and 2m deadlines
	view(t, s, func(ctx context.Context, tx store.ReadTx) error {
		moves, err := tx.ExpiredMoveLeases(ctx, now, 10)
		if err != nil {
			t.Fatalf("ExpiredMoveLeases: %v", err)
		}
		if len(moves) != 2 || moves[0].WorkflowID != "wf_3" || moves[1].WorkflowID != "wf_2" || moves[1].Tenant != "b" {
			t.Errorf("ExpiredMoveLeases = %+v, want wf_3 then wf_2", moves)
		}
		if moves, _ := tx.ExpiredMoveLeases(ctx, now, 1); len(moves) != 1 || moves[0].WorkflowID != "wf_3" {
			t.Errorf("limit 1: %+v", moves)
		}
		if moves, _ := tx.ExpiredMoveLeases(ctx, epoch, 10); len(moves) != 0 {
			t.Errorf("none expired yet: %+v", moves)
		}
		starts, err := tx.ExpiredStartLeases(ctx, now, 10)
		if err != nil {
			t.Fatalf("ExpiredStartLeases: %v", err)
		}
		if len(starts) != 1 || starts[0].Ref != "key:ns:k" || starts[0].Tenant != "b" {
			t.Errorf("ExpiredStartLeases = %+v, want the held key:ns lease of b only", starts)
		}
		return nil
	})
	// Past every deadline: all move leases, the held start leases only.
	view(t, s, func(ctx context.Context, tx store.ReadTx) error {
		later := epoch.Add(time.Hour)
		if moves, _ := tx.ExpiredMoveLeases(ctx, later, 10); len(moves) != 3 {
			t.Errorf("ExpiredMoveLeases = %d leases, want 3", len(moves))
		}
		if starts, _ := tx.ExpiredStartLeases(ctx, later, 10); len(starts) != 2 || starts[0].Ref != "key:ns:k" || starts[1].Ref != "run:r1" {
			t.Errorf("ExpiredStartLeases = %+v", starts)
		}
		return nil
	})
}

// testLeaseRenewal: a live lease is renewed only by its owner, which hands
// it to a new owner with a later deadline; an expired lease is never
// renewed; and a resolution decided on the lease as it was before the
// renewal (the old owner) fails its compare-and-set.
func testLeaseRenewal(t *testing.T, o Opener) {
	s := o.Open(t)
	mustUpdate(t, s, func(ctx context.Context, tx store.Tx) error {
		if err := tx.InsertMoveLease(ctx, lease("a", "wf_1", 1, "p1/r1")); err != nil {
			return err
		}
		return tx.InsertStartLease(ctx, startLease("a", "run:deploy-1", "p1/s1"))
	})
	now, later := epoch.Add(30*time.Second), epoch.Add(90*time.Second)
	for _, tc := range []struct {
		name  string
		renew func(ctx context.Context, tx store.Tx, owner, newOwner string, now time.Time) error
	}{
		{"move", func(ctx context.Context, tx store.Tx, owner, newOwner string, now time.Time) error {
			return tx.RenewMoveLease(ctx, "a", "wf_1", 1, owner, newOwner, now, later)
		}},
		{"start", func(ctx context.Context, tx store.Tx, owner, newOwner string, now time.Time) error {
			return tx.RenewStartLease(ctx, "a", "run:deploy-1", owner, newOwner, now, later)
		}},
	} {
		old, renewed := "p1/r1", "p1/r1#2"
		if tc.name == "start" {
			old, renewed = "p1/s1", "p1/s1#2"
		}
		if err := update(t, s, func(ctx context.Context, tx store.Tx) error { return tc.renew(ctx, tx, "p9/x", renewed, now) }); !errors.Is(err, store.ErrConflict) {
			t.Errorf("%s: renewal by another owner: %v, want ErrConflict", tc.name, err)
		}
		if err := update(t, s, func(ctx context.Context, tx store.Tx) error {
			return tc.renew(ctx, tx, old, renewed, epoch.Add(2*time.Minute))
		}); !errors.Is(err, store.ErrConflict) {
			t.Errorf("%s: renewal of an expired lease: %v, want ErrConflict", tc.name, err)
		}
		mustUpdate(t, s, func(ctx context.Context, tx store.Tx) error { return tc.renew(ctx, tx, old, renewed, now) })
	}
	view(t, s, func(ctx context.Context, tx store.ReadTx) error {
		m, err := tx.GetMoveLease(ctx, "a", "wf_1", 1)
		if err != nil || m.Owner != "p1/r1#2" || !m.Deadline.Equal(later) {
			t.Errorf("renewed move lease: %+v, %v", m, err)
		}
		st, err := tx.GetStartLease(ctx, "a", "run:deploy-1")
		if err != nil || st.Owner != "p1/s1#2" || !st.Deadline.Equal(later) {
			t.Errorf("renewed start lease: %+v, %v", st, err)
		}
		return nil
	})
	// A resolver that read the lease before the renewal holds the old owner.
	wantRefused(t, s, "delete with the owner before the renewal", store.ErrConflict, func(ctx context.Context, tx store.Tx) error {
		return tx.DeleteMoveLease(ctx, "a", "wf_1", 1, "p1/r1")
	})
	wantRefused(t, s, "resolve with the owner before the renewal", store.ErrConflict, func(ctx context.Context, tx store.Tx) error {
		return tx.ResolveStartLease(ctx, "a", "run:deploy-1", "p1/s1", 504, []byte(`{}`), time.Time{})
	})
	wantRefused(t, s, "renewal of no lease", store.ErrNotFound, func(ctx context.Context, tx store.Tx) error {
		return tx.RenewMoveLease(ctx, "a", "wf_9", 1, "p1/r1", "x", now, later)
	})
}

// raceN is how many transactions a race test runs at once.
const raceN = 32

// race runs fn(0) to fn(raceN-1) on goroutines of their own, released at
// once, and returns when every one has.
func race(n int, fn func(i int)) {
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range n {
		wg.Go(func() {
			<-start
			fn(i)
		})
	}
	close(start)
	wg.Wait()
}

// raceOnce runs n updates of s at once, the i-th running update with i,
// and fails unless exactly one commits and every other fails with lose
// (store.ErrExists, store.ErrConflict).
func raceOnce(t *testing.T, s store.Store, n int, lose error, update func(ctx context.Context, tx store.Tx, i int) error) {
	t.Helper()
	var wins, lost atomic.Int32
	race(n, func(i int) {
		err := s.Update(context.Background(), func(ctx context.Context, tx store.Tx) error { return update(ctx, tx, i) })
		switch {
		case err == nil:
			wins.Add(1)
		case errors.Is(err, lose):
			lost.Add(1)
		default:
			t.Errorf("racer %d: %v", i, err)
		}
	})
	if wins.Load() != 1 || lost.Load() != int32(n-1) {
		t.Errorf("winners = %d, losers = %d; want 1 and %d", wins.Load(), lost.Load(), n-1)
	}
}
