package gateway

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/praxa/praxa/contracts"
	"github.com/praxa/praxa/gateway/auth"
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
