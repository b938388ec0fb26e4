package gateway

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/praxa/praxa/contracts"
	"github.com/praxa/praxa/gateway/auth"
	"github.com/praxa/praxa/gateway/knowledge"
	"github.com/praxa/praxa/gateway/store"
	"github.com/praxa/praxa/gateway/store/memstore"
)

// TestConsoleReads: the console's reads check the person's scopes and
// keep to their tenant: an approval is read with missions:read or
// approvals:write, a mission's history needs traces:read too, and another
// tenant's approval or mission answers not-found.
func TestConsoleReads(t *testing.T) {
	ctx := context.Background()
	st := memstore.New()
	defer st.Close()
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	err := st.Update(ctx, func(ctx context.Context, tx store.Tx) error {
		if err := tx.InsertMission(ctx, store.Mission{Tenant: "t1", ID: "wf_1", RunID: "run_1", DefinitionID: "d", DefinitionVersion: 1,
			State: "s", Version: 1, Status: "active", Doc: []byte(`{"context":{}}`), CreatedAt: now, UpdatedAt: now}); err != nil {
			return err
		}
		if err := tx.InsertApproval(ctx, store.Approval{Tenant: "t1", ID: "apr_1", WorkflowID: "wf_1", RunID: "run_1", Transition: "go",
			Status: "pending", RequestedBy: "agent", Doc: []byte(`{"arguments":{"n":1}}`), CreatedAt: now}); err != nil {
			return err
		}
		return tx.AppendEvents(ctx, []store.Event{{Tenant: "t1", TraceID: "tr", WorkflowID: "wf_1", Type: "workflow.started", At: now, Subject: "agent", Outcome: "allowed"}})
	})
	if err != nil {
		t.Fatal(err)
	}
	s := New(st, &Options{})
	defer s.Close(ctx)
	who := func(tenant string, scopes ...contracts.Scope) *auth.Principal {
		return &auth.Principal{Subject: "p", Tenant: tenant, Scopes: auth.NewScopeSet(scopes...)}
	}
	code := func(err error) contracts.Code {
		var ce *contracts.Error
		if errors.As(err, &ce) {
			return ce.Code
		}
		return ""
	}
	for _, c := range []struct {
		name string
		call func() error
		want contracts.Code
	}{
		{"approvals, viewer", func() error {
			_, err := s.ViewApprovals(ctx, who("t1", contracts.ScopeMissionsRead), "pending", 10)
			return err
		}, ""},
		{"approvals, approver", func() error {
			_, err := s.ViewApprovals(ctx, who("t1", contracts.ScopeApprovalsWrite), "pending", 10)
			return err
		}, ""},
		{"approvals, no scope", func() error { _, err := s.ViewApprovals(ctx, who("t1", contracts.ScopeTracesRead), "", 10); return err }, contracts.CodeInsufficientScope},
		{"approval", func() error {
			_, err := s.ViewApproval(ctx, who("t1", contracts.ScopeMissionsRead), "apr_1")
			return err
		}, ""},
		{"approval, other tenant", func() error {
			_, err := s.ViewApproval(ctx, who("t2", contracts.ScopeMissionsRead), "apr_1")
			return err
		}, contracts.CodeNotFound},
		{"approval, no scope", func() error { _, err := s.ViewApproval(ctx, who("t1"), "apr_1"); return err }, contracts.CodeInsufficientScope},
		{"missions", func() error {
			_, err := s.ListMissions(ctx, who("t1", contracts.ScopeMissionsRead), store.MissionFilter{}, 0)
			return err
		}, ""},
		{"missions, no scope", func() error {
			_, err := s.ListMissions(ctx, who("t1", contracts.ScopeApprovalsWrite), store.MissionFilter{}, 0)
			return err
		}, contracts.CodeInsufficientScope},
		{"history", func() error {
			_, err := s.MissionHistory(ctx, who("t1", contracts.ScopeMissionsRead, contracts.ScopeTracesRead), "wf_1")
			return err
		}, ""},
		{"history without traces:read", func() error {
			_, err := s.MissionHistory(ctx, who("t1", contracts.ScopeMissionsRead), "wf_1")
			return err
		}, contracts.CodeInsufficientScope},
		{"history, other tenant", func() error {
			_, err := s.MissionHistory(ctx, who("t2", contracts.ScopeMissionsRead, contracts.ScopeTracesRead), "wf_1")
			return err
		}, contracts.CodeNotFound},
		{"capabilities", func() error { _, err := s.Capabilities(who("t1", contracts.ScopeCapabilitiesRead)); return err }, ""},
		{"capabilities, no scope", func() error { _, err := s.Capabilities(who("t1", contracts.ScopeMissionsRead)); return err }, contracts.CodeInsufficientScope},
	} {
		if got := code(c.call()); got != c.want {
			t.Errorf("%s: %q, want %q", c.name, got, c.want)
		}
	}
	list, _ := s.ViewApprovals(ctx, who("t2", contracts.ScopeMissionsRead), "", 10)
	if len(list.Approvals) != 0 {
		t.Errorf("another tenant's approvals: %+v", list)
	}
	a, _ := s.ViewApproval(ctx, who("t1", contracts.ScopeMissionsRead), "apr_1")
	if a.Arguments["n"] != float64(1) || a.RequestedBy != "agent" {
		t.Errorf("the approval: %+v", a)
	}
	h, _ := s.MissionHistory(ctx, who("t1", contracts.ScopeMissionsRead, contracts.ScopeTracesRead), "wf_1")
	if len(h) != 1 || h[0].Type != "workflow.started" || h[0].TraceID != "tr" {
		t.Errorf("the history: %+v", h)
	}
}

