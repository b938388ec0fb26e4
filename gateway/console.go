package gateway

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/praxa/praxa/contracts"
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
	return s.listApprovals(ctx, p.Tenant, status, limit)
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
	if limit <= 0 || limit > 500 {
		limit = 100
	}
	out := []MissionSummary{}
	err := s.store.View(ctx, func(ctx context.Context, tx store.ReadTx) error {
		list, err := tx.ListMissions(ctx, p.Tenant, f, limit)
		for _, m := range list {
			out = append(out, MissionSummary{ID: m.ID, RunID: m.RunID, DefinitionID: m.DefinitionID, DefinitionVersion: m.DefinitionVersion,
				State: m.State, Version: m.Version, Status: m.Status,
				CreatedAt: m.CreatedAt.UTC().Format(time.RFC3339Nano), UpdatedAt: m.UpdatedAt.UTC().Format(time.RFC3339Nano)})
		}
		return err
	})
	if err != nil {
		return out, asContractError(err)
	}
	return out, nil
}

// MissionEvent is one event of a mission's history: as a trace shows it,
// with the trace it belongs to.
type MissionEvent struct {
	op.TraceEvent
	TraceID string `json:"traceId"`
}

// MissionHistory returns the audit events that name the tenant's mission
// (by workflow id), oldest first, redacted as a trace shows them: its
// transitions, approvals and refusals. It needs missions:read and
// traces:read, the scope a trace is read with.
func (s *Service) MissionHistory(ctx context.Context, p *auth.Principal, workflowID string) ([]MissionEvent, error) {
	if err := requireScope(p, contracts.ScopeMissionsRead); err != nil {
		return nil, err
	}
	if err := requireScope(p, contracts.ScopeTracesRead); err != nil {
		return nil, err
	}
	out := []MissionEvent{}
	err := s.store.View(ctx, func(ctx context.Context, tx store.ReadTx) error {
		if _, err := tx.GetMission(ctx, p.Tenant, workflowID); errors.Is(err, store.ErrNotFound) {
			return contracts.Errorf(contracts.CodeNotFound, "there is no mission %s", workflowID)
		} else if err != nil {
			return err
		}
		events, err := tx.MissionEvents(ctx, p.Tenant, workflowID, maxMissionEvents)
		for _, ev := range events {
			out = append(out, MissionEvent{TraceEvent: op.TraceEventOf(ev), TraceID: ev.TraceID})
		}
		return err
	})
	if err != nil {
		return nil, asContractError(err)
	}
	return out, nil
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
	for _, h := range s.disc.index().Search(discovery.Query{Kinds: []discovery.Kind{discovery.KindCapability}, Limit: discovery.MaxLimit}) {
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

// AuditQuery narrows AuditEvents; each member set must match.
type AuditQuery struct {
	// Subject is the principal's subject; Capability a capability or
	// tool (the event's tool, or its capability attribute); Outcome
	// allowed, refused, replayed or failed.
	Subject, Capability, Outcome string
	// Since and Until bound the events' time: Since <= at < Until; a
	// zero time does not bound.
	Since, Until time.Time
	// Before pages back: the events appended before the event of this
	// seq (AuditPage.Older); 0 starts at the newest.
	Before int64
}

// AuditPage is one page of the tenant's audit trail, newest first.
type AuditPage struct {
	// Events are redacted as aura_get_trace shows them, with their trace.
	Events []MissionEvent `json:"events"`
	// Older is the Before of the next page back; 0 when this page ends
	// the trail.
	Older int64 `json:"older,omitempty"`
}

// maxAuditPage bounds one page of AuditEvents; maxAuditFilter one filter
// value.
const (
	maxAuditPage   = 200
	maxAuditFilter = 256
)

// auditOutcomes are the outcomes an audit event records.
var auditOutcomes = []string{"allowed", "refused", "replayed", "failed"}

// AuditEvents lists the tenant's audit events matching q, newest first,
// at most limit (50 when out of 1..200), each redacted as aura_get_trace
// shows it (op.TraceEventOf, package redact): the console's audit page. It
// needs traces:read, the scope a trace is read with, and answers only the
// principal's tenant's events. The read is itself audited (audit.read,
// with the filter), under requestID and traceID.
func (s *Service) AuditEvents(ctx context.Context, p *auth.Principal, q AuditQuery, limit int, requestID, traceID string) (AuditPage, error) {
	if err := requireScope(p, contracts.ScopeTracesRead); err != nil {
		return AuditPage{}, err
	}
	var bad []contracts.FieldError
	for name, v := range map[string]string{"subject": q.Subject, "capability": q.Capability} {
		if len(v) > maxAuditFilter {
			bad = append(bad, contracts.FieldError{Pointer: "/" + name, Detail: fmt.Sprintf("at most %d bytes", maxAuditFilter)})
		}
	}
	if q.Outcome != "" && !slices.Contains(auditOutcomes, q.Outcome) {
		bad = append(bad, contracts.FieldError{Pointer: "/outcome", Detail: "one of " + strings.Join(auditOutcomes, ", ")})
	}
	if !q.Since.IsZero() && !q.Until.IsZero() && !q.Since.Before(q.Until) {
		bad = append(bad, contracts.FieldError{Pointer: "/until", Detail: "after since"})
	}
	if q.Before < 0 {
		bad = append(bad, contracts.FieldError{Pointer: "/before", Detail: "a positive event sequence number"})
	}
	if len(bad) > 0 {
		slices.SortFunc(bad, func(a, b contracts.FieldError) int { return strings.Compare(a.Pointer, b.Pointer) })
		return AuditPage{}, &contracts.Error{Code: contracts.CodeInvalidParams, Message: "the audit filter is not valid", Fields: bad}
	}
	if limit <= 0 || limit > maxAuditPage {
		limit = 50
	}
	f := store.EventFilter{Tenant: p.Tenant, Subject: q.Subject, Capability: q.Capability, Outcome: q.Outcome,
		Since: q.Since, Until: q.Until, BeforeSeq: q.Before, Newest: true}
	out := AuditPage{Events: []MissionEvent{}}
	err := s.store.View(ctx, func(ctx context.Context, tx store.ReadTx) error {
		// One more than the page tells whether an older page exists.
		events, err := tx.ExportEvents(ctx, f, limit+1)
		if len(events) > limit {
			events = events[:limit]
			out.Older = events[limit-1].Seq
		}
		for _, ev := range events {
			out.Events = append(out.Events, MissionEvent{TraceEvent: op.TraceEventOf(ev), TraceID: ev.TraceID})
		}
		return err
	})
	if err != nil {
		return AuditPage{}, asContractError(err)
	}
	attrs := map[string]any{"events": len(out.Events)}
	for k, v := range map[string]string{"subject": q.Subject, "capability": q.Capability, "outcome": q.Outcome} {
		if v != "" {
			attrs[k] = v
		}
	}
	if !q.Since.IsZero() {
		attrs["since"] = q.Since.UTC().Format(time.RFC3339Nano)
	}
	if !q.Until.IsZero() {
		attrs["until"] = q.Until.UTC().Format(time.RFC3339Nano)
	}
	ev := store.Event{Type: EventAuditRead, At: s.now(), Outcome: "allowed", RequestID: requestID, TraceID: traceID, Attributes: attrs}
	byPrincipal(&ev, p)
	s.audit.Record(ev)
	return out, nil
}

// EventAuditRead is the audit event of a read of the audit trail
// (AuditEvents).
const EventAuditRead = "audit.read"
