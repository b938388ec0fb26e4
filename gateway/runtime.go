package gateway

import (
	"context"
	"time"

	"github.com/praxa/praxa/gateway/config"
	"github.com/praxa/praxa/gateway/discovery"
	"github.com/praxa/praxa/gateway/pins"
	"github.com/praxa/praxa/gateway/scripts"
	"github.com/praxa/praxa/gateway/skills"
	"github.com/praxa/praxa/gateway/workflow"
)

// Runtime is what a configuration reload replaces in a running Service:
// the parts of the configuration that calls read as they run. The
// executors' connections (package connect's Switch) and the tools an MCP
// server lists directly (package mcpadapter's DirectSet) are swapped
// beside it by a Reloader. The rest (auth, server limits and address, the
// tool set /mcp registers, the flags) is read at start only.
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
	// Skills are the governed skills aura_get_skill, describe and search
	// answer from (none when nil).
	Skills *skills.Catalog
	// Scripts are the scripts script executors run, and describe and
	// search answer from (none when nil).
	Scripts *scripts.Catalog
	// RunRetention is how long a proxy_default run may stay idle before
	// the run sweeper expires it (0: runs are kept for good); the next
	// sweep uses it.
	RunRetention time.Duration
	// Quotas are the tenant quotas (server.quotas) from the next
	// transaction on.
	Quotas config.Quotas
	// Quarantines are the imported capabilities quarantined by their pins
	// (pins.Check); none when nil.
	Quarantines pins.Quarantines

	// Apply swaps in the parts of the features a Reloader staged
	// (Reloader.Features), in order, right after the workflows.
	Apply []func()
}

// Reload makes rt the configuration the service runs on. Each part is
// swapped atomically, workflows first, so a call sees the definitions of
// one configuration or the other; missions already started keep their
// definition id and move on under the new definition of that id (a
// definition the new configuration drops answers its moves as unknown).
// The features' staged parts (Apply: the knowledge's skills and
// certificate issuers) are swapped next, before the discovery index that
// lists the skills. The executors' connections are
// swapped by the caller before (package connect's Switch), so the new
// workflows never run on old connections. Its log line is logged in ctx
// (the reload's request or trace).
func (s *Service) Reload(ctx context.Context, rt Runtime) {
	if rt.Workflows == nil {
		rt.Workflows, _ = workflow.Compile(nil)
	}
	s.workflows.Replace(rt.Workflows)
	for _, apply := range rt.Apply {
		apply()
	}
	s.cat.Install(rt.Discovery, s.workflows, rt.Lexicon, rt.Skills, rt.Scripts)
	policy := rt.Policy
	s.policy.Store(&policy)
	s.missions.runs.setRetention(rt.RunRetention)
	quotas := rt.Quotas
	s.quotas.quotas.Store(&quotas)
	s.pins.Install(rt.Quarantines)
	s.log.InfoContext(ctx, "configuration reloaded", "workflows", len(s.workflows.IDs()), "skills", rt.Skills.Len(),
		"run_retention", s.RunRetention().String())
}
