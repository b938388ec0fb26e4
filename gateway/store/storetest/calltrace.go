package storetest

import (
	"context"
	"reflect"
	"testing"
	"time"

	"github.com/praxa/praxa/gateway/store"
)

// testEventsCallTrace: TraceEvents finds an event by the trace its caller
// named (CallTraceID) as well as by its own trace, once when both name the
// same trace, in causal order, within the tenant only, and within the
// limit; events staged in the transaction count too.
func testEventsCallTrace(t *testing.T, o Opener) {
	s := o.Open(t)
	ev := func(typ, tenant, trace, call string, at time.Time) store.Event {
		return store.Event{Tenant: tenant, TraceID: trace, CallTraceID: call, Type: typ, At: at, Subject: "alice", Outcome: "allowed"}
	}
	mustUpdate(t, s, func(ctx context.Context, tx store.Tx) error {
		return tx.AppendEvents(ctx, []store.Event{
			ev("start", "a", "req-1", "mine", epoch),
			ev("other", "a", "req-1", "", epoch.Add(time.Millisecond)),
			ev("unrelated", "a", "req-9", "", epoch.Add(2*time.Millisecond)),
			ev("foreign", "b", "req-2", "mine", epoch.Add(3*time.Millisecond)),
			ev("submit", "a", "req-3", "mine", epoch.Add(4*time.Second)),
			ev("self", "a", "mine", "mine", epoch.Add(5*time.Second)),
		})
	})
	types := eventTypes // export.go
	view(t, s, func(ctx context.Context, tx store.ReadTx) error {
		got, err := tx.TraceEvents(ctx, "a", "mine", 100)
		if err != nil {
			t.Fatalf("TraceEvents: %v", err)
		}
		if want := []string{"start", "submit", "self"}; !reflect.DeepEqual(types(got), want) {
			t.Errorf("by the caller's trace: %v, want %v", types(got), want)
		}
		if got[0].TraceID != "req-1" || got[0].CallTraceID != "mine" {
			t.Errorf("the event's traces: %q, %q", got[0].TraceID, got[0].CallTraceID)
		}
		if got, _ := tx.TraceEvents(ctx, "a", "req-1", 100); !reflect.DeepEqual(types(got), []string{"start", "other"}) {
			t.Errorf("by the request's trace: %v", types(got))
		}
		if got, _ := tx.TraceEvents(ctx, "b", "mine", 100); !reflect.DeepEqual(types(got), []string{"foreign"}) {
			t.Errorf("another tenant's: %v", types(got))
		}
		if got, _ := tx.TraceEvents(ctx, "a", "mine", 2); !reflect.DeepEqual(types(got), []string{"start", "submit"}) {
			t.Errorf("limit 2: %v", types(got))
		}
		// An empty trace names no call trace.
		if got, _ := tx.TraceEvents(ctx, "a", "", 100); len(got) != 0 {
			t.Errorf("the empty trace: %v", types(got))
		}
		return nil
	})
	mustUpdate(t, s, func(ctx context.Context, tx store.Tx) error {
		if err := tx.AppendEvents(ctx, []store.Event{ev("staged", "a", "req-4", "mine", epoch.Add(6*time.Second))}); err != nil {
			return err
		}
		got, err := tx.TraceEvents(ctx, "a", "mine", 100)
		if err != nil {
			return err
		}
		if want := []string{"start", "submit", "self", "staged"}; !reflect.DeepEqual(types(got), want) {
			t.Errorf("inside the transaction: %v, want %v", types(got), want)
		}
		return nil
	})
}
