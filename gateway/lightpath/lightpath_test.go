package lightpath_test

import (
	"context"
	"errors"
	"path/filepath"
	"testing"
	"time"

	"github.com/praxa/praxa/contracts"
	"github.com/praxa/praxa/gateway/audit"
	"github.com/praxa/praxa/gateway/config"
	"github.com/praxa/praxa/gateway/lightpath"
	"github.com/praxa/praxa/gateway/store"
	"github.com/praxa/praxa/gateway/store/sqlitestore"
	"github.com/praxa/praxa/gateway/workflow"
	"github.com/praxa/praxa/internal/testkit"
)

// newPath returns a Path over a real SQLite file whose proxy_default has
// one noop capability, notes.ping, and a guarded one.
func newPath(t *testing.T) (*lightpath.Path, *sqlitestore.Store, *audit.Auditor) {
	t.Helper()
	st, err := sqlitestore.Open(context.Background(), filepath.Join(t.TempDir(), "praxa.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	a := audit.NewAuditor(st, nil)
	t.Cleanup(func() { a.Close(context.Background()) })
	reg, err := workflow.Compile(nil)
	if err != nil {
		t.Fatal(err)
	}
	schema := map[string]any{"type": "object", "properties": map[string]any{"text": map[string]any{"type": "string"}}}
	if err := reg.AddProxy([]config.ExposedCapability{{ID: "notes.ping", InputSchema: schema},
		{ID: "notes.guarded", Guards: []config.Guard{{Kind: "evidence", Requires: []string{"e"}}}}}); err != nil {
		t.Fatal(err)
	}
	return &lightpath.Path{Engine: &workflow.Engine{Registry: reg}, Journal: a}, st, a
}

// checked returns args checked against capability's input schema, as the
// service checks them before it calls Path.Call.
func checked(t *testing.T, p *lightpath.Path, capability string, args map[string]any) workflow.CheckedArgs {
	t.Helper()
	d, _ := p.Engine.Registry.Lookup(config.ProxyDefaultWorkflow)
	c, err := d.CheckArguments(capability, args, "/input")
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func trace(t *testing.T, st store.Store, id string) []store.Event {
	t.Helper()
	var out []store.Event
	err := st.View(context.Background(), func(ctx context.Context, tx store.ReadTx) error {
		var err error
		out, err = tx.TraceEvents(ctx, "acme", id, 1000)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestCallCommits: concurrent calls each answer once their event is in
// the store (read back without flushing anything), one event per call.
func TestCallCommits(t *testing.T) {
	p, st, _ := newPath(t)
	if !p.Takes("notes.ping") || p.Takes("notes.guarded") || p.Takes("missing") {
		t.Fatalf("Takes: ping %v guarded %v missing %v", p.Takes("notes.ping"), p.Takes("notes.guarded"), p.Takes("missing"))
	}
	const n = 64
	errs := testkit.Parallel(n, func(i int) error {
		tr := "trace-" + string(rune('a'+i%26)) + string(rune('a'+i/26))
		ev := store.Event{Tenant: "acme", Subject: "alice", TraceID: tr, At: time.Now()}
		call, ce := p.Call(context.Background(), "notes.ping", checked(t, p, "notes.ping", map[string]any{"text": "hi"}), ev)
		if ce != nil || !call.OK {
			return errors.New("call: " + ce.Error())
		}
		evs := trace(t, st, tr)
		if len(evs) != 1 || evs[0].Type != lightpath.EventCalled || evs[0].Outcome != "allowed" || evs[0].Attributes["capability"] != "notes.ping" {
			return errors.New("events of " + tr + " after the answer: wrong")
		}
		return nil
	})
	for _, e := range errs {
		t.Error(e)
	}
}

// TestCallLostRecord: an answer whose event cannot be committed is not
// given (the store is gone): the call ends outcome-unknown, since the
// upstream may have acted. A refusal before anything was sent stands.
func TestCallLostRecord(t *testing.T) {
	p, st, _ := newPath(t)
	st.Close()
	ev := store.Event{Tenant: "acme", Subject: "alice", TraceID: "t", At: time.Now()}
	if _, ce := p.Call(context.Background(), "notes.ping", checked(t, p, "notes.ping", nil), ev); ce == nil || ce.Code != contracts.CodeOutcomeUnknown {
		t.Errorf("call with the store closed: %v, want outcome-unknown", ce)
	}
	// Arguments not checked against this definition are checked again.
	if _, ce := p.Call(context.Background(), "notes.ping", workflow.CheckedArgs{}, ev); ce != nil && ce.Code != contracts.CodeOutcomeUnknown {
		t.Errorf("unchecked call with the store closed: %v, want outcome-unknown", ce)
	}
	if _, ce := p.Call(context.Background(), "notes.guarded", workflow.CheckedArgs{}, ev); ce == nil || ce.Code != contracts.CodeUnavailable {
		t.Errorf("a capability that needs a run: %v, want unavailable", ce)
	}
}

// TestCommitAfterClose: Commit on a closed Auditor answers
// ErrAuditorClosed and writes nothing.
func TestCommitAfterClose(t *testing.T) {
	_, st, a := newPath(t)
	if err := a.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	ev := store.Event{Tenant: "acme", TraceID: "closed", At: time.Now(), Type: "x"}
	if err := a.Commit(context.Background(), ev); err != audit.ErrClosed {
		t.Errorf("Commit after Close: %v", err)
	}
	if evs := trace(t, st, "closed"); len(evs) != 0 {
		t.Errorf("events %v", evs)
	}
}
