package config

import (
	"maps"
	"slices"
	"strconv"
)

// Capability is one capability under capabilities: a named piece of work
// (its executor) with the discovery metadata that makes it findable and the
// guards checked right before it runs. A capability may wrap another one:
// it then runs the wrapped capability's executor and adds its own guards on
// top of the wrapped one's.
//
// Which capabilities the proxy surface offers is decided by proxy.expose and
// by Exposed: see there.
type Capability struct {
	Title       string   `json:"title,omitempty"`
	Description string   `json:"description,omitempty"`
	Tags        []string `json:"tags,omitempty"`
	// Aliases are further names search matches the capability by.
	Aliases []string `json:"aliases,omitempty"`
	// Domain is a coarse group (git, ticket, deploy) for browsing.
	Domain string `json:"domain,omitempty"`
	// ExposeDirectly asks MCP surfaces to list the capability as a tool of
	// its own rather than only through search and describe.
	ExposeDirectly bool `json:"exposeDirectly,omitempty"`
	// InputSchema validates the capability's arguments (JSON Schema
	// 2020-12, object root, local references only).
	InputSchema map[string]any `json:"inputSchema,omitempty"`
	// OutputSchema validates the capability's output on success (JSON
	// Schema 2020-12, object root, local references only): the object a
	// run records as lastRun.output and a direct tool answers as
	// structuredContent. An output that does not satisfy it makes the call
	// a failure (seeds/002: a successful result satisfies the tool's
	// outputSchema). It is not an llm executor's outputSchema, which
	// checks the model's answer, one member of that output.
	OutputSchema map[string]any `json:"outputSchema,omitempty"`
	// Guards run immediately before the executor; all must pass.
	Guards []Guard `json:"guards,omitempty"`
	// Executor does the work (noop when absent). A capability that wraps
	// another has none of its own.
	Executor *Executor `json:"executor,omitempty"`
	// Wraps names the capability whose executor this one runs.
	Wraps string `json:"wraps,omitempty"`
	// Produces names the evidence a successful run adds.
	Produces []string `json:"produces,omitempty"`
	// Reliability bounds one run.
	Reliability *Reliability `json:"reliability,omitempty"`
	// Annotations set the capability's MCP tool annotations; the hints
	// left out are derived from the executor (ExposedCapability.Hints).
	Annotations *Annotations `json:"annotations,omitempty"`
	// Limits is a token bucket shared by every call of the capability,
	// of every tenant and principal, however it is reached (an exposure,
	// a capability that wraps it): the upstream's budget. Cluster-wide
	// on PostgreSQL, as server.limits.
	Limits *Rate `json:"limits,omitempty"`
	// Audit says what the audit events of the capability's calls record
	// and which sinks receive them (CapabilityAudit); a capability that
	// wraps this one adds its own.
	Audit *CapabilityAudit `json:"audit,omitempty"`
}

// Reliability bounds the run of a capability and says what may be tried
// again when a call could not be made.
//
// Only a call whose repetition cannot duplicate an effect is ever tried
// again: one whose
// outcome is unavailable (workflow.OutcomeUnavailable: the connection could
// not be opened, the program could not start, the sandbox it demands is
// missing, a REST upstream refused it with 408, 429, or 503 to an
// idempotent method or with Retry-After (a 503 to a POST or PATCH without
// it is failed: a proxy may answer it after the upstream took the
// request), a timeout before anything was sent), or one that repeating
// cannot make act twice
// (a REST request with an idempotent method, RFC 9110 §9.2.2, answered 5xx
// or left unanswered). Such a call is retried on the same executor,
// and once the retries are spent the fallback executors are tried in
// order, each with the same retries. Everything else ends the call at
// once, with neither retry nor fallback:
//
//   - a success;
//   - an unknown outcome (a timeout or a broken connection after the call
//     was sent, a REST 502 or 504 to a method that may not be repeated):
//     it may have taken effect, and repeating it could duplicate a
//     mutation;
//   - a failure the upstream answered (an MCP result with isError or a
//     JSON-RPC error, a cli exit status other than zero under
//     treatNonZeroAsFailure, any other HTTP error status): the upstream
//     looked at the call and decided. A retry would ask the same question
//     again, and a fallback would ask another upstream to redo work the
//     first one may have begun, so neither is tried: the failure is the
//     move's answer.
//
// Retries and fallbacks apply to executors of a kind that calls a
// connection (Kind.NeedsConnection: mcp, cli, rest and llm).
type Reliability struct {
	// TimeoutMs is the longest one call may take, in milliseconds: it
	// bounds each attempt of the executor and of the fallback executors
	// that set no timeoutMs of their own.
	TimeoutMs int `json:"timeoutMs,omitempty"`
	// Retries is how many more times an executor is called after a call
	// that was not made, or an idempotent REST request answered 5xx or
	// left unanswered (at most MaxRetries). Unset, a rest executor keeps
	// its built-in DefaultRESTRetries, all of them within its one timeout,
	// and the other kinds are not retried; set (0 included), every
	// executor gets exactly this many retries, each with its own timeout.
	Retries *int `json:"retries,omitempty"`
	// BackoffMs is the wait before the first retry, in milliseconds
	// (default DefaultBackoffMs); each further retry waits twice as long
	// as the one before, at most MaxBackoff, plus up to a quarter of
	// random jitter. A REST Retry-After of at most MaxRetryAfter is
	// waited instead when it is longer.
	BackoffMs int `json:"backoffMs,omitempty"`
	// Fallback lists the executors tried, in order, once the executor's
	// calls all ended in a way that may be repeated (see Retries).
	Fallback *Fallback `json:"fallback,omitempty"`
}

