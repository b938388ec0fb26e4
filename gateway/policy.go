package gateway

import (
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
	for _, m := range s.policy.Load().DenyDestructive {
		if matches(m, p, toolSet) {
			return &contracts.Error{Code: contracts.CodeDestructiveActionDenied,
				Message: "policy denies destructive actions (" + tool.Name + ") to this caller",
				Hint:    "Ask an operator to take this action, or to change the policy."}
		}
	}
	return nil
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
