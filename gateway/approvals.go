package gateway

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/praxa/praxa/contracts"
	"github.com/praxa/praxa/gateway/auth"
	"github.com/praxa/praxa/gateway/op"
	"github.com/praxa/praxa/gateway/store"
)

// ApprovalView is a human approval as the operator endpoints show it.
type ApprovalView struct {
	ID          string         `json:"id"`
	Status      string         `json:"status"`
	WorkflowID  string         `json:"workflowId"`
	RunID       string         `json:"runId"`
	Transition  string         `json:"transition"`
	Queue       string         `json:"queue,omitempty"`
	Arguments   map[string]any `json:"arguments,omitempty"`
	RequestedBy string         `json:"requestedBy"`
	RequestedAt string         `json:"requestedAt"`
	ResolvedBy  string         `json:"resolvedBy,omitempty"`
	ResolvedAt  string         `json:"resolvedAt,omitempty"`
}

func approvalView(a store.Approval) ApprovalView {
	v := ApprovalView{ID: a.ID, Status: a.Status, WorkflowID: a.WorkflowID, RunID: a.RunID, Transition: a.Transition,
		Queue: a.Queue, RequestedBy: a.RequestedBy, RequestedAt: a.CreatedAt.UTC().Format(time.RFC3339Nano), ResolvedBy: a.ResolvedBy}
	if !a.ResolvedAt.IsZero() {
		v.ResolvedAt = a.ResolvedAt.UTC().Format(time.RFC3339Nano)
	}
	var doc struct {
		Arguments map[string]any `json:"arguments"`
	}
	if json.Unmarshal(a.Doc, &doc) == nil {
		v.Arguments = doc.Arguments
	}
	return v
}

// ApprovalList is the answer of the approval listing.
type ApprovalList struct {
	Approvals []ApprovalView `json:"approvals"`
}

// ListApprovals lists the tenant's approvals with the status ("" for all),
// oldest first (scope approvals:write).
func (s *Service) ListApprovals(ctx context.Context, p *auth.Principal, status string, limit int) (ApprovalList, error) {
	if err := requireScope(p, contracts.ScopeApprovalsWrite); err != nil {
		return ApprovalList{}, err
	}
	return s.missions.listApprovals(ctx, p.Tenant, status, limit)
}

// listApprovals lists the tenant's approvals once the caller's scope was
// checked (ListApprovals, ViewApprovals).
func (ms *missions) listApprovals(ctx context.Context, tenant, status string, limit int) (ApprovalList, error) {
	switch status {
	case "", "pending", "approved", "rejected", "cancelled":
	default:
		return ApprovalList{}, &contracts.Error{Code: contracts.CodeInvalidParams, Message: "status must be pending, approved, rejected or cancelled",
			Fields: []contracts.FieldError{{Pointer: "/status", Keyword: "enum", Detail: "must be one of the allowed values"}}}
	}
	list, err := viewList(ctx, ms.store, func(ctx context.Context, tx store.ReadTx) ([]store.Approval, error) {
		return tx.ListApprovals(ctx, tenant, status, listLimit(limit))
	}, approvalView)
	return ApprovalList{Approvals: list}, err
}

// Resolution is the answer of resolving an approval.
type Resolution struct {
	Approval ApprovalView `json:"approval"`
	Mission  Projection   `json:"mission"`
}

// ResolveApproval approves or rejects a pending approval of the tenant
// (scope approvals:write). Approving fires the waiting transition, its
// guards checked again; rejecting leaves the mission where it was. Both
// commit with their audit events in one transaction. A move lease found
// past its deadline on the mission's version is resolved first
// (leases.go) and that resolution commits whatever the answer, which is
// then what a retry would answer; an approved move that fails after one
// of its calls may have acted answers, and records, outcome-unknown.
func (s *Service) ResolveApproval(ctx context.Context, p *auth.Principal, id string, approve bool, note, requestID, traceID string) (Resolution, error) {
	if err := requireScope(p, contracts.ScopeApprovalsWrite); err != nil {
		return Resolution{}, err
	}
	e := &env{Request: op.Actor{Principal: p, Tool: "approvals", Operation: "resolveApproval"}.Request(s.now())}
	e.RequestID, e.TraceID = requestID, traceID
	if approve {
		// Before anything runs: the approved move may call outside.
		if err := s.checkApprover(ctx, e, id); err != nil {
			return Resolution{}, err
		}
		// The approved move fires as the approver's act: the
		// destructive-action policy applies to them (policy.go).
		if err := s.deniedApproval(ctx, e, id); err != nil {
			return Resolution{}, err
		}
	}
	return s.missions.resolveApproval(ctx, e, id, approve, note)
}

