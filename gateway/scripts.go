package gateway

import (
	"context"
	"fmt"
	"maps"

	"github.com/praxa/praxa/contracts"
	"github.com/praxa/praxa/gateway/config"
	"github.com/praxa/praxa/gateway/discovery"
	"github.com/praxa/praxa/gateway/scripts"
	"github.com/praxa/praxa/gateway/workflow"
)

// This file runs script executors and describes scripts. Scripts are
// gateway-wide configuration (package scripts), swapped with the skills by
// a reload (contextState).
//
// A script executor runs as a runner of the engine, like the executors
// that reach a connection: a move whose definition has one runs it once
// outside any store transaction and replays its answer inside (see
// external.go), so a script never holds the store's writer for its time
// limit. A script fails with a contract error, which the move answers
// as it is: nothing changes, not even a proxy run's lastRun.

// withScriptRunner returns runners with the script executor's runner
// added, when the service runs executors at all (runners) or has scripts;
// otherwise runners as they are.
func (s *Service) withScriptRunner(runners map[config.Kind]workflow.Runner, cat *scripts.Catalog) map[config.Kind]workflow.Runner {
	if len(runners) == 0 && cat.Len() == 0 {
		return runners
	}
	out := maps.Clone(runners)
	if out == nil {
		out = map[config.Kind]workflow.Runner{}
	}
	out[config.ExecutorScript] = scriptRunner{s}
	return out
}

// scriptRunner runs a script of the scripts in force.
type scriptRunner struct{ s *Service }

// Run implements workflow.Runner.
func (r scriptRunner) Run(ctx context.Context, x config.Executor, scope workflow.Scope) (map[string]any, error) {
	return r.s.ctxState.scripts().Run(ctx, x, scope)
}

// describeScript answers describe for a script of the index in the
// guidance shape of seeds/000: its body is the script's source.
func (s *Service) describeScript(ctx context.Context, e *env, it *discovery.Item) (any, error) {
	sc, ok := s.ctxState.scripts().Lookup(it.ID)
	if !ok {
		return nil, contracts.Errorf(contracts.CodeNotFound, "there is no script %q", it.ID)
	}
	out := GuidanceDescription{Kind: string(discovery.KindScript), Subject: sc.ID, Verb: "describe", Body: sc.Source,
		Links: []contracts.Link{homeLink(), searchLink("")}}
	var err error
	if out.Lexicon, err = s.guidanceLexicon(ctx, sc.Tags); err != nil {
		return nil, fmt.Errorf("describe %s: %w", sc.ID, err)
	}
	s.describeEvent(e, sc.ID, string(discovery.KindScript))
	return out, nil
}
