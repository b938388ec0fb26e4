// Package storetest is the conformance suite every store.Store driver must
// pass. It uses only the store interfaces, so a driver cannot pass it by
// leaning on its own dialect or on running in one process.
package storetest

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"sync/atomic"
	"testing"
	"time"

	"github.com/praxa/praxa/gateway/store"
)

// Opener opens the store under test. Reopen must open the same underlying
// database again (after the previous Store was closed), so the suite can
// check that commits are durable; each call to the outer factory must give
// a fresh, empty database.
type Opener struct {
	Open func(t *testing.T) store.Store
}

// Factory returns an Opener on a fresh, empty database.
type Factory func(t *testing.T) Opener

// Run runs the whole suite against the driver that factory opens.
func Run(t *testing.T, factory Factory) {
	tests := []struct {
		name string
		fn   func(t *testing.T, o Opener)
	}{
		{"IdempotencyInsertGet", testIdempotencyInsertGet},
		{"IdempotencyExpiry", testIdempotencyExpiry},
		{"IdempotencyClaimRace", testIdempotencyClaimRace},
		{"IdempotencyNamespaces", testIdempotencyNamespaces},
		{"IdempotencyTombstones", testIdempotencyTombstones},
		{"IntentTenancy", testIntentTenancy},
		{"UpdateAtomic", testUpdateAtomic},
		{"UpdateIsolatesFailures", testUpdateIsolatesFailures},
		{"UpdatePanic", testUpdatePanic},
		{"EventsCausalOrder", testEventsCausalOrder},
		{"EventsBatchOrder", testEventsBatchOrder},
		{"EventsBatchColumns", testEventsBatchColumns},
		{"EventsCallTrace", testEventsCallTrace},
		{"ExportEvents", testExportEvents},
		{"DeleteEventsBefore", testDeleteEventsBefore},
		{"Revocations", testRevocations},
		{"Durable", testDurable},
		{"Sweep", testSweep},
		{"Closed", testClosed},
		{"Missions", testMissions},
		{"MissionCompareAndSet", testMissionCompareAndSet},
		{"DeleteMission", testDeleteMission},
		{"IdleMissions", testIdleMissions},
		{"IdleMissionsMany", testIdleMissionsMany},
		{"ExpiredWaits", testExpiredWaits},
		{"ListMissions", testListMissions},
		{"MissionEvents", testMissionEvents},
		{"Submits", testSubmits},
		{"Approvals", testApprovals},
		{"LexiconTerms", testLexiconTerms},
		{"LexiconCompareAndSet", testLexiconCompareAndSet},
		{"CapabilityPins", testCapabilityPins},
		{"CoverageRuns", testCoverageRuns},
		{"ContextRecords", testContextRecords},
		{"ContextRecordFilters", testContextRecordFilters},
		{"Certificates", testCertificates},
		{"MoveLeases", testMoveLeases},
		{"MoveLeaseRace", testMoveLeaseRace},
		{"StartLeases", testStartLeases},
		{"StartLeaseRace", testStartLeaseRace},
		{"ExpiredLeases", testExpiredLeases},
		{"LeaseCheckSerialized", testLeaseCheckSerialized},
		{"LeaseTakeSerialized", testLeaseTakeSerialized},
		{"StartLeaseExpiry", testStartLeaseExpiry},
		{"LeaseRenewal", testLeaseRenewal},
		{"SubmitRefusal", testSubmitRefusal},
		{"PendingSubjects", testPendingSubjects},
		{"TenantUsage", testTenantUsage},
		{"QuotaSerialized", testQuotaSerialized},
		{"RateBuckets", testRateBuckets},
		{"RateBucketsRace", testRateBucketsRace},
		{"RateReplicas", testRateReplicas},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tc.fn(t, factory(t))
		})
	}
}

var epoch = time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)

// idempotencyTimes points at the times of an idempotency record, for
// wantStored.
func idempotencyTimes(r *store.IdempotencyRecord) []*time.Time {
	return []*time.Time{&r.CreatedAt, &r.ExpiresAt, &r.TombstoneUntil}
}

