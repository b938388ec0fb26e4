package config

import "strings"

// Annotations are the MCP tool annotations the configuration sets on a
// capability (capabilities.X.annotations, proxy.expose[N].annotations).
// Each hint left out is derived from what the gateway knows of the
// executor (see ExposedCapability.Hints). They are hints for hosts; an
// upstream MCP tool's own annotations are never read for them.
type Annotations struct {
	// Title is the tool's human title in the annotations (default the
	// capability's title).
	Title string `json:"title,omitempty"`
	// ReadOnlyHint: the capability changes nothing.
	ReadOnlyHint *bool `json:"readOnlyHint,omitempty"`
	// DestructiveHint: the capability may destroy or overwrite data
	// (meaningful when it is not read-only).
	DestructiveHint *bool `json:"destructiveHint,omitempty"`
	// IdempotentHint: calling it again with the same arguments has no
	// further effect.
	IdempotentHint *bool `json:"idempotentHint,omitempty"`
	// OpenWorldHint: it reaches beyond the gateway (an API, a program, the
	// network).
	OpenWorldHint *bool `json:"openWorldHint,omitempty"`
}

// overlay returns a with every member b sets replacing a's: b is the
// nearer declaration (an exposure over its capability, a wrapper over what
// it wraps).
func (a *Annotations) overlay(b *Annotations) *Annotations {
	if b == nil {
		return a
	}
	if a == nil {
		c := *b
		return &c
	}
	c := *a
	if b.Title != "" {
		c.Title = b.Title
	}
	for _, p := range []struct{ dst, src **bool }{
		{&c.ReadOnlyHint, &b.ReadOnlyHint}, {&c.DestructiveHint, &b.DestructiveHint},
		{&c.IdempotentHint, &b.IdempotentHint}, {&c.OpenWorldHint, &b.OpenWorldHint},
	} {
		if *p.src != nil {
			*p.dst = *p.src
		}
	}
	return &c
}

// Hints are a capability's MCP tool annotations in force: the ones the
// configuration sets, the others derived from its executor.
type Hints struct {
	Title                                        string
	ReadOnly, Destructive, Idempotent, OpenWorld bool
}

// ExecutorHints derives a capability's annotations from what the gateway
// knows of its executor x (its kind's entry of the kind table): none
// (noop) acts on nothing and reaches nothing, nor does a script (a
// computation over the call's own values); a REST GET, HEAD or OPTIONS
// reads (RFC 9110 safe methods), a PUT or DELETE is idempotent (RFC
// 9110), both open-world; anything else (an mcp tool, a cli command, a
// POST or PATCH, a workflow, a person) may change the world: destructive,
// open-world, not idempotent. An upstream MCP tool's own annotations are
// not read: they never lower destructiveHint.
func ExecutorHints(x *Executor) Hints {
	if x == nil || x.Kind.info().readOnly {
		return Hints{ReadOnly: true, Idempotent: true}
	}
	h := Hints{Destructive: true, OpenWorld: true}
	if x.Kind.info().methodHints {
		switch strings.ToUpper(x.Method) {
		case "GET", "HEAD", "OPTIONS":
			h.ReadOnly, h.Destructive, h.Idempotent = true, false, true
		case "PUT", "DELETE":
			h.Idempotent = true
		}
	}
	return h
}

// Hints returns the capability's annotations in force: ExecutorHints of
// its executor, with every hint the configuration sets (Annotations)
// replacing the derived one. A capability configured read-only is not
// destructive unless the configuration also says destructiveHint (which
// the loader refuses together with readOnlyHint: true); one configured
// destructive is not read-only. The title is the configured one, else the
// capability's.
func (x ExposedCapability) Hints() Hints {
	h := ExecutorHints(x.Executor)
	h.Title = x.Title
	a := x.Annotations
	if a == nil {
		return h
	}
	if a.Title != "" {
		h.Title = a.Title
	}
	if a.ReadOnlyHint != nil {
		h.ReadOnly = *a.ReadOnlyHint
		if h.ReadOnly {
			h.Destructive = false
		}
	}
	if a.DestructiveHint != nil {
		h.Destructive = *a.DestructiveHint
		if h.Destructive {
			h.ReadOnly = false
		}
	}
	if a.IdempotentHint != nil {
		h.Idempotent = *a.IdempotentHint
	}
	if a.OpenWorldHint != nil {
		h.OpenWorld = *a.OpenWorldHint
	}
	return h
}

// annotations checks the annotations of a capability or an exposure at
// ptr: readOnlyHint and destructiveHint cannot both be true.
func (c *checker) annotations(ptr string) {
	a, ok := c.obj(ptr + "/annotations")
	if !ok {
		return
	}
	if ro, _ := a["readOnlyHint"].(bool); ro {
		if d, _ := a["destructiveHint"].(bool); d {
			c.report(ptr+"/annotations/destructiveHint", "cannot be true with readOnlyHint: true (a capability that changes nothing destroys nothing); drop one of them")
		}
	}
}
