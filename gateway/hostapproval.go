package gateway

import (
	"slices"

	"github.com/praxa/praxa/gateway/config"
)

// HostApprovable reports whether the pending approval of definitionID's
// transition may be offered to the user of the MCP host whose agent asked
// for it (mcpadapter's URL elicitation to the approval page): only when
// the transition's human executor says approver: host, the transition is
// not destructive, and the approval's queue does not allow self-approval
// (there the host's user, who may be the requester, could grant their own
// request). It reads configuration only: the approval page decides, with
// the approver's own sign-in, scopes and the self-approval rule.
func (s *Service) HostApprovable(definitionID, transition string) bool {
	d, ok := s.workflows.Lookup(definitionID)
	if !ok {
		return false
	}
	t, ok := d.Transition(transition)
	if !ok || t.Executor == nil || !t.Executor.Kind.NeedsApproval() || t.Executor.Approver != config.ApproverHost || t.Destructive() {
		return false
	}
	return !slices.Contains(s.policy.Load().AllowSelfApproval, t.Executor.Queue)
}

// AsksUser reports whether a transition named transition, in any
// configured workflow, declares an input property that keyword marks with
// value (mcpadapter's "x-praxa-ask": "user"): only then may a move of that
// name need an argument the agent cannot know, and only then does
// mcpadapter read the mission before the move. It reads configuration
// only.
func (s *Service) AsksUser(transition, keyword, value string) bool {
	for _, id := range s.workflows.IDs() {
		d, ok := s.workflows.Lookup(id)
		if !ok {
			continue
		}
		t, ok := d.Transition(transition)
		if !ok {
			continue
		}
		props, _ := t.Transition.InputSchema["properties"].(map[string]any)
		for _, p := range props {
			if m, ok := p.(map[string]any); ok && m[keyword] == value {
				return true
			}
		}
	}
	return false
}