func record(ns, key, fp string) store.IdempotencyRecord {
	return store.IdempotencyRecord{
		Namespace: ns, Key: key, Operation: "submitIntent", Fingerprint: fp,
		Status: 200, Header: map[string]string{"Location": "/v8/x"}, Body: []byte(`{"ok":true}`),
		CreatedAt: epoch, ExpiresAt: epoch.Add(time.Hour),
	}
}

func update(t *testing.T, s store.Store, fn func(ctx context.Context, tx store.Tx) error) error {
	t.Helper()
	return s.Update(context.Background(), fn)
}

func mustUpdate(t *testing.T, s store.Store, fn func(ctx context.Context, tx store.Tx) error) {
	t.Helper()
	if err := update(t, s, fn); err != nil {
		t.Fatalf("Update: %v", err)
	}
}

// reopen closes s and opens its database again with o, as a restart of
// the gateway would: what s committed must be there.
func reopen(t *testing.T, o Opener, s store.Store) store.Store {
	t.Helper()
	if err := s.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	return o.Open(t)
}

// wantRefused runs fn in an Update of s and checks that it fails with
// want; what names the refused write.
func wantRefused(t *testing.T, s store.Store, what string, want error, fn func(ctx context.Context, tx store.Tx) error) {
	t.Helper()
	if err := update(t, s, fn); !errors.Is(err, want) {
		t.Errorf("%s: %v, want %v", what, err, want)
	}
}

// wantNone checks, in a view of s, that get finds no key
// (store.ErrNotFound) and list lists nothing; what names the empty store.
func wantNone[V any](t *testing.T, s store.Store, what string, get func(store.ReadTx, context.Context, string) (V, error), key string,
	list func(store.ReadTx, context.Context) ([]V, error)) {
	t.Helper()
	view(t, s, func(ctx context.Context, tx store.ReadTx) error {
		if _, err := get(tx, ctx, key); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("%s: get %s: %v, want ErrNotFound", what, key, err)
		}
		if got, err := list(tx, ctx); err != nil || len(got) != 0 {
			t.Errorf("%s: lists %v, %v", what, got, err)
		}
		return nil
	})
}

// each is f of every element of list, in order; never nil, so that an
// empty result prints as [] beside a want.
func each[T any](list []T, f func(T) string) []string {
	out := []string{}
	for _, x := range list {
		out = append(out, f(x))
	}
	return out
}

// wantStored checks that got, read back from a store, is want: first the
// times that times points at, as instants (a driver may read a time back
// in another location), then the whole value, once got's times are
// want's. what names the read.
func wantStored[T any](t *testing.T, what string, got, want T, times func(*T) []*time.Time) {
	t.Helper()
	gotTimes, wantTimes := times(&got), times(&want)
	for i, at := range gotTimes {
		if !at.Equal(*wantTimes[i]) {
			t.Errorf("%s: time %d = %v, want %v", what, i, *at, *wantTimes[i])
		}
		*at = *wantTimes[i]
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("%s = %+v, want %+v", what, got, want)
	}
}

func view(t *testing.T, s store.Store, fn func(ctx context.Context, tx store.ReadTx) error) {
	t.Helper()
	if err := s.View(context.Background(), fn); err != nil {
		t.Fatalf("View: %v", err)
	}
}

