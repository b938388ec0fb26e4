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
	if !ok || t.Executor == nil || t.Executor.Kind != config.ExecutorHuman || t.Executor.Approver != config.ApproverHost || t.Destructive() {
		return false
	}
	return !slices.Contains(s.policy.Load().AllowSelfApproval, t.Executor.Queue)
}
