package gateway

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/praxa/praxa/contracts"
	"github.com/praxa/praxa/gateway/audit"
	"github.com/praxa/praxa/gateway/auth"
	"github.com/praxa/praxa/gateway/config"
	"github.com/praxa/praxa/gateway/discovery"
	"github.com/praxa/praxa/gateway/op"
	"github.com/praxa/praxa/gateway/store"
)

// The reads below serve the operator console (package console): they
// check the signed-in person's scopes and tenant like every other call of
// the service. Resolving an approval goes through ResolveApproval, the
// same method as REST and praxa approvals.

// maxMissionEvents bounds one mission history.
const maxMissionEvents = 500

// requireAnyScope refuses p unless it holds one of scopes; the refusal
// names the first.
func requireAnyScope(p *auth.Principal, scopes ...contracts.Scope) error {
	for _, sc := range scopes {
		if p.HasScope(sc) {
			return nil
		}
	}
	return requireScope(p, scopes[0])
}

// ViewApprovals lists the tenant's approvals with the status ("" for all),
// oldest first, for a person who may see them: an approval is a mission's
// pending move, so missions:read reads it as approvals:write does;
// resolving one still needs approvals:write (ResolveApproval).
func (s *Service) ViewApprovals(ctx context.Context, p *auth.Principal, status string, limit int) (ApprovalList, error) {
	if err := requireAnyScope(p, contracts.ScopeMissionsRead, contracts.ScopeApprovalsWrite); err != nil {
		return ApprovalList{}, err
	}
	return s.missions.listApprovals(ctx, p.Tenant, status, limit)
}

// ViewApproval returns one approval of the tenant (scope missions:read or
// approvals:write, as ViewApprovals); another tenant's answers not-found.
func (s *Service) ViewApproval(ctx context.Context, p *auth.Principal, id string) (ApprovalView, error) {
	if err := requireAnyScope(p, contracts.ScopeMissionsRead, contracts.ScopeApprovalsWrite); err != nil {
		return ApprovalView{}, err
	}
	var out ApprovalView
	err := s.store.View(ctx, func(ctx context.Context, tx store.ReadTx) error {
		a, err := tx.GetApproval(ctx, p.Tenant, id)
		if errors.Is(err, store.ErrNotFound) {
			return contracts.Errorf(contracts.CodeNotFound, "there is no approval %s", id)
		}
		out = approvalView(a)
		return err
	})
	if err != nil {
		return out, asContractError(err)
	}
	return out, nil
}

// MissionSummary is one mission of a listing.
type MissionSummary struct {
	ID                string `json:"id"`
	RunID             string `json:"runId"`
	DefinitionID      string `json:"definitionId"`
	DefinitionVersion int    `json:"definitionVersion"`
	State             string `json:"state"`
	Version           int64  `json:"version"`
	Status            string `json:"status"`
	CreatedAt         string `json:"createdAt"`
	UpdatedAt         string `json:"updatedAt"`
}

// ListMissions lists the tenant's missions matching the filter, most
// recently changed first, at most limit (100 when out of 1..500); scope
// missions:read.
func (s *Service) ListMissions(ctx context.Context, p *auth.Principal, f store.MissionFilter, limit int) ([]MissionSummary, error) {
	if err := requireScope(p, contracts.ScopeMissionsRead); err != nil {
		return nil, err
	}
	return viewList(ctx, s.store, func(ctx context.Context, tx store.ReadTx) ([]store.Mission, error) {
		return tx.ListMissions(ctx, p.Tenant, f, listLimit(limit))
	}, func(m store.Mission) MissionSummary {
		return MissionSummary{ID: m.ID, RunID: m.RunID, DefinitionID: m.DefinitionID, DefinitionVersion: m.DefinitionVersion,
			State: m.State, Version: m.Version, Status: m.Status,
			CreatedAt: m.CreatedAt.UTC().Format(time.RFC3339Nano), UpdatedAt: m.UpdatedAt.UTC().Format(time.RFC3339Nano)}
	})
}