func testIdempotencyInsertGet(t *testing.T, o Opener) {
	s := o.Open(t)
	want := record("ns", "key-0000000000001", "fp1")
	mustUpdate(t, s, func(ctx context.Context, tx store.Tx) error { return tx.InsertIdempotency(ctx, want) })
	view(t, s, func(ctx context.Context, tx store.ReadTx) error {
		got, err := tx.GetIdempotency(ctx, "ns", want.Key, epoch)
		if err != nil {
			t.Fatalf("GetIdempotency: %v", err)
		}
		wantStored(t, "GetIdempotency", got, want, idempotencyTimes)
		if _, err := tx.GetIdempotency(ctx, "ns", "other-key-00000001", epoch); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("missing key: err = %v, want ErrNotFound", err)
		}
		return nil
	})
	err := update(t, s, func(ctx context.Context, tx store.Tx) error {
		return tx.InsertIdempotency(ctx, record("ns", want.Key, "fp2"))
	})
	if !errors.Is(err, store.ErrExists) {
		t.Fatalf("second insert: err = %v, want ErrExists", err)
	}
	view(t, s, func(ctx context.Context, tx store.ReadTx) error {
		got, _ := tx.GetIdempotency(ctx, "ns", want.Key, epoch)
		if got.Fingerprint != "fp1" {
			t.Errorf("a refused insert overwrote the record: fingerprint %q", got.Fingerprint)
		}
		return nil
	})
}

func testIdempotencyExpiry(t *testing.T, o Opener) {
	s := o.Open(t)
	rec := record("ns", "key-expiring-000001", "fp1")
	mustUpdate(t, s, func(ctx context.Context, tx store.Tx) error { return tx.InsertIdempotency(ctx, rec) })
	later := rec.ExpiresAt.Add(time.Second)
	view(t, s, func(ctx context.Context, tx store.ReadTx) error {
		if _, err := tx.GetIdempotency(ctx, "ns", rec.Key, later); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("expired record: err = %v, want ErrNotFound", err)
		}
		return nil
	})
	fresh := record("ns", rec.Key, "fp2")
	fresh.CreatedAt, fresh.ExpiresAt = later, later.Add(time.Hour)
	mustUpdate(t, s, func(ctx context.Context, tx store.Tx) error { return tx.InsertIdempotency(ctx, fresh) })
	view(t, s, func(ctx context.Context, tx store.ReadTx) error {
		got, err := tx.GetIdempotency(ctx, "ns", rec.Key, later)
		if err != nil || got.Fingerprint != "fp2" {
			t.Errorf("after expiry a new record replaces the old: got %q, %v", got.Fingerprint, err)
		}
		return nil
	})
}

// testIdempotencyClaimRace races many transactions that each check for a
// key and insert it: exactly one may win, the others see ErrExists or the
// winner's record.
func testIdempotencyClaimRace(t *testing.T, o Opener) {
	s := o.Open(t)
	const n = raceN
	var wins, seen atomic.Int32
	race(n, func(i int) {
		err := s.Update(context.Background(), func(ctx context.Context, tx store.Tx) error {
			if _, err := tx.GetIdempotency(ctx, "ns", "race-key-000000001", epoch); err == nil {
				seen.Add(1)
				return nil
			} else if !errors.Is(err, store.ErrNotFound) {
				return err
			}
			if err := tx.InsertIdempotency(ctx, record("ns", "race-key-000000001", fmt.Sprint(i))); err != nil {
				return err
			}
			return tx.InsertIntent(ctx, store.Intent{ID: fmt.Sprintf("in-%d", i), Tenant: "t", Text: "x", CreatedAt: epoch})
		})
		switch {
		case err == nil:
		case errors.Is(err, store.ErrExists):
			seen.Add(1)
		default:
			t.Errorf("Update: %v", err)
		}
	})
	view(t, s, func(ctx context.Context, tx store.ReadTx) error {
		rec, err := tx.GetIdempotency(ctx, "ns", "race-key-000000001", epoch)
		if err != nil {
			t.Fatalf("GetIdempotency: %v", err)
		}
		for i := range n {
			_, err := tx.GetIntent(ctx, "t", fmt.Sprintf("in-%d", i))
			if err == nil {
				wins.Add(1)
				if rec.Fingerprint != fmt.Sprint(i) {
					t.Errorf("intent %d exists but the record names %s", i, rec.Fingerprint)
				}
			}
		}
		return nil
	})
	if wins.Load() != 1 || seen.Load() != n-1 {
		t.Errorf("winners = %d, losers = %d; want 1 and %d", wins.Load(), seen.Load(), n-1)
	}
}

