package audit_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/praxa/praxa/contracts"
	"github.com/praxa/praxa/gateway"
	"github.com/praxa/praxa/gateway/audit"
	"github.com/praxa/praxa/gateway/auth"
	"github.com/praxa/praxa/gateway/knowledge"
	"github.com/praxa/praxa/gateway/store"
	"github.com/praxa/praxa/gateway/store/memstore"
)

// TestEvents: the audit trail's reads are of the principal's tenant
// only, need traces:read, page back from the newest, refuse a filter they
// cannot apply, and show each event exactly as aura_get_trace shows it.
func TestEvents(t *testing.T) {
	ctx := context.Background()
	st := memstore.New()
	defer st.Close()
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	secret := map[string]any{"capability": "ship", "headers": []any{map[string]any{"Authorization": "Bearer x"}}, "password": "p", "kept": "v"}
	err := st.Update(ctx, func(ctx context.Context, tx store.Tx) error {
		return tx.AppendEvents(ctx, []store.Event{
			{Tenant: "t1", TraceID: "tr1", Type: "a", At: now, Subject: "agent", Outcome: "allowed", Tool: "aura_get_mission"},
			{Tenant: "t1", TraceID: "tr2", Type: "b", At: now.Add(time.Second), Subject: "agent", Outcome: "refused", Code: "x", Attributes: secret},
			{Tenant: "t2", TraceID: "tr3", Type: "c", At: now.Add(2 * time.Second), Subject: "other", Outcome: "allowed"},
			{Tenant: "t1", TraceID: "tr4", Type: "d", At: now.Add(3 * time.Second), Subject: "op", Outcome: "allowed"},
		})
	})
	if err != nil {
		t.Fatal(err)
	}
	a := audit.NewAuditor(st, nil)
	s := gateway.New(st, &gateway.Options{Auditor: a})
	defer s.Close(ctx) // closes a too
	reader := &auth.Principal{Subject: "auditor", Tenant: "t1", Scopes: auth.NewScopeSet(contracts.ScopeTracesRead)}
	types := func(p audit.Page) (out []string) {
		for _, e := range p.Events {
			out = append(out, e.Type)
		}
		return out
	}

	page, err := a.Events(ctx, reader, audit.Query{}, 2, "", "")
	if err != nil || strings.Join(types(page), ",") != "d,b" || page.Older == 0 {
		t.Fatalf("first page: %v %+v %v", types(page), page, err)
	}
	next, err := a.Events(ctx, reader, audit.Query{Before: page.Older}, 2, "", "")
	if err != nil || strings.Join(types(next), ",") != "a" || next.Older != 0 {
		t.Errorf("second page: %v %+v %v", types(next), next, err)
	}
	for _, c := range []struct {
		q    audit.Query
		want string
	}{
		{audit.Query{Subject: "agent"}, "b,a"},
		{audit.Query{Outcome: "refused"}, "b"},
		{audit.Query{Capability: "ship"}, "b"},
		{audit.Query{Capability: "aura_get_mission"}, "a"},
		{audit.Query{Since: now.Add(time.Second), Until: now.Add(3 * time.Second)}, "b"},
		{audit.Query{Subject: "other"}, ""}, // another tenant's
	} {
		got, err := a.Events(ctx, reader, c.q, 0, "", "")
		if err != nil || strings.Join(types(got), ",") != c.want {
			t.Errorf("%+v: %v %v, want %s", c.q, types(got), err, c.want)
		}
	}

	// The event as aura_get_trace shows it, redaction included.
	s.Register(knowledge.New(st, nil).Operations()...)
	res := s.Invoke(ctx, reader, gateway.Call{Tool: contracts.ToolGetTrace, Surface: gateway.SurfaceREST,
		Args: func() (map[string]any, error) { return map[string]any{"traceId": "tr2"}, nil }})
	if res.Err != nil {
		t.Fatal(res.Err)
	}
	var trace struct{ Events []json.RawMessage }
	if err := json.Unmarshal(res.Body, &trace); err != nil || len(trace.Events) != 1 {
		t.Fatalf("aura_get_trace: %s %v", res.Body, err)
	}
	listed, _ := json.Marshal(page.Events[1].TraceEvent)
	if string(listed) != string(trace.Events[0]) || strings.Contains(string(listed), "Bearer x") || !strings.Contains(string(listed), `"kept":"v"`) {
		t.Errorf("the audit page's event:\n%s\naura_get_trace's:\n%s", listed, trace.Events[0])
	}

	for _, c := range []struct {
		name string
		p    *auth.Principal
		q    audit.Query
		want contracts.Code
	}{
		{"no scope", &auth.Principal{Subject: "v", Tenant: "t1", Scopes: auth.NewScopeSet(contracts.ScopeMissionsRead)}, audit.Query{}, contracts.CodeInsufficientScope},
		{"outcome", reader, audit.Query{Outcome: "maybe"}, contracts.CodeInvalidParams},
		{"until before since", reader, audit.Query{Since: now, Until: now}, contracts.CodeInvalidParams},
		{"long subject", reader, audit.Query{Subject: strings.Repeat("s", 257)}, contracts.CodeInvalidParams},
		{"negative page", reader, audit.Query{Before: -1}, contracts.CodeInvalidParams},
	} {
		if _, err := a.Events(ctx, c.p, c.q, 0, "", ""); contracts.AsError(err).Code != c.want {
			t.Errorf("%s: %v, want %s", c.name, err, c.want)
		}
	}
}
