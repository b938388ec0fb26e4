package config

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
)

// Evidence stays explicit (DESIGN): a capability or a transition says what
// evidence its success adds (produces), and nothing else adds any. An
// evidence guard requiring evidence that nothing of the configuration
// produces would refuse every call with GUARD_REJECTED for as long as the
// gateway runs, so the file is refused instead, at the guard, with the fix.
//
// Where evidence accumulates decides who may produce it: every move of a
// proxy_default run (the proxy capabilities, the manifests' ones included)
// adds to the run, so a proxy guard is satisfied by any capability that
// produces the evidence; a workflow's instance gains only what its own
// transitions produce.

// evidenceProblems reports every evidence guard of the configuration, parsed
// into doc, that requires evidence nothing can produce. It runs on a
// configuration that is otherwise valid, manifests loaded.
func (c *Config) evidenceProblems(doc *document) []Problem {
	ch := &checker{doc: doc, reported: map[string]bool{}}

	proxy := map[string]bool{}
	for _, x := range c.exposedDeclared() {
		for _, ev := range x.Produces {
			proxy[ev] = true
		}
	}
	for i := range c.Proxy.Expose {
		ch.unproduced("/proxy/expose/"+strconv.Itoa(i)+"/guards", proxy, proxyFix)
	}
	for _, id := range slices.Sorted(maps.Keys(c.Capabilities)) {
		ch.unproduced("/capabilities/"+escapePointer(id)+"/guards", proxy, proxyFix)
	}
	for _, x := range c.manifested {
		for j, g := range x.Guards {
			for k, ev := range unproducedOf(g, proxy) {
				file, where, _ := strings.Cut(x.Source, ":")
				ch.out = append(ch.out, Problem{File: file, Field: fmt.Sprintf("%s.guards[%d].requires[%d]", where, j, k), Message: proxyFix(ev)})
			}
		}
	}

	for _, id := range slices.Sorted(maps.Keys(c.Workflows)) {
		w := c.Workflows[id]
		produced := map[string]bool{}
		for _, t := range w.Transitions {
			for _, ev := range t.Produces {
				produced[ev] = true
			}
		}
		for i := range w.Transitions {
			ch.unproduced("/workflows/"+escapePointer(id)+"/transitions/"+strconv.Itoa(i)+"/guards", produced, func(ev string) string {
				return fmt.Sprintf("requires the evidence %s, which no transition of workflow %s produces, so this transition would be refused GUARD_REJECTED on every instance; "+
					"declare produces: [%s] on the transition that earns it", ev, id, ev)
			})
		}
	}
	return ch.out
}

// proxyFix words a proxy guard requiring evidence no capability produces.
func proxyFix(ev string) string {
	return fmt.Sprintf("requires the evidence %s, which no capability of this configuration produces, so every call would be refused GUARD_REJECTED; "+
		"declare produces: [%s] on the capability that earns it", ev, ev)
}

// unproduced reports, at each requires entry of the evidence guards in the
// list at ptr, the evidence produced lacks.
func (c *checker) unproduced(ptr string, produced map[string]bool, fix func(ev string) string) {
	items, _ := c.list(ptr)
	for j := range items {
		gp := ptr + "/" + strconv.Itoa(j)
		if kind, _ := c.str(gp + "/kind"); kind != GuardEvidence {
			continue
		}
		c.each(gp+"/requires", func(p, ev string) {
			if !produced[ev] {
				c.report(p, "%s", fix(ev))
			}
		})
	}
}

// unproducedOf maps the index of each entry of g's requires that produced
// lacks to the evidence.
func unproducedOf(g Guard, produced map[string]bool) map[int]string {
	out := map[int]string{}
	if g.Kind != GuardEvidence {
		return out
	}
	for k, ev := range g.Requires {
		if !produced[ev] {
			out[k] = ev
		}
	}
	return out
}
