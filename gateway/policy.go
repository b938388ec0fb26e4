package gateway

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/praxa/praxa/contracts"
	"github.com/praxa/praxa/gateway/auth"
	"github.com/praxa/praxa/gateway/config"
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

// deniedMove applies the destructive-action policy to a mutating call:
// to its tool, then, when the call moves a run of proxy_default (op.fires),
// to the capability the move fires. It runs before anything of the move
// (no lease, no outside call, no version), so a praxec.command start, a
// later submit on the same run and an aura mission move are all checked.
//
// The same place refuses a move that fires a quarantined imported
// capability (pins.go), before anything of it runs.
func (s *Service) deniedMove(ctx context.Context, p *auth.Principal, tool contracts.Tool, op operation, e *env) *contracts.Error {
	if err := s.deniedDestructive(p, tool, e.toolSet); err != nil {
		return err
	}
	denies := op.fires != nil && s.deniesDestructive(p, e.toolSet)
	if op.fires == nil || (!denies && !s.anyQuarantined()) {
		return nil
	}
	def, id, err := op.fires(ctx, e)
	if err != nil {
		return asContractError(err)
	}
	if def != config.ProxyDefaultWorkflow {
		return nil
	}
	if err := s.quarantineRefusal(ctx, id); err != nil {
		return err
	}
	if denies {
		return s.deniedCapability(p, id, e.toolSet)
	}
	return nil
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
	input, _ := e.args["input"].(map[string]any)
	return stringArg(e.args, "definitionId"), stringArg(input, "capability"), nil
}

// firesCreate names what aura_create_mission fires first, its definition
// chosen as prepareCreate chooses it.
func (s *Service) firesCreate(ctx context.Context, e *env) (string, string, error) {
	def, id, _ := firesStart(ctx, e)
	if def == "" {
		if cands := s.candidates(stringArg(e.args, "goal")); len(cands) > 0 {
			def = cands[0].DefinitionID
		}
	}
	return def, id, nil
}

// firesSubmit names what praxec.command submit fires: the transition of
// the run workflowId.
func (s *Service) firesSubmit(ctx context.Context, e *env) (string, string, error) {
	return s.firesMove(ctx, e, false, stringArg(e.args, "workflowId"), stringArg(e.args, "transition"))
}

// firesSignal names what aura_signal_mission fires: the signal of the run
// runId.
func (s *Service) firesSignal(ctx context.Context, e *env) (string, string, error) {
	return s.firesMove(ctx, e, true, stringArg(e.args, "runId"), stringArg(e.args, "signal"))
}

// firesMove reads the definition of the run ref names. A run that is not
// found names nothing (the move answers not-found itself, calling
// nothing); any other failure to read it refuses the move, as the policy
// cannot tell what it would fire.
func (s *Service) firesMove(ctx context.Context, e *env, byRunID bool, ref, transition string) (string, string, error) {
	in, err := s.viewMission(ctx, e.principal.Tenant, byRunID, ref)
	var ce *contracts.Error
	if errors.As(err, &ce) && ce.Code == contracts.CodeNotFound {
		return "", "", nil
	}
	if err != nil {
		return "", "", fmt.Errorf("policy: read the run %s: %w", ref, err)
	}
	return in.DefinitionID, transition, nil
}
