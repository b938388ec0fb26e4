package gateway

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/praxa/praxa/contracts"
	"github.com/praxa/praxa/gateway/auth"
	"github.com/praxa/praxa/gateway/config"
	"github.com/praxa/praxa/gateway/op"
	"github.com/praxa/praxa/gateway/store"
	"github.com/praxa/praxa/gateway/workflow"
)

// deniedDestructive applies the destructive-action policy: a tool annotated
// destructiveHint is refused for a principal that an entry of
// policy.denyDestructive matches. toolSet is the set the calling surface
// serves ("" for all).
func (s *Service) deniedDestructive(p *auth.Principal, tool contracts.Tool, toolSet string) *contracts.Error {
	if !tool.Annotations.DestructiveHint {
		return nil
	}
	return s.deniedAction(p, tool.Name, toolSet)
}

// deniedCapability applies the destructive-action policy to the proxy
// capability id: one whose annotations in force say destructive (only the
// configuration's, over those derived from its executor: see
// workflow.Transition.Destructive) is refused as a destructive tool is.
// An id that names no capability passes: the move itself refuses it.
func (s *Service) deniedCapability(p *auth.Principal, id, toolSet string) *contracts.Error {
	d, ok := s.workflows.Lookup(config.ProxyDefaultWorkflow)
	if !ok {
		return nil
	}
	if t, ok := d.Transition(id); !ok || !t.Destructive() {
		return nil
	}
	return s.deniedAction(p, id, toolSet)
}

// deniesDestructive reports whether an entry of policy.denyDestructive
// matches p.
func (s *Service) deniesDestructive(p *auth.Principal, toolSet string) bool {
	for _, m := range s.policy.Load().DenyDestructive {
		if matches(m, p, toolSet) {
			return true
		}
	}
	return false
}

// deniedAction is the refusal of the destructive action name (a tool or a
// capability) for p, nil when no entry of policy.denyDestructive matches.
func (s *Service) deniedAction(p *auth.Principal, name, toolSet string) *contracts.Error {
	if !s.deniesDestructive(p, toolSet) {
		return nil
	}
	return &contracts.Error{Code: contracts.CodeDestructiveActionDenied,
		Message: "policy denies destructive actions (" + name + ") to this caller",
		Hint:    "Ask an operator to take this action, or to change the policy."}
}

func matches(m config.PrincipalMatch, p *auth.Principal, toolSet string) bool {
	if m.Tenant != "" && m.Tenant != p.Tenant {
		return false
	}
	if m.Subject != "" && m.Subject != p.Subject {
		return false
	}
	if m.Client != "" && m.Client != p.ClientID {
		return false
	}
	if m.ToolSet != "" && m.ToolSet != toolSet {
		set, ok := contracts.LookupToolSet(m.ToolSet)
		if !ok || p.Tools == nil || !sameNames(set.Tools, p.Tools) {
			return false
		}
	}
	return true
}

func sameNames(a, b []string) bool {
	a, b = slices.Clone(a), slices.Clone(b)
	slices.Sort(a)
	slices.Sort(b)
	return slices.Equal(slices.Compact(a), slices.Compact(b))
}

// firesStart names what praxec.command start fires first: of
// proxy_default, input.capability.
func firesStart(_ context.Context, e *env) (string, string, error) {
	input, _ := e.Args["input"].(map[string]any)
	return stringArg(e.Args, "definitionId"), stringArg(input, "capability"), nil
}

// firesCreate names what aura_create_mission fires first, its definition
// chosen as prepareCreate chooses it.
func (ms *missions) firesCreate(ctx context.Context, e *env) (string, string, error) {
	def, id, _ := firesStart(ctx, e)
	if def == "" {
		if cands := ms.candidates(stringArg(e.Args, "goal")); len(cands) > 0 {
			def = cands[0].DefinitionID
		}
	}
	return def, id, nil
}

// firesSubmit names what praxec.command submit fires: the transition of
// the run workflowId.
func (ms *missions) firesSubmit(ctx context.Context, e *env) (string, string, error) {
	return ms.firesMove(ctx, e, false, stringArg(e.Args, "workflowId"), stringArg(e.Args, "transition"))
}

// firesSignal names what aura_signal_mission fires: the signal of the run
// runId.
func (ms *missions) firesSignal(ctx context.Context, e *env) (string, string, error) {
	return ms.firesMove(ctx, e, true, stringArg(e.Args, "runId"), stringArg(e.Args, "signal"))
}

// firesMove reads the definition of the run ref names. A run that is not
// found names nothing (the move answers not-found itself, calling
// nothing); any other failure to read it refuses the move, as the policy
// cannot tell what it would fire.
func (ms *missions) firesMove(ctx context.Context, e *env, byRunID bool, ref, transition string) (string, string, error) {
	in, err := ms.viewMission(ctx, e.Principal.Tenant, byRunID, ref)
	var ce *contracts.Error
	if errors.As(err, &ce) && ce.Code == contracts.CodeNotFound {
		return "", "", nil
	}
	if err != nil {
		return "", "", fmt.Errorf("policy: read the run %s: %w", ref, err)
	}
	return in.DefinitionID, transition, nil
}

// deniedApproval applies the destructive-action policy to the approver of
// approval id: approving fires the waiting transition, so when it is a
// destructive proxy capability (deniedCapability) and an entry of
// policy.denyDestructive matches the approver, the approval is refused
// before anything runs, audited as approval.refused, and stays pending
// for another approver (or a rejection). The requester was checked when
// the move was asked for. Only a matched approver pays for the reads; an
// approval or mission it cannot read is left to the resolution, which
// answers it.
func (s *Service) deniedApproval(ctx context.Context, e *env, id string) *contracts.Error {
	p := e.Principal
	if !s.deniesDestructive(p, e.toolSet) {
		return nil
	}
	var a store.Approval
	var in *workflow.Instance
	err := s.store.View(ctx, func(ctx context.Context, tx store.ReadTx) error {
		var err error
		if a, err = tx.GetApproval(ctx, p.Tenant, id); err != nil {
			return err
		}
		in, _, err = s.missions.loadMission(ctx, tx, p.Tenant, false, a.WorkflowID)
		return err
	})
	if err != nil || a.Status != "pending" || in.DefinitionID != config.ProxyDefaultWorkflow {
		return nil
	}
	ce := s.deniedCapability(p, a.Transition, e.toolSet)
	if ce == nil {
		return nil
	}
	ce.Message = fmt.Sprintf("approval %s would fire %s, a destructive capability, and policy denies destructive actions to its approver %s",
		id, a.Transition, p.Subject)
	ce.Hint = "Ask another person with approvals:write, whom the policy allows destructive actions, to approve it; or reject it."
	ce.Links = []contracts.Link{{Rel: "get", Title: "Read the run that waits for the approval", Method: contracts.ToolPraxecQuery,
		Args: map[string]any{"workflowId": a.WorkflowID}}}
	s.audit.Record(e.EventOf(op.EventSpec{Type: "approval.refused", Outcome: "refused", Code: string(ce.Code),
		WorkflowID: a.WorkflowID, RunID: a.RunID, Attributes: map[string]any{"approvalId": id, "queue": a.Queue, "transition": a.Transition}}))
	return ce
}
