package memstore_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/praxa/praxa/gateway/store"
	"github.com/praxa/praxa/gateway/store/memstore"
	"github.com/praxa/praxa/gateway/store/storetest"
)

// TestStore runs the shared driver suite. The DB lives in the Opener's
// closure, so the suite's reopen sees the same in-memory state.
func TestStore(t *testing.T) {
	storetest.Run(t, func(t *testing.T) storetest.Opener {
		db := memstore.NewDB()
		return storetest.Opener{Open: func(t *testing.T) store.Store {
			s := memstore.Open(db)
			t.Cleanup(func() { s.Close() })
			return s
		}}
	})
}

var at = time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)

// TestNoAliasing checks that stored data is copied in and out: changing a
// slice or map passed to the store, or one read from it, changes nothing
// stored.
func TestNoAliasing(t *testing.T) {
	ctx := context.Background()
	s := memstore.New()
	defer s.Close()
	header := map[string]string{"Location": "/v8/x"}
	body := []byte(`{"ok":true}`)
	tags := []string{"a", "b"}
	attrs := map[string]any{"n": "x", "nested": map[string]any{"k": "v"}, "list": []any{"1"}}
	err := s.Update(ctx, func(ctx context.Context, tx store.Tx) error {
		if err := tx.InsertIdempotency(ctx, store.IdempotencyRecord{Namespace: "ns", Key: "key-0000000000000001", Operation: "op",
			Fingerprint: "fp", Status: 200, Header: header, Body: body, CreatedAt: at, ExpiresAt: at.Add(time.Hour)}); err != nil {
			return err
		}
		if err := tx.InsertIntent(ctx, store.Intent{ID: "int_1", Tenant: "t", Text: "x", Tags: tags, CreatedAt: at}); err != nil {
			return err
		}
		return tx.AppendEvents(ctx, []store.Event{{Tenant: "t", TraceID: "tr", Type: "x", At: at, Attributes: attrs}})
	})
	if err != nil {
		t.Fatal(err)
	}
	// Change what was passed in.
	header["Location"] = "changed"
	body[0] = 'X'
	tags[0] = "changed"
	attrs["n"] = "changed"
	attrs["nested"].(map[string]any)["k"] = "changed"

	read := func() (store.IdempotencyRecord, store.Intent, []store.Event) {
		var (
			rec store.IdempotencyRecord
			in  store.Intent
			evs []store.Event
		)
		err := s.View(ctx, func(ctx context.Context, tx store.ReadTx) error {
			var err error
			if rec, err = tx.GetIdempotency(ctx, "ns", "key-0000000000000001", at); err != nil {
				return err
			}
			if in, err = tx.GetIntent(ctx, "t", "int_1"); err != nil {
				return err
			}
			evs, err = tx.TraceEvents(ctx, "t", "tr", 10)
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		return rec, in, evs
	}
	check := func(when string) {
		t.Helper()
		rec, in, evs := read()
		if rec.Header["Location"] != "/v8/x" || string(rec.Body) != `{"ok":true}` {
			t.Errorf("%s: record changed: %v %s", when, rec.Header, rec.Body)
		}
		if in.Tags[0] != "a" {
			t.Errorf("%s: intent tags changed: %v", when, in.Tags)
		}
		if len(evs) != 1 || evs[0].Attributes["n"] != "x" || evs[0].Attributes["nested"].(map[string]any)["k"] != "v" {
			t.Errorf("%s: event attributes changed: %+v", when, evs)
		}
	}
	check("after changing the inputs")

	// Change what was read out.
	rec, in, evs := read()
	rec.Header["Location"] = "changed"
	rec.Body[0] = 'X'
	in.Tags[0] = "changed"
	evs[0].Attributes["n"] = "changed"
	evs[0].Attributes["nested"].(map[string]any)["k"] = "changed"
	evs[0].Attributes["list"].([]any)[0] = "changed"
	check("after changing the outputs")
}

// TestReadYourWrites checks that an Update sees its own staged writes and
// that a failed Update's writes are invisible to everyone.
func TestReadYourWrites(t *testing.T) {
	ctx := context.Background()
	s := memstore.New()
	defer s.Close()
	boom := errors.New("boom")
	err := s.Update(ctx, func(ctx context.Context, tx store.Tx) error {
		if err := tx.InsertIntent(ctx, store.Intent{ID: "int_1", Tenant: "t", CreatedAt: at}); err != nil {
			return err
		}
		if _, err := tx.GetIntent(ctx, "t", "int_1"); err != nil {
			t.Errorf("staged intent invisible in its own transaction: %v", err)
		}
		if err := tx.InsertIntent(ctx, store.Intent{ID: "int_1", Tenant: "t", CreatedAt: at}); !errors.Is(err, store.ErrExists) {
			t.Errorf("duplicate staged intent: %v", err)
		}
		if err := tx.AppendEvents(ctx, []store.Event{{Tenant: "t", TraceID: "tr", Type: "b", At: at.Add(time.Second)}, {Tenant: "t", TraceID: "tr", Type: "a", At: at}}); err != nil {
			return err
		}
		evs, _ := tx.TraceEvents(ctx, "t", "tr", 10)
		if len(evs) != 2 || evs[0].Type != "a" {
			t.Errorf("staged events: %+v", evs)
		}
		return boom
	})
	if !errors.Is(err, boom) {
		t.Fatalf("Update = %v", err)
	}
	err = s.View(ctx, func(ctx context.Context, tx store.ReadTx) error {
		if _, err := tx.GetIntent(ctx, "t", "int_1"); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("failed Update left its intent: %v", err)
		}
		if evs, _ := tx.TraceEvents(ctx, "t", "tr", 10); len(evs) != 0 {
			t.Errorf("failed Update left events: %+v", evs)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestCanceledContext checks that a canceled context runs nothing.
func TestCanceledContext(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	s := memstore.New()
	defer s.Close()
	ran := false
	err := s.Update(ctx, func(context.Context, store.Tx) error { ran = true; return nil })
	if !errors.Is(err, context.Canceled) || ran {
		t.Errorf("Update with a canceled context = %v (ran %v)", err, ran)
	}
}