func testIdempotencyNamespaces(t *testing.T, o Opener) {
	s := o.Open(t)
	mustUpdate(t, s, func(ctx context.Context, tx store.Tx) error {
		if err := tx.InsertIdempotency(ctx, record("tenant-a", "same-key-000000001", "a")); err != nil {
			return err
		}
		return tx.InsertIdempotency(ctx, record("tenant-b", "same-key-000000001", "b"))
	})
	view(t, s, func(ctx context.Context, tx store.ReadTx) error {
		a, _ := tx.GetIdempotency(ctx, "tenant-a", "same-key-000000001", epoch)
		b, _ := tx.GetIdempotency(ctx, "tenant-b", "same-key-000000001", epoch)
		if a.Fingerprint != "a" || b.Fingerprint != "b" {
			t.Errorf("namespaces leak: a=%q b=%q", a.Fingerprint, b.Fingerprint)
		}
		return nil
	})
}

// testIdempotencyTombstones: a record past its ExpiresAt reads as its
// tombstone (Expired, no answer; key, operation, fingerprint, object and
// CreatedAt kept) until its TombstoneUntil, before and after the sweep
// drops its answer, and keeps the key from a new record meanwhile; the
// sweep deletes it at the end of the window, after which the key is free.
func testIdempotencyTombstones(t *testing.T, o Opener) {
	s := o.Open(t)
	rec := record("ns", "key-tombstone-00001", "fp1")
	rec.Object, rec.TombstoneUntil = "run:r1", epoch.Add(30*time.Hour)
	plain := record("ns", "key-no-tombstone-01", "fp2") // no tombstone
	mustUpdate(t, s, func(ctx context.Context, tx store.Tx) error {
		if err := tx.InsertIdempotency(ctx, rec); err != nil {
			return err
		}
		return tx.InsertIdempotency(ctx, plain)
	})
	expired, forgotten := rec.ExpiresAt.Add(time.Second), rec.TombstoneUntil.Add(time.Second)
	wantTombstone := func(when string, at time.Time) {
		t.Helper()
		view(t, s, func(ctx context.Context, tx store.ReadTx) error {
			got, err := tx.GetIdempotency(ctx, "ns", rec.Key, at)
			if err != nil {
				t.Fatalf("%s: GetIdempotency: %v, want the tombstone", when, err)
			}
			want := rec
			want.Expired, want.Status, want.Header, want.Body = true, 0, nil, nil
			if len(got.Body) == 0 {
				got.Body = nil
			}
			wantStored(t, when+": GetIdempotency", got, want, idempotencyTimes)
			return nil
		})
	}
	view(t, s, func(ctx context.Context, tx store.ReadTx) error {
		got, err := tx.GetIdempotency(ctx, "ns", rec.Key, epoch)
		if err != nil || got.Expired || got.Status != 200 || got.Object != "run:r1" || !got.TombstoneUntil.Equal(rec.TombstoneUntil) {
			t.Errorf("live record = %+v, %v; want it whole, with its object and window", got, err)
		}
		if _, err := tx.GetIdempotency(ctx, "ns", plain.Key, expired); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("expired record without a tombstone: %v, want ErrNotFound", err)
		}
		return nil
	})
	wantTombstone("expired, not swept", expired)
	again := record("ns", rec.Key, "fp3")
	again.CreatedAt, again.ExpiresAt = expired, expired.Add(time.Hour)
	wantRefused(t, s, "a new record over a tombstone", store.ErrExists, func(ctx context.Context, tx store.Tx) error {
		return tx.InsertIdempotency(ctx, again)
	})
	// The sweep drops the answer (one row changed) and deletes the record
	// without a tombstone (one row gone).
	if n, err := s.SweepIdempotency(context.Background(), expired); err != nil || n != 2 {
		t.Errorf("SweepIdempotency(expired) = %d, %v; want 2", n, err)
	}
	wantTombstone("swept", expired)
	// A replica whose clock lags still reads the swept row as a tombstone:
	// its answer is gone.
	wantTombstone("swept, read before its expiry", epoch)
	if n, err := s.SweepIdempotency(context.Background(), expired); err != nil || n != 0 {
		t.Errorf("SweepIdempotency again = %d, %v; want 0", n, err)
	}
	wantTombstone("at the end of the window", rec.TombstoneUntil)
	view(t, s, func(ctx context.Context, tx store.ReadTx) error {
		if _, err := tx.GetIdempotency(ctx, "ns", rec.Key, forgotten); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("past the window: %v, want ErrNotFound", err)
		}
		return nil
	})
	if n, err := s.SweepIdempotency(context.Background(), forgotten); err != nil || n != 1 {
		t.Errorf("SweepIdempotency(forgotten) = %d, %v; want 1", n, err)
	}
	again.CreatedAt, again.ExpiresAt = forgotten, forgotten.Add(time.Hour)
	mustUpdate(t, s, func(ctx context.Context, tx store.Tx) error { return tx.InsertIdempotency(ctx, again) })
	view(t, s, func(ctx context.Context, tx store.ReadTx) error {
		got, err := tx.GetIdempotency(ctx, "ns", rec.Key, forgotten)
		if err != nil || got.Expired || got.Fingerprint != "fp3" || got.Object != "" {
			t.Errorf("a new record after the window = %+v, %v", got, err)
		}
		return nil
	})
}

