package storetest

import (
	"context"
	"reflect"
	"testing"
	"time"

	"github.com/praxa/praxa/gateway/store"
)

// exportEvents appends the events the export and retention cases read:
// two tenants, three traces (one named by a caller), two runs, over four
// seconds; two subjects, a refusal, a capability named by a move's
// attribute and by a read's tool.
func exportEvents(t *testing.T, s store.Store) {
	t.Helper()
	ev := func(typ, tenant, trace, call, run string, at time.Duration) store.Event {
		return store.Event{Tenant: tenant, TraceID: trace, CallTraceID: call, RunID: run, Type: typ, At: epoch.Add(at),
			Subject: "alice", Outcome: "allowed", Attributes: map[string]any{"n": float64(at / time.Second)}}
	}
	bob := ev("b.start", "b", "t2", "", "r2", time.Second)
	bob.Subject = "bob"
	move := ev("a.move", "a", "t3", "t1", "r1", 2*time.Second)
	move.Attributes["capability"] = "ship"
	read := ev("a.read", "a", "t4", "", "", 3*time.Second)
	read.Outcome, read.Tool = "refused", "ship"
	mustUpdate(t, s, func(ctx context.Context, tx store.Tx) error {
		return tx.AppendEvents(ctx, []store.Event{ev("a.start", "a", "t1", "", "r1", 0), bob, move, read})
	})
	// Appended later, recorded earlier: export is in append order.
	mustUpdate(t, s, func(ctx context.Context, tx store.Tx) error {
		return tx.AppendEvents(ctx, []store.Event{ev("a.late", "a", "t5", "", "r1", 500*time.Millisecond)})
	})
}

func eventTypes(events []store.Event) []string {
	return each(events, func(e store.Event) string { return e.Type })
}

// testExportEvents: ExportEvents filters by tenant (or none), time range,
// types, trace (the event's or the caller's), run, subject, outcome and
// capability (the tool or the capability attribute), in append order or
// newest first, pages by AfterSeq (BeforeSeq newest first) within the
// limit, and returns each event whole, its tenant included.
func testExportEvents(t *testing.T, o Opener) {
	s := o.Open(t)
	exportEvents(t, s)
	view(t, s, func(ctx context.Context, tx store.ReadTx) error {
		for _, tc := range []struct {
			name string
			f    store.EventFilter
			want []string
		}{
			{"everything", store.EventFilter{}, []string{"a.start", "b.start", "a.move", "a.read", "a.late"}},
			{"tenant a", store.EventFilter{Tenant: "a"}, []string{"a.start", "a.move", "a.read", "a.late"}},
			{"since 1s, until 3s", store.EventFilter{Since: epoch.Add(time.Second), Until: epoch.Add(3 * time.Second)}, []string{"b.start", "a.move"}},
			{"types", store.EventFilter{Types: []string{"a.read", "b.start"}}, []string{"b.start", "a.read"}},
			{"trace t1, the caller's too", store.EventFilter{TraceID: "t1"}, []string{"a.start", "a.move"}},
			{"run r1 of tenant a", store.EventFilter{Tenant: "a", RunID: "r1"}, []string{"a.start", "a.move", "a.late"}},
			{"no such tenant", store.EventFilter{Tenant: "c"}, []string{}},
			{"subject bob", store.EventFilter{Subject: "bob"}, []string{"b.start"}},
			{"outcome refused", store.EventFilter{Outcome: "refused"}, []string{"a.read"}},
			{"capability ship: attribute or tool", store.EventFilter{Capability: "ship"}, []string{"a.move", "a.read"}},
			{"capability of no event", store.EventFilter{Capability: "n"}, []string{}},
			{"capability and outcome", store.EventFilter{Capability: "ship", Outcome: "allowed", Subject: "alice"}, []string{"a.move"}},
			{"newest first, tenant a", store.EventFilter{Tenant: "a", Newest: true}, []string{"a.late", "a.read", "a.move", "a.start"}},
			{"newest first since 1s", store.EventFilter{Since: epoch.Add(time.Second), Newest: true}, []string{"a.read", "a.move", "b.start"}},
		} {
			got, err := tx.ExportEvents(ctx, tc.f, 100)
			if err != nil {
				t.Fatalf("%s: %v", tc.name, err)
			}
			if !reflect.DeepEqual(eventTypes(got), tc.want) {
				t.Errorf("%s: %v, want %v", tc.name, eventTypes(got), tc.want)
			}
		}
		// Pages of two.
		var all []string
		var after int64
		for range 4 {
			page, err := tx.ExportEvents(ctx, store.EventFilter{AfterSeq: after}, 2)
			if err != nil {
				t.Fatal(err)
			}
			if len(page) == 0 {
				break
			}
			if len(page) > 2 {
				t.Fatalf("a page of %d over the limit 2", len(page))
			}
			all = append(all, eventTypes(page)...)
			after = page[len(page)-1].Seq
		}
		if want := []string{"a.start", "b.start", "a.move", "a.read", "a.late"}; !reflect.DeepEqual(all, want) {
			t.Errorf("paged: %v, want %v", all, want)
		}
		// Pages of two back from the newest, as the console reads them.
		all = nil
		var before int64
		for range 4 {
			page, err := tx.ExportEvents(ctx, store.EventFilter{Newest: true, BeforeSeq: before}, 2)
			if err != nil {
				t.Fatal(err)
			}
			if len(page) == 0 {
				break
			}
			all = append(all, eventTypes(page)...)
			before = page[len(page)-1].Seq
		}
		if want := []string{"a.late", "a.read", "a.move", "b.start", "a.start"}; !reflect.DeepEqual(all, want) {
			t.Errorf("paged newest first: %v, want %v", all, want)
		}
		got, err := tx.ExportEvents(ctx, store.EventFilter{Types: []string{"b.start"}}, 10)
		if err != nil || len(got) != 1 {
			t.Fatalf("b.start: %v %v", got, err)
		}
		if e := got[0]; e.Tenant != "b" || e.TraceID != "t2" || e.RunID != "r2" || !e.At.Equal(epoch.Add(time.Second)) ||
			e.Subject != "bob" || e.Outcome != "allowed" || e.Seq == 0 || !reflect.DeepEqual(e.Attributes, map[string]any{"n": float64(1)}) {
			t.Errorf("the exported event: %+v", e)
		}
		return nil
	})
}