// Fallback is reliability.fallback: the executors a capability falls back
// to when its own could not be reached.
type Fallback struct {
	// Executors are tried in order, each only when every call before it
	// ended in a way that may be repeated (at most MaxFallbacks; of kinds
	// that call a connection).
	Executors []Executor `json:"executors"`
}

// Proxy configures the proxy surface: the capabilities it offers.
type Proxy struct {
	// Expose lists the capabilities the proxy surface offers, declared
	// inline (name) or by reference to one under capabilities
	// (capability, optionally renamed with as).
	Expose []Exposure `json:"expose,omitempty"`
	// Import lists mcp connections whose tools become capabilities when
	// the gateway starts (see Import and SetImported).
	Import []Import `json:"import,omitempty"`
	// RunRetention is how long a run of proxy_default may stay idle (no
	// move) before the gateway moves it to its terminal expired state:
	// unset for DefaultRunRetention, 0s to keep runs for good (see
	// Config.RunRetention).
	RunRetention *Duration `json:"runRetention,omitempty"`
}

// Exposure is one entry of proxy.expose. Exactly one of Name (an inline
// capability, described by the other members) and Capability (a capability
// declared under capabilities) is set; As renames a referenced capability.
// The metadata members of a reference override the capability's title,
// description, domain, input and output schema, add to its tags and
// aliases, and stack its guards on top of the capability's.
type Exposure struct {
	Name       string `json:"name,omitempty"`
	Capability string `json:"capability,omitempty"`
	As         string `json:"as,omitempty"`

	Title          string         `json:"title,omitempty"`
	Description    string         `json:"description,omitempty"`
	Tags           []string       `json:"tags,omitempty"`
	Aliases        []string       `json:"aliases,omitempty"`
	Domain         string         `json:"domain,omitempty"`
	ExposeDirectly bool           `json:"exposeDirectly,omitempty"`
	InputSchema    map[string]any `json:"inputSchema,omitempty"`
	OutputSchema   map[string]any `json:"outputSchema,omitempty"`
	Guards         []Guard        `json:"guards,omitempty"`
	// Executor is the inline capability's executor (noop when absent); a
	// reference takes the capability's.
	Executor    *Executor    `json:"executor,omitempty"`
	Produces    []string     `json:"produces,omitempty"`
	Reliability *Reliability `json:"reliability,omitempty"`
	// Annotations set the MCP tool annotations, over those of the
	// capability an exposure references.
	Annotations *Annotations `json:"annotations,omitempty"`
	// Audit is the inline capability's audit block, or what an exposure
	// adds to the referenced capability's (CapabilityAudit).
	Audit *CapabilityAudit `json:"audit,omitempty"`
}

// inline is the capability an inline exposure (one with a Name) declares,
// found at src: proxy.expose and a manifest's capabilities both read it so.
func (e Exposure) inline(src string) ExposedCapability {
	return ExposedCapability{ID: e.Name, Source: src, Title: e.Title, Description: e.Description,
		Domain: e.Domain, Tags: slices.Clone(e.Tags), Aliases: slices.Clone(e.Aliases), ExposeDirectly: e.ExposeDirectly,
		InputSchema: e.InputSchema, OutputSchema: e.OutputSchema, Guards: slices.Clone(e.Guards), Executor: e.Executor,
		Produces: slices.Clone(e.Produces), Reliability: e.Reliability, Annotations: e.Annotations,
		Audit: CapabilityAudit{}.stack(e.Audit)}
}