func testIntentTenancy(t *testing.T, o Opener) {
	s := o.Open(t)
	in := store.Intent{ID: "int_1", Tenant: "a", Subject: "alice", Text: "deploy payments", Tags: []string{"deploy"}, TraceID: "tr1", CreatedAt: epoch}
	mustUpdate(t, s, func(ctx context.Context, tx store.Tx) error { return tx.InsertIntent(ctx, in) })
	if err := update(t, s, func(ctx context.Context, tx store.Tx) error { return tx.InsertIntent(ctx, in) }); !errors.Is(err, store.ErrExists) {
		t.Errorf("duplicate intent: err = %v, want ErrExists", err)
	}
	other := in
	other.Tenant = "b"
	if err := update(t, s, func(ctx context.Context, tx store.Tx) error { return tx.InsertIntent(ctx, other) }); !errors.Is(err, store.ErrExists) {
		t.Errorf("intent ids are global: another tenant's duplicate id: err = %v, want ErrExists", err)
	}
	view(t, s, func(ctx context.Context, tx store.ReadTx) error {
		got, err := tx.GetIntent(ctx, "a", "int_1")
		if err != nil {
			t.Fatalf("GetIntent: %v", err)
		}
		wantStored(t, "GetIntent", got, in, func(in *store.Intent) []*time.Time { return []*time.Time{&in.CreatedAt} })
		if _, err := tx.GetIntent(ctx, "b", "int_1"); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("another tenant's intent: err = %v, want ErrNotFound", err)
		}
		return nil
	})
}

var errBoom = errors.New("boom")

func testUpdateAtomic(t *testing.T, o Opener) {
	s := o.Open(t)
	err := update(t, s, func(ctx context.Context, tx store.Tx) error {
		if err := tx.InsertIntent(ctx, store.Intent{ID: "int_rolled_back", Tenant: "a", CreatedAt: epoch}); err != nil {
			return err
		}
		if err := tx.AppendEvents(ctx, []store.Event{{Tenant: "a", TraceID: "tr", Type: "x", At: epoch}}); err != nil {
			return err
		}
		return errBoom
	})
	if !errors.Is(err, errBoom) {
		t.Fatalf("Update = %v, want the function's error", err)
	}
	view(t, s, func(ctx context.Context, tx store.ReadTx) error {
		if _, err := tx.GetIntent(ctx, "a", "int_rolled_back"); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("a failed Update left its intent: %v", err)
		}
		if ev, _ := tx.TraceEvents(ctx, "a", "tr", 10); len(ev) != 0 {
			t.Errorf("a failed Update left %d events", len(ev))
		}
		return nil
	})
}

