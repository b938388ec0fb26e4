package config

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// surfaceName is one id in the discovery namespace, where workflows,
// capabilities and connections are found by id, and the pointer of its
// declaration.
type surfaceName struct {
	id, ptr, what string
	// key says the pointer is a mapping member named by the id, which is
	// reported at its key.
	key bool
}

// capabilities checks the capabilities and proxy sections, the connection
// names, and that every id the discovery index holds is unique.
func (c *checker) capabilities() {
	wfs, _ := c.obj("/workflows")
	wfIDs := c.keys("/workflows", wfs)
	caps, _ := c.obj("/capabilities")
	capIDs := c.keys("/capabilities", caps)

	var wraps []workflowEdge
	wrapped := map[string]bool{}
	for _, id := range capIDs {
		base := "/capabilities/" + escapePointer(id)
		if !idRE.MatchString(id) {
			c.reportKey(base, "is not a valid capability id: use 1 to 128 letters, digits, '.', '_', ':' or '-', starting with a letter or a digit")
		}
		cp, ok := c.obj(base)
		if !ok {
			continue
		}
		if w, ok := c.str(base + "/wraps"); ok {
			wrapped[w] = true
			switch {
			case w == id:
				c.report(base+"/wraps", "names the capability it belongs to: a capability cannot wrap itself")
			case !slices.Contains(capIDs, w):
				c.report(base+"/wraps", "names no declared capability%s", nameHint(w, capIDs, "capabilities"))
			default:
				wraps = append(wraps, workflowEdge{from: id, to: w, ptr: base + "/wraps"})
			}
			if _, has := cp["executor"]; has {
				c.reportKey(base+"/executor", "cannot be set on a capability that wraps another: it runs the executor of %s", w)
			}
		}
		c.capabilityBody(base, wfIDs)
	}
	c.wrapCycles(wraps)

	var names []surfaceName
	for _, id := range wfIDs {
		names = append(names, surfaceName{id: id, ptr: "/workflows/" + escapePointer(id), what: "workflow", key: true})
	}
	referenced := map[string]bool{}
	items, _ := c.list("/proxy/expose")
	for i := range items {
		ep := "/proxy/expose/" + strconv.Itoa(i)
		e, ok := c.obj(ep)
		if !ok {
			continue
		}
		_, hasName := e["name"]
		_, hasRef := e["capability"]
		_, hasAs := e["as"]
		switch {
		case hasName && hasRef:
			c.reportKey(ep+"/capability", "cannot be set together with name: name declares an inline capability, capability exposes one declared under capabilities (rename it with as)")
		case !hasName && !hasRef:
			c.reportKey(ep, "needs a name (an inline capability) or a capability (one declared under capabilities)")
		}
		if hasAs && !hasRef {
			c.reportKey(ep+"/as", "renames a referenced capability: it needs capability")
		}
		if ref, ok := c.str(ep + "/capability"); ok && !hasName {
			if !slices.Contains(capIDs, ref) {
				c.report(ep+"/capability", "names no declared capability%s", nameHint(ref, capIDs, "capabilities"))
			} else {
				referenced[ref] = true
			}
			if _, has := e["executor"]; has {
				c.reportKey(ep+"/executor", "cannot be set on an exposure of a declared capability: it runs the executor of %s", ref)
			}
			if as, ok := c.str(ep + "/as"); ok {
				names = append(names, surfaceName{id: as, ptr: ep + "/as", what: "capability"})
			} else if !hasAs {
				names = append(names, surfaceName{id: ref, ptr: ep + "/capability", what: "capability"})
			}
		} else if name, ok := c.str(ep + "/name"); ok && !hasRef {
			names = append(names, surfaceName{id: name, ptr: ep + "/name", what: "capability"})
		}
		c.capabilityBody(ep, wfIDs)
	}
	for _, id := range capIDs {
		if !wrapped[id] && !referenced[id] {
			names = append(names, surfaceName{id: id, ptr: "/capabilities/" + escapePointer(id), what: "capability", key: true})
		}
	}
	conns, _ := c.obj("/connections")
	for _, name := range c.keys("/connections", conns) {
		ptr := "/connections/" + escapePointer(name)
		if !idRE.MatchString(name) {
			c.reportKey(ptr, "is not a valid connection name: use 1 to 128 letters, digits, '.', '_', ':' or '-', starting with a letter or a digit")
			continue
		}
		names = append(names, surfaceName{id: name, ptr: ptr, what: "connection", key: true})
	}
	c.uniqueNames(names)
}

