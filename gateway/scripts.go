package gateway

import (
	"context"
	"maps"

	"github.com/praxa/praxa/gateway/catalogue"
	"github.com/praxa/praxa/gateway/config"
	"github.com/praxa/praxa/gateway/scripts"
	"github.com/praxa/praxa/gateway/workflow"
)

// This file runs script executors and describes scripts. Scripts are
// gateway-wide configuration (package scripts), swapped with the skills by
// a reload (catalogue.Catalogue.Install).
//
// A script executor runs as a runner of the engine, like the executors
// that reach a connection: a move whose definition has one runs it once
// outside any store transaction and replays its answer inside (see
// external.go), so a script never holds the store's writer for its time
// limit. A script fails with a contract error, which the move answers
// as it is: nothing changes, not even a proxy run's lastRun.

// withScriptRunner returns runners with the script executor's runner
// added (it runs the scripts in force in the catalogue in), when the
// service runs executors at all (runners) or has scripts;
// otherwise runners as they are.
func withScriptRunner(runners map[config.Kind]workflow.Runner, cat *scripts.Catalog, in *catalogue.Catalogue) map[config.Kind]workflow.Runner {
	if len(runners) == 0 && cat.Len() == 0 {
		return runners
	}
	out := maps.Clone(runners)
	if out == nil {
		out = map[config.Kind]workflow.Runner{}
	}
	out[config.ExecutorScript] = scriptRunner{in}
	return out
}

// scriptRunner runs a script of the scripts in force.
type scriptRunner struct{ cat *catalogue.Catalogue }

// Run implements workflow.Runner.
func (r scriptRunner) Run(ctx context.Context, x config.Executor, scope workflow.Scope) (map[string]any, error) {
	return r.cat.Scripts().Run(ctx, x, scope)
}