// ProxyDefaultWorkflow is the id of the built-in workflow proxy capabilities
// run in; no workflow, capability or connection may take it.
const ProxyDefaultWorkflow = "proxy_default"

// ExposedCapability is a capability as the proxy surface offers it, with
// everything it inherits resolved.
type ExposedCapability struct {
	// ID is the name the surface knows it by.
	ID string
	// Declared is the capability under capabilities it stands for, ""
	// for an inline exposure.
	Declared string
	// Source says where it was declared: capabilities.ID or
	// proxy.expose[N].
	Source string

	Title, Description, Domain string
	Tags, Aliases              []string
	ExposeDirectly             bool
	// InputSchema is nil when neither the exposure nor the capabilities it
	// stands for declare one.
	InputSchema map[string]any
	// OutputSchema, the outermost declared as InputSchema is, is what a
	// successful output must satisfy (nil: anything). An imported
	// capability has none: its upstream's outputSchema, in Upstream,
	// describes the upstream result's structuredContent, not this output.
	OutputSchema map[string]any
	// Guards in the order they run: the innermost wrapped capability's
	// first, the exposure's last.
	Guards []Guard
	// Executor is nil for noop.
	Executor    *Executor
	Produces    []string
	Reliability *Reliability
	// Annotations are the annotations the configuration sets (nil: none);
	// Hints completes them from the executor.
	Annotations *Annotations
	// Limits are the limits of the capabilities it stands for that set
	// one (it and those it wraps, innermost first): a call spends a token
	// of each.
	Limits []CapabilityLimit
	// Audit is what the audit events of its calls record and the sinks
	// that receive them: the audit blocks of the capabilities it stands
	// for and of its exposure, stacked innermost first (zero for an
	// imported capability).
	Audit CapabilityAudit
	// Upstream is, for a capability proxy.import took from an MCP server,
	// the tool it stands for (nil for the others): what its pin covers.
	Upstream *UpstreamTool
	// Quarantined says that the imported capability's pin quarantines it
	// (SetQuarantined): it is not callable, and MCP does not list it.
	Quarantined bool
}

// UpstreamTool is the upstream MCP tool an imported capability stands for.
type UpstreamTool struct {
	// Connection is the mcp connection, Tool the tool's name.
	Connection, Tool string
	// Pin is the connection's pin mode (Connection.PinMode).
	Pin string
	// Definition is the part of the tool's definition a pin covers, as
	// decoded JSON (numbers as json.Number): its name, title,
	// description, inputSchema, outputSchema and annotations, those the
	// server sent.
	Definition map[string]any
}

// CapabilityLimit is the limit of one capability under capabilities.
type CapabilityLimit struct {
	// Capability is the id under capabilities: the bucket's key.
	Capability string
	Rate       Rate
}

// Exposed resolves the capabilities the proxy surface offers, in a stable
// order (proxy.expose in declaration order, then the capabilities by id,
// then those proxy.import produced at start, see SetImported):
//
//   - every proxy.expose entry, under its name, or under as, or under the
//     name of the capability it references;
//   - every capability under capabilities that no other capability wraps
//     and no proxy.expose entry references, under its own id. A wrapped
//     capability is a building block (exposing it would skip the guards of
//     its wrapper); a referenced one is offered through its exposure.
//
// The configuration is assumed valid (Load checked it): references resolve
// and wraps has no cycle; a broken reference is skipped.
func (c *Config) Exposed() []ExposedCapability {
	out := append(c.exposedDeclared(), slices.Clone(c.imported)...)
	if len(c.quarantined) > 0 {
		for i := range out {
			out[i].Quarantined = out[i].Upstream != nil && c.quarantined[out[i].ID]
		}
	}
	return out
}