// testUpdateIsolatesFailures runs failing and succeeding Updates at once
// (a grouping driver commits them together) and checks each is atomic.
func testUpdateIsolatesFailures(t *testing.T, o Opener) {
	s := o.Open(t)
	const n = 40
	race(n, func(i int) {
		err := s.Update(context.Background(), func(ctx context.Context, tx store.Tx) error {
			if err := tx.InsertIntent(ctx, store.Intent{ID: fmt.Sprintf("int_%d", i), Tenant: "a", CreatedAt: epoch}); err != nil {
				return err
			}
			if i%2 == 1 {
				return errBoom
			}
			return nil
		})
		if (i%2 == 1) != errors.Is(err, errBoom) || (i%2 == 0 && err != nil) {
			t.Errorf("Update %d = %v", i, err)
		}
	})
	view(t, s, func(ctx context.Context, tx store.ReadTx) error {
		for i := range n {
			_, err := tx.GetIntent(ctx, "a", fmt.Sprintf("int_%d", i))
			if (i%2 == 0) != (err == nil) {
				t.Errorf("intent %d: err = %v", i, err)
			}
		}
		return nil
	})
}

func testUpdatePanic(t *testing.T, o Opener) {
	s := o.Open(t)
	err := func() (err error) {
		defer func() {
			if r := recover(); r != nil {
				err = fmt.Errorf("panic escaped: %v", r)
			}
		}()
		return s.Update(context.Background(), func(ctx context.Context, tx store.Tx) error {
			if err := tx.InsertIntent(ctx, store.Intent{ID: "int_panic", Tenant: "a", CreatedAt: epoch}); err != nil {
				return err
			}
			panic("boom")
		})
	}()
	if err == nil {
		t.Fatal("Update of a panicking function returned nil")
	}
	mustUpdate(t, s, func(ctx context.Context, tx store.Tx) error {
		return tx.InsertIntent(ctx, store.Intent{ID: "int_after", Tenant: "a", CreatedAt: epoch})
	})
	view(t, s, func(ctx context.Context, tx store.ReadTx) error {
		if _, err := tx.GetIntent(ctx, "a", "int_panic"); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("a panicking Update left its intent: %v", err)
		}
		return nil
	})
}

func testEventsCausalOrder(t *testing.T, o Opener) {
	s := o.Open(t)
	ev := func(typ string, at time.Time, tenant string) store.Event {
		return store.Event{Tenant: tenant, TraceID: "trace-1", Type: typ, At: at, Subject: "alice", Outcome: "allowed",
			Attributes: map[string]any{"n": typ}}
	}
	mustUpdate(t, s, func(ctx context.Context, tx store.Tx) error {
		return tx.AppendEvents(ctx, []store.Event{ev("b", epoch.Add(time.Second), "a"), ev("c", epoch.Add(time.Second), "a")})
	})
	if err := s.AppendEvents(context.Background(), []store.Event{ev("a", epoch, "a"), ev("foreign", epoch, "b")}); err != nil {
		t.Fatalf("AppendEvents: %v", err)
	}
	view(t, s, func(ctx context.Context, tx store.ReadTx) error {
		got, err := tx.TraceEvents(ctx, "a", "trace-1", 100)
		if err != nil {
			t.Fatalf("TraceEvents: %v", err)
		}
		var types []string
		for _, e := range got {
			types = append(types, e.Type)
			if e.Attributes["n"] != e.Type {
				t.Errorf("attributes lost: %+v", e.Attributes)
			}
		}
		if want := []string{"a", "b", "c"}; !reflect.DeepEqual(types, want) {
			t.Errorf("order = %v, want %v", types, want)
		}
		if got[1].Seq >= got[2].Seq {
			t.Errorf("events at one instant keep append order: seq %d, %d", got[1].Seq, got[2].Seq)
		}
		limited, _ := tx.TraceEvents(ctx, "a", "trace-1", 2)
		if len(limited) != 2 {
			t.Errorf("limit 2 returned %d", len(limited))
		}
		return nil
	})
}