// resolveApproval resolves approval id once the approver was admitted
// (ResolveApproval): the move under its lease, its commit, and the
// resumptions the commit left due.
func (ms *missions) resolveApproval(ctx context.Context, e *env, id string, approve bool, note string) (Resolution, error) {
	p := e.Principal
	defer ms.prepareApproval(ctx, e, p.Tenant, id, approve)()
	if e.refusal != nil {
		// Another request holds the move lease on the version (leases.go).
		return Resolution{}, e.refusal
	}
	var res Resolution
	// refusal is an answer that commits with what its transaction
	// recorded: a stale lease resolved, or the outcome-unknown of a move
	// that failed after a call that may have acted (leases.go). Rolling
	// those back would answer one thing now and another on retry.
	var refusal error
	err := ms.store.Update(ctx, func(ctx context.Context, tx store.Tx) error {
		e.Events = e.Events[:0]
		refusal = nil
		recorded := false
		refuse := func(err error) error {
			var ce *contracts.Error
			if !recorded || !errors.As(err, &ce) || ce.Code == contracts.CodeInternal || ce.Code == contracts.CodeUnavailable {
				return err
			}
			refusal = err
			return tx.AppendEvents(ctx, e.Events)
		}
		for {
			a, err := tx.GetApproval(ctx, p.Tenant, id)
			if errors.Is(err, store.ErrNotFound) {
				return refuse(contracts.Errorf(contracts.CodeNotFound, "there is no approval %s", id))
			}
			if err != nil {
				return err
			}
			if a.Status != "pending" {
				if replay := approvalReplay(a); approve && replay != nil {
					// Approving called outside and its outcome is unknown: the
					// record answers, nothing calls again (leases.go).
					return refuse(replay)
				}
				return refuse(contracts.Errorf(contracts.CodeMissionStateConflict, "approval %s is already %s", id, a.Status))
			}
			in, m, err := ms.loadMission(ctx, tx, p.Tenant, false, a.WorkflowID)
			if err != nil {
				return refuse(err)
			}
			if !recorded {
				// A lease left past its deadline on the version (its
				// gateway stopped mid-call, maybe approving this very
				// approval) is resolved first, and committed whatever the
				// answer: the approval and the workflow are read again.
				stale, err := ms.leases.resolveStaleLease(ctx, tx, e, in)
				if err != nil {
					return err
				}
				if stale {
					recorded = true
					continue
				}
			}
			out, err := ms.engine.Resolve(ms.moveCtx(ctx, e), in, id, approve, p.Subject)
			if err != nil {
				if approve && e.actedBefore(in) {
					// A call of the approved move may have acted before it
					// failed: answer, and record, its outcome-unknown (the
					// approval keeps it for its retries).
					ce := actedUnknown(fmt.Sprintf("the move %s on workflow %s at version %d", a.Transition, in.ID, in.Version), err)
					answer, rerr := ms.leases.recordUnknown(ctx, tx, e, m, *e.lease, ce, false)
					if rerr != nil {
						return rerr
					}
					recorded = true
					return refuse(answer)
				}
				return refuse(moveError(err, in.ID))
			}
			a.Status = "rejected"
			if approve {
				a.Status = "approved"
			}
			a.ResolvedBy, a.ResolvedAt = p.Subject, e.Now
			if err := tx.UpdateApproval(ctx, a, "pending"); err != nil {
				return err
			}
			if err := ms.persist(ctx, tx, e, out, in, m); err != nil {
				return err
			}
			if note != "" {
				for i := range e.Events {
					if e.Events[i].Attributes == nil {
						e.Events[i].Attributes = map[string]any{}
					}
					e.Events[i].Attributes["note"] = note
				}
			}
			res = Resolution{Approval: approvalView(a), Mission: project(ms.workflows, out.Instance, statusExecuted, op.StylePraxec, out.Chain)}
			return tx.AppendEvents(ctx, e.Events)
		}
	})
	if err == nil {
		ms.resumeAfterCommit(ctx, e) // waits.go
	}
	if err == nil && refusal != nil {
		err = refusal
	}
	if err != nil {
		return res, asContractError(err)
	}
	return res, nil
}

// checkApprover refuses an approval by the principal that asked for it
// (its subject requested the move), unless policy.allowSelfApproval names
// the approval's queue; the refusal is audited. An approval it cannot
// read is left to the resolution, which answers it.
func (s *Service) checkApprover(ctx context.Context, e *env, id string) error {
	var a store.Approval
	err := s.store.View(ctx, func(ctx context.Context, tx store.ReadTx) error {
		var err error
		a, err = tx.GetApproval(ctx, e.Principal.Tenant, id)
		return err
	})
	if err != nil || a.Status != "pending" || a.RequestedBy == "" || a.RequestedBy != e.Principal.Subject ||
		slices.Contains(s.policy.Load().AllowSelfApproval, a.Queue) {
		return nil
	}
	ce := &contracts.Error{Code: contracts.CodeSelfApproval,
		Message: fmt.Sprintf("approval %s was asked for by %s, who cannot also grant it", id, a.RequestedBy),
		Hint:    "Ask another person with approvals:write to approve it (in the console, praxa approvals approve, or POST /v8/approvals/{approvalId}/approve), or reject it yourself.",
		Links: []contracts.Link{
			{Rel: "get", Title: "Read the run that waits for the approval", Method: contracts.ToolPraxecQuery,
				Args: map[string]any{"workflowId": a.WorkflowID}},
			{Rel: "reject", Title: "Reject it yourself (scope approvals:write)", Method: "POST /v8/approvals/{approvalId}/reject",
				Args: map[string]any{"approvalId": id}},
			{Rel: "operator_path", Title: "Another person with approvals:write approves it", Method: "cli",
				Args: map[string]any{"command": "praxa approvals approve " + id + " --tenant " + a.Tenant}},
		}}
	s.audit.Record(e.EventOf(op.EventSpec{Type: "approval.refused", Outcome: "refused", Code: string(ce.Code),
		WorkflowID: a.WorkflowID, RunID: a.RunID, Attributes: map[string]any{"approvalId": id, "queue": a.Queue, "transition": a.Transition}}))
	return ce
}
