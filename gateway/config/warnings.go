package config

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"
)

// Warnings lists what in a valid configuration works, but maybe not as its
// author expects. Each names where it comes from; none refuses the file.
//
//   - A capability or transition whose executor may run longer than
//     server.limits.requestTimeout (its timeoutMs, or with reliability its
//     worst case of retries and fallbacks): a call that runs that long
//     answers 504 outcome-unknown when the request's deadline passes, and
//     finishes under its lease; the caller reads the outcome back with the
//     same idempotency key. Executors without timeoutMs are not listed
//     (the default timeout is the gateway's, not the author's choice).
//     Nor are workflow executors: their timeoutMs bounds a parked wait for
//     a sub-workflow, which no request holds.
//   - A cli executor that sets unconfinedArguments: the $. arguments no
//     paths entry declares reach its command with no path check.
func (c *Config) Warnings() []string {
	limit := time.Duration(c.Server.Limits.RequestTimeout)
	if limit <= 0 {
		limit = DefaultRequestTimeout
	}
	var out []string
	long := func(where string, d time.Duration) {
		out = append(out, fmt.Sprintf("%s: the executor may run for %s, longer than server.limits.requestTimeout (%s): "+
			"a call that runs that long answers 504 outcome-unknown and finishes in the background (retry the same request with the same key to read its outcome)",
			where, d, limit))
	}
	for _, x := range c.Exposed() {
		if x.Executor == nil || x.Executor.Kind.Runs() == RunWorkflow || x.Executor.TimeoutMs == 0 && (x.Reliability == nil || x.Reliability.TimeoutMs == 0) {
			continue
		}
		if d := x.Reliability.WorstCase(*x.Executor); d > limit {
			long(x.Source, d)
		}
	}
	for _, id := range slices.Sorted(maps.Keys(c.Workflows)) {
		for i, t := range c.Workflows[id].Transitions {
			if t.Executor != nil && t.Executor.Kind.Runs() != RunWorkflow && t.Executor.TimeoutMs > 0 {
				if d := ExecutorTimeout(*t.Executor); d > limit {
					long(fmt.Sprintf("workflows.%s.transitions[%d]", id, i), d)
				}
			}
		}
	}
	c.EachExecutor(func(where string, x *Executor) {
		if !x.UnconfinedArguments { // admitted by cli executors only
			return
		}
		var declared []string
		if x.Paths != nil {
			declared = append(slices.Clone(x.Paths.Read), x.Paths.Write...)
		}
		var free []string
		for _, a := range x.Args {
			if strings.HasPrefix(a, "$.") && !slices.Contains(declared, a) && !slices.Contains(free, a) {
				free = append(free, a)
			}
		}
		if len(free) > 0 {
			out = append(out, fmt.Sprintf("%s: unconfinedArguments: %s reach the command of connection %s with no path check: "+
				"a caller can name any file the gateway's user can reach; declare each that is a path under paths.read or paths.write",
				where, strings.Join(free, ", "), x.Connection))
		}
	})
	return out
}