// testEventsBatchOrder appends one batch of events at the same instant,
// large enough for a driver to insert it in several multi-row statements
// (the audit trail's batches), and reads every event back in append order
// with its own fields.
func testEventsBatchOrder(t *testing.T, o Opener) {
	s := o.Open(t)
	const n = 77
	var batch []store.Event
	for i := range n {
		batch = append(batch, store.Event{Tenant: "a", TraceID: "trace-batch", Type: fmt.Sprintf("e%02d", i), At: epoch,
			RequestID: fmt.Sprintf("req-%d", i), Outcome: "allowed", Attributes: map[string]any{"i": float64(i)}})
	}
	if err := s.AppendEvents(context.Background(), batch); err != nil {
		t.Fatalf("AppendEvents: %v", err)
	}
	view(t, s, func(ctx context.Context, tx store.ReadTx) error {
		got, err := tx.TraceEvents(ctx, "a", "trace-batch", 1000)
		if err != nil {
			t.Fatalf("TraceEvents: %v", err)
		}
		if len(got) != n {
			t.Fatalf("read %d events of %d", len(got), n)
		}
		for i, e := range got {
			if e.Type != batch[i].Type || e.RequestID != batch[i].RequestID || e.Attributes["i"] != float64(i) {
				t.Fatalf("event %d = %s %s %v; want %s %s, i=%d", i, e.Type, e.RequestID, e.Attributes, batch[i].Type, batch[i].RequestID, i)
			}
			if i > 0 && e.Seq <= got[i-1].Seq {
				t.Fatalf("seq not increasing at %d: %d after %d", i, e.Seq, got[i-1].Seq)
			}
		}
		return nil
	})
}

// testEventsBatchColumns appends batches holding runs of one caller's
// events (the audit trail's reads: every column alike but the trace, the
// time, the request and the attributes, which a driver may bind once per
// statement) between events that differ, and reads every column of every
// event back as appended; the batches' sizes (a group commit's few events
// among them) make a driver insert chunks of every size it has.
func testEventsBatchColumns(t *testing.T, o Opener) {
	s := o.Open(t)
	for _, n := range []int{77, 7, 6, 3, 2} {
		appendBatchColumns(t, s, n)
	}
}

func appendBatchColumns(t *testing.T, s store.Store, n int) {
	callTrace := fmt.Sprintf("call-batch-%d", n)
	var batch []store.Event
	for i := range n {
		e := store.Event{Tenant: "a", TraceID: fmt.Sprintf("trace-%02d", i), Type: "request.allowed",
			At: epoch.Add(time.Duration(i) * time.Millisecond), Subject: "agent", ClientID: "cli", Operation: "getMission",
			Tool: "aura_get_mission", Outcome: "allowed", RequestID: fmt.Sprintf("req-%02d", i),
			Attributes: map[string]any{"i": float64(i), "note": "\"quoted\" \\ é\n"}, CallTraceID: callTrace}
		switch {
		case i == 3:
			e.Attributes = nil
		case i >= 40 && i < 48 && i%2 == 0:
			e.Subject = "other-agent"
		case i >= 48:
			e.Type, e.Outcome, e.Code, e.RunID, e.WorkflowID = "request.refused", "refused", "forbidden", "run-1", "wf-1"
		}
		batch = append(batch, e)
	}
	if err := s.AppendEvents(context.Background(), batch); err != nil {
		t.Fatalf("AppendEvents: %v", err)
	}
	view(t, s, func(ctx context.Context, tx store.ReadTx) error {
		got, err := tx.TraceEvents(ctx, "a", callTrace, 1000)
		if err != nil {
			t.Fatalf("TraceEvents: %v", err)
		}
		if len(got) != n {
			t.Fatalf("read %d events of %d", len(got), n)
		}
		for i, e := range got {
			if i > 0 && e.Seq <= got[i-1].Seq {
				t.Fatalf("seq not increasing at %d: %d after %d", i, e.Seq, got[i-1].Seq)
			}
			want := batch[i]
			if !e.At.Equal(want.At) {
				t.Fatalf("event %d at %v, want %v", i, e.At, want.At)
			}
			e.Seq, e.At, want.At = 0, time.Time{}, time.Time{}
			if want.Attributes == nil && len(e.Attributes) == 0 {
				e.Attributes = nil
			}
			if !reflect.DeepEqual(e, want) {
				t.Fatalf("event %d\n got %+v\nwant %+v", i, e, want)
			}
		}
		return nil
	})
}