// testDeleteEventsBefore: the retention deletes the events recorded
// before a time, oldest appended first, at most limit a call, across
// tenants, and leaves the rest readable.
func testDeleteEventsBefore(t *testing.T, o Opener) {
	s := o.Open(t)
	exportEvents(t, s)
	deleted := func(before time.Time, limit int) int {
		t.Helper()
		var n int
		mustUpdate(t, s, func(ctx context.Context, tx store.Tx) error {
			var err error
			n, err = tx.DeleteEventsBefore(ctx, before, limit)
			return err
		})
		return n
	}
	left := func() []string {
		t.Helper()
		var got []store.Event
		view(t, s, func(ctx context.Context, tx store.ReadTx) error {
			var err error
			got, err = tx.ExportEvents(ctx, store.EventFilter{}, 100)
			return err
		})
		return eventTypes(got)
	}
	// Before 2s: a.start, b.start and a.late; the first two by append order.
	if n := deleted(epoch.Add(2*time.Second), 2); n != 2 {
		t.Errorf("first batch deleted %d, want 2", n)
	}
	if got, want := left(), []string{"a.move", "a.read", "a.late"}; !reflect.DeepEqual(got, want) {
		t.Errorf("after the first batch: %v, want %v", got, want)
	}
	if n := deleted(epoch.Add(2*time.Second), 2); n != 1 {
		t.Errorf("second batch deleted %d, want 1", n)
	}
	if n := deleted(epoch.Add(2*time.Second), 2); n != 0 {
		t.Errorf("third batch deleted %d, want 0", n)
	}
	if got, want := left(), []string{"a.move", "a.read"}; !reflect.DeepEqual(got, want) {
		t.Errorf("after the retention: %v, want %v", got, want)
	}
	// The trace reads no longer find what went, and still find the rest.
	view(t, s, func(ctx context.Context, tx store.ReadTx) error {
		if got, _ := tx.TraceEvents(ctx, "a", "t1", 10); !reflect.DeepEqual(eventTypes(got), []string{"a.move"}) {
			t.Errorf("trace t1 after the retention: %v", eventTypes(got))
		}
		return nil
	})
}