// listLimit is a listing's limit: 100 when limit is out of 1..500.
func listLimit(limit int) int {
	if limit <= 0 || limit > 500 {
		return 100
	}
	return limit
}

// viewList reads a listing in one read transaction: the rows read
// returns, each as conv makes it, in a slice that is empty rather than
// nil. A failed read answers no rows and the failure as a contract
// error.
func viewList[R, T any](ctx context.Context, st store.Store, read func(ctx context.Context, tx store.ReadTx) ([]R, error), conv func(R) T) ([]T, error) {
	out := []T{}
	err := st.View(ctx, func(ctx context.Context, tx store.ReadTx) error {
		rows, err := read(ctx, tx)
		for _, r := range rows {
			out = append(out, conv(r))
		}
		return err
	})
	if err != nil {
		return nil, asContractError(err)
	}
	return out, nil
}

// MissionHistory returns the audit events that name the tenant's mission
// (by workflow id), oldest first, redacted as a trace shows them: its
// transitions, approvals and refusals. It needs missions:read and
// traces:read, the scope a trace is read with.
func (s *Service) MissionHistory(ctx context.Context, p *auth.Principal, workflowID string) ([]audit.Event, error) {
	if err := requireScope(p, contracts.ScopeMissionsRead); err != nil {
		return nil, err
	}
	if err := requireScope(p, contracts.ScopeTracesRead); err != nil {
		return nil, err
	}
	return viewList(ctx, s.store, func(ctx context.Context, tx store.ReadTx) ([]store.Event, error) {
		if _, err := tx.GetMission(ctx, p.Tenant, workflowID); errors.Is(err, store.ErrNotFound) {
			return nil, contracts.Errorf(contracts.CodeNotFound, "there is no mission %s", workflowID)
		} else if err != nil {
			return nil, err
		}
		return tx.MissionEvents(ctx, p.Tenant, workflowID, maxMissionEvents)
	}, func(ev store.Event) audit.Event {
		return audit.Event{TraceEvent: op.TraceEventOf(ev), TraceID: ev.TraceID}
	})
}

// CapabilityView is one capability of the catalogue with the guards that
// run before it.
type CapabilityView struct {
	ID          string         `json:"id"`
	Title       string         `json:"title,omitempty"`
	Description string         `json:"description,omitempty"`
	Domain      string         `json:"domain,omitempty"`
	Source      string         `json:"source,omitempty"`
	Executor    string         `json:"executor"`
	Guards      []config.Guard `json:"guards"`
	Produces    []string       `json:"produces,omitempty"`
}

// Capabilities lists the capabilities in force, by id, with their guards
// in the order they run (scope capabilities:read).
func (s *Service) Capabilities(p *auth.Principal) ([]CapabilityView, error) {
	if err := requireScope(p, contracts.ScopeCapabilitiesRead); err != nil {
		return nil, err
	}
	out := []CapabilityView{}
	for _, h := range s.cat.Index().Search(discovery.Query{Kinds: []discovery.Kind{discovery.KindCapability}, Limit: discovery.MaxLimit}) {
		c := h.Item.Capability
		if c == nil {
			continue
		}
		v := CapabilityView{ID: c.ID, Title: c.Title, Description: c.Description, Domain: c.Domain, Source: c.Source,
			Executor: string(config.ExecutorNoop), Guards: c.Guards, Produces: c.Produces}
		if c.Executor != nil {
			v.Executor = string(c.Executor.Kind)
		}
		if v.Guards == nil {
			v.Guards = []config.Guard{}
		}
		out = append(out, v)
	}
	return out, nil
}

// GuardText renders a guard in one line for a person: its kind and what
// it checks.
func GuardText(g config.Guard) string {
	b, err := json.Marshal(g)
	if err != nil {
		return g.Kind
	}
	var m map[string]any
	_ = json.Unmarshal(b, &m)
	delete(m, "kind")
	if len(m) == 0 {
		return g.Kind
	}
	rest, _ := json.Marshal(m)
	return fmt.Sprintf("%s %s", g.Kind, rest)
}