// capabilityBody checks what a capability and an exposure share: the paths
// and the workflow of the executor, the input and output schemas, the
// reliability, the annotations, the guards and the audit block.
func (c *checker) capabilityBody(ptr string, wfIDs []string) {
	if _, ok := c.obj(ptr + "/executor"); ok {
		c.executor(ptr+"/executor", wfIDs)
	}
	c.inputSchema(ptr + "/inputSchema")
	c.outputSchema(ptr + "/outputSchema")
	c.reliability(ptr, wfIDs)
	c.annotations(ptr) // annotations.go
	c.guards(ptr + "/guards")
	c.capabilityAudit(ptr + "/audit") // audit_check.go
}

// wrapCycles reports every wraps through which a capability ends up
// wrapping itself.
func (c *checker) wrapCycles(edges []workflowEdge) {
	next := map[string][]string{}
	for _, e := range edges {
		next[e.from] = append(next[e.from], e.to)
	}
	for _, e := range edges {
		if path := shortestPath(next, e.to, e.from); path != nil {
			chain := strings.Join(append([]string{e.from}, path...), " → ")
			c.report(e.ptr, "wraps %s, which leads back to %s (%s): capabilities cannot wrap each other in a cycle", e.to, e.from, chain)
		}
	}
}

// uniqueNames reports every id of the discovery namespace declared twice,
// at the later declaration, and the reserved id of the built-in proxy
// workflow.
func (c *checker) uniqueNames(names []surfaceName) {
	first := map[string]surfaceName{}
	for _, n := range names {
		at := c.report
		if n.key {
			at = c.reportKey
		}
		if n.id == ProxyDefaultWorkflow {
			at(n.ptr, "is reserved for the built-in workflow proxy capabilities run in; choose another %s id", n.what)
			continue
		}
		prev, dup := first[n.id]
		if !dup {
			first[n.id] = n
			continue
		}
		pos := c.doc.at(prev.ptr)
		line := pos.Line
		if prev.key && pos.KeyLine > 0 {
			line = pos.KeyLine
		}
		at(n.ptr, "%s", fmt.Sprintf("is already the id of the %s at %s (line %d): workflows, capabilities and connections are found by id, so each id names one of them",
			prev.what, fieldPath(c.doc.value, prev.ptr), line))
	}
}

// lexicon checks the lexicon section: term keys, and that every term, ref
// and alias leads a lookup to exactly one term.
func (c *checker) lexicon() {
	lex, ok := c.obj("/lexicon")
	if !ok {
		return
	}
	terms := c.keys("/lexicon", lex)
	owner := map[string]string{} // term key -> term
	var valid []string
	for _, t := range terms {
		base := "/lexicon/" + escapePointer(t)
		if !termRE.MatchString(t) {
			c.reportKey(base, "is not a valid term: a letter or a digit, then up to 127 letters, digits, spaces and . _ ' / + -")
			continue
		}
		k := TermKey(t)
		if prev, dup := owner[k]; dup {
			pp := "/lexicon/" + escapePointer(prev)
			c.reportKey(base, "names the same term as %q (line %d): terms are matched without regard to case or repeated spaces", prev, c.doc.at(pp).KeyLine)
			continue
		}
		owner[k] = t
		valid = append(valid, t)
	}
	aliasOwner := map[string]string{} // ref or alias key -> term
	for _, t := range valid {
		base := "/lexicon/" + escapePointer(t)
		for _, member := range []string{"refs", "aliases"} {
			c.each(base+"/"+member, func(ptr, a string) {
				if !termRE.MatchString(a) {
					return // the schema reported it
				}
				k := TermKey(a)
				switch {
				case k == TermKey(t):
					c.report(ptr, "names the term itself")
				case owner[k] != "":
					c.report(ptr, "is itself the term %q: a ref or alias must not name another term", owner[k])
				case aliasOwner[k] != "" && aliasOwner[k] != t:
					c.report(ptr, "is already a ref or alias of %q: a lookup must lead to one term", aliasOwner[k])
				default:
					aliasOwner[k] = t
				}
			})
		}
	}
}