// exposedDeclared is Exposed without the imported capabilities.
func (c *Config) exposedDeclared() []ExposedCapability {
	var out []ExposedCapability
	referenced := map[string]bool{}
	for i, e := range c.Proxy.Expose {
		src := "proxy.expose[" + strconv.Itoa(i) + "]"
		if e.Capability != "" {
			base, ok := c.resolveCapability(e.Capability, 0)
			if !ok {
				continue
			}
			referenced[e.Capability] = true
			x := base
			x.ID, x.Declared, x.Source = e.Capability, e.Capability, src
			if e.As != "" {
				x.ID = e.As
			}
			x.Title = firstNonEmpty(e.Title, x.Title)
			x.Description = firstNonEmpty(e.Description, x.Description)
			x.Domain = firstNonEmpty(e.Domain, x.Domain)
			x.Tags = union(x.Tags, e.Tags)
			x.Aliases = union(x.Aliases, e.Aliases)
			x.ExposeDirectly = x.ExposeDirectly || e.ExposeDirectly
			if e.InputSchema != nil {
				x.InputSchema = e.InputSchema
			}
			if e.OutputSchema != nil {
				x.OutputSchema = e.OutputSchema
			}
			x.Guards = append(slices.Clone(x.Guards), e.Guards...)
			x.Produces = union(x.Produces, e.Produces)
			if e.Reliability != nil {
				x.Reliability = e.Reliability
			}
			x.Annotations = x.Annotations.overlay(e.Annotations)
			x.Audit = x.Audit.stack(e.Audit)
			out = append(out, x)
			continue
		}
		if e.Name == "" {
			continue
		}
		out = append(out, e.inline(src))
	}
	wrapped := map[string]bool{}
	for _, cp := range c.Capabilities {
		if cp.Wraps != "" {
			wrapped[cp.Wraps] = true
		}
	}
	for _, id := range slices.Sorted(maps.Keys(c.Capabilities)) {
		if wrapped[id] || referenced[id] {
			continue
		}
		x, ok := c.resolveCapability(id, 0)
		if !ok {
			continue
		}
		x.ID, x.Declared = id, id
		out = append(out, x)
	}
	return append(out, slices.Clone(c.manifested)...)
}

// maxWraps bounds how deep wraps may nest when resolving, as a guard
// against a cycle the loader would have refused.
const maxWraps = 64

// resolveCapability resolves the capability id through what it wraps: the
// wrapped capability's executor, its metadata where id declares none, and
// its guards before id's own.
func (c *Config) resolveCapability(id string, depth int) (ExposedCapability, bool) {
	cp, ok := c.Capabilities[id]
	if !ok || depth > maxWraps {
		return ExposedCapability{}, false
	}
	x := ExposedCapability{Source: "capabilities." + id}
	if cp.Wraps != "" {
		inner, ok := c.resolveCapability(cp.Wraps, depth+1)
		if !ok {
			return ExposedCapability{}, false
		}
		x = inner
		x.Source = "capabilities." + id
	}
	x.Title = firstNonEmpty(cp.Title, x.Title)
	x.Description = firstNonEmpty(cp.Description, x.Description)
	x.Domain = firstNonEmpty(cp.Domain, x.Domain)
	x.Tags = union(x.Tags, cp.Tags)
	x.Aliases = union(x.Aliases, cp.Aliases)
	x.ExposeDirectly = x.ExposeDirectly || cp.ExposeDirectly
	if cp.InputSchema != nil {
		x.InputSchema = cp.InputSchema
	}
	if cp.OutputSchema != nil {
		x.OutputSchema = cp.OutputSchema
	}
	x.Guards = append(slices.Clone(x.Guards), cp.Guards...)
	if cp.Executor != nil {
		x.Executor = cp.Executor
	}
	x.Produces = union(x.Produces, cp.Produces)
	if cp.Reliability != nil {
		x.Reliability = cp.Reliability
	}
	x.Annotations = x.Annotations.overlay(cp.Annotations)
	x.Audit = x.Audit.stack(cp.Audit)
	if cp.Limits != nil {
		x.Limits = append(slices.Clone(x.Limits), CapabilityLimit{Capability: id, Rate: *cp.Limits})
	}
	return x, true
}

func firstNonEmpty(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// union returns a followed by the members of b it lacks, as a new slice.
func union(a, b []string) []string {
	out := slices.Clone(a)
	for _, s := range b {
		if !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	return out
}

// ConnectionNames returns the names of the connections the file declares,
// sorted.
func (c *Config) ConnectionNames() []string { return slices.Clone(c.connectionNames) }

// SetConnectionNames replaces the connection names (for configurations
// built in code, such as tests).
func (c *Config) SetConnectionNames(names []string) {
	c.connectionNames = slices.Sorted(slices.Values(names))
}