// TestAuditEvents: the audit trail's reads are of the principal's tenant
// only, need traces:read, page back from the newest, refuse a filter they
// cannot apply, and show each event exactly as aura_get_trace shows it.
func TestAuditEvents(t *testing.T) {
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
	s := New(st, &Options{})
	defer s.Close(ctx)
	reader := &auth.Principal{Subject: "auditor", Tenant: "t1", Scopes: auth.NewScopeSet(contracts.ScopeTracesRead)}
	types := func(p AuditPage) (out []string) {
		for _, e := range p.Events {
			out = append(out, e.Type)
		}
		return out
	}

	page, err := s.AuditEvents(ctx, reader, AuditQuery{}, 2, "", "")
	if err != nil || strings.Join(types(page), ",") != "d,b" || page.Older == 0 {
		t.Fatalf("first page: %v %+v %v", types(page), page, err)
	}
	next, err := s.AuditEvents(ctx, reader, AuditQuery{Before: page.Older}, 2, "", "")
	if err != nil || strings.Join(types(next), ",") != "a" || next.Older != 0 {
		t.Errorf("second page: %v %+v %v", types(next), next, err)
	}
	for _, c := range []struct {
		q    AuditQuery
		want string
	}{
		{AuditQuery{Subject: "agent"}, "b,a"},
		{AuditQuery{Outcome: "refused"}, "b"},
		{AuditQuery{Capability: "ship"}, "b"},
		{AuditQuery{Capability: "aura_get_mission"}, "a"},
		{AuditQuery{Since: now.Add(time.Second), Until: now.Add(3 * time.Second)}, "b"},
		{AuditQuery{Subject: "other"}, ""}, // another tenant's
	} {
		got, err := s.AuditEvents(ctx, reader, c.q, 0, "", "")
		if err != nil || strings.Join(types(got), ",") != c.want {
			t.Errorf("%+v: %v %v, want %s", c.q, types(got), err, c.want)
		}
	}

	// The event as aura_get_trace shows it, redaction included.
	s.Register(knowledge.New(s.store, nil).Operations()...)
	res := s.Invoke(ctx, reader, Call{Tool: contracts.ToolGetTrace, Surface: SurfaceREST,
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
		q    AuditQuery
		want contracts.Code
	}{
		{"no scope", &auth.Principal{Subject: "v", Tenant: "t1", Scopes: auth.NewScopeSet(contracts.ScopeMissionsRead)}, AuditQuery{}, contracts.CodeInsufficientScope},
		{"outcome", reader, AuditQuery{Outcome: "maybe"}, contracts.CodeInvalidParams},
		{"until before since", reader, AuditQuery{Since: now, Until: now}, contracts.CodeInvalidParams},
		{"long subject", reader, AuditQuery{Subject: strings.Repeat("s", 257)}, contracts.CodeInvalidParams},
		{"negative page", reader, AuditQuery{Before: -1}, contracts.CodeInvalidParams},
	} {
		if _, err := s.AuditEvents(ctx, c.p, c.q, 0, "", ""); contracts.AsError(err).Code != c.want {
			t.Errorf("%s: %v, want %s", c.name, err, c.want)
		}
	}
}
