package gateway

import (
	"context"
	"strings"
	"testing"

	"github.com/praxa/praxa/contracts"
	"github.com/praxa/praxa/gateway/auth"
	"github.com/praxa/praxa/gateway/knowledge"
	"github.com/praxa/praxa/gateway/op"
	"github.com/praxa/praxa/gateway/store"
	"github.com/praxa/praxa/gateway/store/memstore"
)

// TestRegister: a feature's operations pass the root's pipeline once
// registered (scope from the contract, the answer's status, the audit of
// the read and of a refusal) and answer not-implemented before; wiring
// mistakes panic.
func TestRegister(t *testing.T) {
	ctx := context.Background()
	st := memstore.New()
	defer st.Close()
	s := New(st, nil)
	defer s.Close(ctx)
	call := func(p *auth.Principal, trace string) *Result {
		return s.Invoke(ctx, p, Call{Tool: contracts.ToolGetTrace, Surface: SurfaceMCP, RequestID: "req-" + trace, TraceID: "call-" + trace,
			Args: func() (map[string]any, error) { return map[string]any{"traceId": trace}, nil }})
	}
	reader := &auth.Principal{Tenant: "acme", Subject: "alice", Scopes: auth.NewScopeSet(contracts.ScopeTracesRead)}
	if res := call(reader, "t0"); res.Err == nil || res.Err.Code != contracts.CodeNotImplemented {
		t.Fatalf("before Register: %+v", res.Err)
	}

	s.Register(knowledge.New(st, nil).Operations()...)
	if res := call(&auth.Principal{Tenant: "acme"}, "t1"); res.Err == nil || res.Err.Code != contracts.CodeInsufficientScope {
		t.Errorf("without traces:read: %+v", res.Err)
	}
	if res := call(reader, "t2"); res.Err == nil || res.Err.Code != contracts.CodeNotFound || res.Status != 404 {
		t.Errorf("an absent trace: %+v (status %d)", res.Err, res.Status)
	}
	err := st.Update(ctx, func(ctx context.Context, tx store.Tx) error {
		return tx.AppendEvents(ctx, []store.Event{{Type: "x", Tenant: "acme", TraceID: "t3", Outcome: "allowed", At: s.now()}})
	})
	if err != nil {
		t.Fatal(err)
	}
	res := call(reader, "t3")
	if res.Err != nil || res.Status != 200 || res.Operation != "getTrace" || !strings.Contains(string(res.Body), `"traceId":"t3"`) {
		t.Fatalf("a trace: %+v %s", res, res.Body)
	}
	if err := s.audit.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	var events []store.Event
	_ = st.View(ctx, func(ctx context.Context, tx store.ReadTx) error {
		events, err = tx.TraceEvents(ctx, "acme", "call-t3", 10)
		return err
	})
	if len(events) != 1 || events[0].Type != "trace.read" || events[0].Subject != "alice" || events[0].RequestID != "req-t3" {
		t.Errorf("events of the read = %+v, %v", events, err)
	}

	for _, tt := range []struct {
		name string
		ops  []op.Operation
	}{
		{"Twice", []op.Operation{{Name: "getTrace", Read: func(context.Context, store.ReadTx, *op.Request) (any, error) { return nil, nil }}}},
		{"Neither", []op.Operation{{Name: "unused"}}},
		{"Both", []op.Operation{{Name: "unused",
			Read:   func(context.Context, store.ReadTx, *op.Request) (any, error) { return nil, nil },
			Mutate: func(context.Context, store.Tx, *op.Request) (any, error) { return nil, nil }}}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			defer func() {
				if recover() == nil {
					t.Errorf("Register did not panic")
				}
			}()
			s.Register(tt.ops...)
		})
	}
}