func testRevocations(t *testing.T, o Opener) {
	s := o.Open(t)
	r := store.Revocation{JTI: "jti-1", RevokedAt: epoch, ExpiresAt: epoch.Add(time.Hour), By: "ops", Reason: "leaked"}
	mustUpdate(t, s, func(ctx context.Context, tx store.Tx) error { return tx.Revoke(ctx, r) })
	again := r
	again.Reason, again.RevokedAt = "again", epoch.Add(time.Minute)
	mustUpdate(t, s, func(ctx context.Context, tx store.Tx) error { return tx.Revoke(ctx, again) })
	view(t, s, func(ctx context.Context, tx store.ReadTx) error {
		if ok, err := tx.Revoked(ctx, "jti-1"); err != nil || !ok {
			t.Errorf("Revoked(jti-1) = %v, %v", ok, err)
		}
		if ok, err := tx.Revoked(ctx, "jti-2"); err != nil || ok {
			t.Errorf("Revoked(jti-2) = %v, %v", ok, err)
		}
		return nil
	})
	list, err := s.RevokedSince(context.Background(), epoch)
	if err != nil || len(list) != 1 || list[0].Reason != "leaked" {
		t.Errorf("RevokedSince = %+v, %v", list, err)
	}
	if list, _ := s.RevokedSince(context.Background(), epoch.Add(time.Second)); len(list) != 0 {
		t.Errorf("RevokedSince(later) = %+v", list)
	}
}

func testDurable(t *testing.T, o Opener) {
	s := o.Open(t)
	mustUpdate(t, s, func(ctx context.Context, tx store.Tx) error {
		return tx.InsertIntent(ctx, store.Intent{ID: "int_durable", Tenant: "a", Text: "kept", CreatedAt: epoch})
	})
	s = reopen(t, o, s)
	view(t, s, func(ctx context.Context, tx store.ReadTx) error {
		in, err := tx.GetIntent(ctx, "a", "int_durable")
		if err != nil || in.Text != "kept" {
			t.Errorf("after reopen: %+v, %v", in, err)
		}
		return nil
	})
}

func testSweep(t *testing.T, o Opener) {
	s := o.Open(t)
	mustUpdate(t, s, func(ctx context.Context, tx store.Tx) error {
		old := record("ns", "old-key-0000000001", "x")
		old.ExpiresAt = epoch.Add(-time.Minute)
		if err := tx.InsertIdempotency(ctx, old); err != nil {
			return err
		}
		return tx.InsertIdempotency(ctx, record("ns", "new-key-0000000001", "y"))
	})
	n, err := s.SweepIdempotency(context.Background(), epoch)
	if err != nil || n != 1 {
		t.Errorf("SweepIdempotency = %d, %v; want 1", n, err)
	}
	view(t, s, func(ctx context.Context, tx store.ReadTx) error {
		if _, err := tx.GetIdempotency(ctx, "ns", "new-key-0000000001", epoch); err != nil {
			t.Errorf("live record swept: %v", err)
		}
		return nil
	})
}

func testClosed(t *testing.T, o Opener) {
	s := o.Open(t)
	if err := s.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if err := s.Update(context.Background(), func(context.Context, store.Tx) error { return nil }); !errors.Is(err, store.ErrClosed) {
		t.Errorf("Update after Close = %v, want ErrClosed", err)
	}
	if err := s.View(context.Background(), func(context.Context, store.ReadTx) error { return nil }); !errors.Is(err, store.ErrClosed) {
		t.Errorf("View after Close = %v, want ErrClosed", err)
	}
}
