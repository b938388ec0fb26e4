package gateway

import (
	"github.com/praxa/praxa/gateway/config"
	"github.com/praxa/praxa/gateway/discovery"
	"github.com/praxa/praxa/gateway/workflow"
)

// Runtime is what a configuration reload replaces in a running Service:
// the parts of the configuration that calls read as they run. The rest
// (auth, server limits, skills, certificate issuers, the tools /mcp
// registers, the flags) is read at start only.
type Runtime struct {
	// Workflows are the compiled workflow definitions, proxy_default
	// included (connect.Setup).
	Workflows *workflow.Registry
	// Discovery is the catalogue search and describe answer from; nil
	// indexes Workflows alone.
	Discovery *discovery.Index
	// Lexicon holds the configuration's lexicon terms, keyed by term.
	Lexicon map[string]config.LexiconEntry
	// Policy holds the destructive-action denials.
	Policy config.Policy
}

// Reload makes rt the configuration the service runs on. Each part is
// swapped atomically, workflows first, so a call sees the definitions of
// one configuration or the other; missions already started keep their
// definition id and move on under the new definition of that id (a
// definition the new configuration drops answers its moves as unknown).
// The executors' connections are swapped by the caller before (package
// connect's Switch), so the new workflows never run on old connections.
func (s *Service) Reload(rt Runtime) {
	if rt.Workflows == nil {
		rt.Workflows, _ = workflow.Compile(nil)
	}
	s.workflows.Replace(rt.Workflows)
	s.disc.install(rt.Discovery, s.workflows, rt.Lexicon)
	policy := rt.Policy
	s.policy.Store(&policy)
	s.log.Info("configuration reloaded", "workflows", len(s.workflows.IDs()))
}
