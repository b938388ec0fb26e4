package config

import (
	"maps"
	"slices"
	"strconv"
)

// EachExecutor calls f with every executor the configuration declares and
// where it stands, as a reader names it: capabilities.ID.executor,
// proxy.expose[N].executor, the capabilities of the manifests,
// workflows.ID.states.S.onEnter and workflows.ID.transitions[N].executor,
// each followed by its reliability fallbacks and its parallel branches.
// The order is stable: the configuration's sections in that order, ids
// sorted.
func (c *Config) EachExecutor(f func(where string, x *Executor)) {
	var visit func(where string, x *Executor, r *Reliability)
	visit = func(where string, x *Executor, r *Reliability) {
		if x != nil {
			f(where, x)
			for _, name := range slices.Sorted(maps.Keys(x.Branches)) {
				b := x.Branches[name]
				visit(where+".branches."+name, &b, nil)
			}
		}
		if r != nil && r.Fallback != nil {
			for i := range r.Fallback.Executors {
				visit(where+".reliability.fallback.executors["+strconv.Itoa(i)+"]", &r.Fallback.Executors[i], nil)
			}
		}
	}
	for _, id := range slices.Sorted(maps.Keys(c.Capabilities)) {
		cp := c.Capabilities[id]
		visit("capabilities."+id+".executor", cp.Executor, cp.Reliability)
	}
	for i, e := range c.Proxy.Expose {
		visit("proxy.expose["+strconv.Itoa(i)+"].executor", e.Executor, e.Reliability)
	}
	for _, x := range c.manifested {
		visit(x.Source+".executor", x.Executor, x.Reliability)
	}
	for _, id := range slices.Sorted(maps.Keys(c.Workflows)) {
		w := c.Workflows[id]
		for _, s := range slices.Sorted(maps.Keys(w.States)) {
			visit("workflows."+id+".states."+s+".onEnter", w.States[s].OnEnter, nil)
		}
		for i, t := range w.Transitions {
			visit("workflows."+id+".transitions["+strconv.Itoa(i)+"].executor", t.Executor, nil)
		}
	}
}
