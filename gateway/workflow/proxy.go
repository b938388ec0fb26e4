package workflow

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/praxa/praxa/contracts"
	"github.com/praxa/praxa/gateway/config"
	"github.com/praxa/praxa/internal/jsonvalue"
)

// ProxyState is the state a run of the built-in proxy_default workflow
// makes its moves in.
const ProxyState = "running"

// ExpiredState is the terminal state of a proxy_default run that stayed
// idle longer than the configured retention (proxy.runRetention): no
// transition leads there, only Expire, which the gateway's run sweeper
// calls. A run in it answers as any ended workflow does: result completed,
// no links, every move refused.
const ExpiredState = "expired"

// ExpiredKey is the context member an expired run holds: when and why it
// expired (see Expire).
const ExpiredKey = "expired"

// ProxyWorkflow builds the definition of the built-in proxy_default
// workflow from the capabilities the proxy surface offers: the state
// running, the terminal state expired (ExpiredState) and one transition
// per capability, from running back to running, carrying the capability's
// guards, input schema, executor (its reliability.timeoutMs bounds each
// call; AddProxy adds the retries and fallback executors) and the evidence
// it produces. An instance is one agent run: the evidence of its moves
// accumulates on it, so a capability guarded by evidence becomes legal
// once a move of the same run produced that evidence.
func ProxyWorkflow(caps []config.ExposedCapability) config.Workflow {
	w := config.Workflow{Version: 1, Title: "Proxy capabilities",
		Description: "One agent run over the proxy capabilities: every capability is a move, evidence accumulates on the run.",
		Initial:     ProxyState,
		States: map[string]config.State{ProxyState: {Title: "Running"},
			ExpiredState: {Title: "Expired (idle longer than the run retention)", Terminal: true}}}
	for _, c := range caps {
		t := config.Transition{Name: c.ID, Title: c.Title, Description: c.Description, From: config.StringList{ProxyState}, To: ProxyState,
			Actor: config.ActorAgent, Guards: slices.Clone(c.Guards), InputSchema: c.InputSchema, Produces: slices.Clone(c.Produces)}
		if c.Executor != nil {
			x := *c.Executor
			if x.TimeoutMs == 0 && c.Reliability != nil {
				x.TimeoutMs = c.Reliability.TimeoutMs
			}
			t.Executor = &x
		}
		w.Transitions = append(w.Transitions, t)
	}
	return w
}

// AddProxy compiles proxy_default from the capabilities and adds it to the
// registry (replacing an earlier one), with each capability's output
// schema, which a successful move's output must satisfy.
func (r *Registry) AddProxy(caps []config.ExposedCapability) error {
	w := ProxyWorkflow(caps)
	one, err := Compile(map[string]config.Workflow{config.ProxyDefaultWorkflow: w})
	if err != nil {
		return err
	}
	d, _ := one.Lookup(config.ProxyDefaultWorkflow)
	d.proxy = true
	for _, c := range caps {
		if t, ok := d.transitions[c.ID]; ok {
			h := c.Hints()
			t.hints = &h
			t.limits = c.Limits
			t.record = c.Audit.Record
			d.limited = d.limited || len(c.Limits) > 0
			if len(c.OutputSchema) > 0 {
				if t.output, err = compile(config.ProxyDefaultWorkflow+"."+c.ID+".output", c.OutputSchema); err != nil {
					return err
				}
			}
		}
		// The retries and fallback executors of a capability that reaches
		// a connection (see config.Reliability); the fallbacks reach
		// connections too, which the primary already makes d do.
		if t, ok := d.transitions[c.ID]; ok && c.Reliability != nil && t.Executor != nil && external(t.Executor) {
			t.reliability = c.Reliability
		}
	}
	// A new set, copied definition by definition: a published set is
	// read concurrently, and markOutside writes to the definitions.
	old := r.load()
	next := &definitionSet{defs: make(map[string]*Definition, len(old.defs)+1), ids: slices.Clone(old.ids)}
	for id, od := range old.defs {
		cp := *od
		next.defs[id] = &cp
	}
	if _, had := next.defs[config.ProxyDefaultWorkflow]; !had {
		next.ids = append(next.ids, config.ProxyDefaultWorkflow)
		slices.Sort(next.ids)
	}
	next.defs[config.ProxyDefaultWorkflow] = d
	next.markOutside()
	r.set.Store(next)
	return nil
}

// Limited reports whether a transition of d has rate limits (a proxy
// capability with limits).
func (d *Definition) Limited() bool { return d.limited }

// Limits are the rate limits of a proxy capability: its own and those of
// the capabilities it wraps (config.ExposedCapability.Limits); none for a
// transition of a configured workflow.
func (t *Transition) Limits() []config.CapabilityLimit { return t.limits }

// Proxy reports whether d is the built-in proxy_default workflow.
func (d *Definition) Proxy() bool { return d.proxy }

// Destructive reports whether t is a proxy capability the configuration's
// annotations in force mark destructive (config.ExposedCapability.Hints:
// the configured hints over those derived from the executor; an upstream's
// own annotations are never read). A transition of a configured workflow
// carries no annotations: false.
func (t *Transition) Destructive() bool { return t.hints != nil && t.hints.Destructive }

// Expire moves a proxy_default run to ExpiredState: the state changes, the
// version goes up by one, the context's ExpiredKey member holds info (when
// and why, as the caller says), and the outcome's one event is
// workflow.expired with info and the state the run left. A run of another
// workflow, one that ended already and one waiting for an approval are
// refused (MISSION_STATE_CONFLICT) and left as they are.
func (e *Engine) Expire(in *Instance, info map[string]any) (*Outcome, error) {
	d, ok := e.Registry.Lookup(in.DefinitionID)
	switch {
	case !ok || !d.proxy:
		return nil, contracts.Errorf(contracts.CodeMissionStateConflict, "only a run of %s expires; this mission is a %s", config.ProxyDefaultWorkflow, in.DefinitionID)
	case d.Terminal(in.State):
		return nil, contracts.Errorf(contracts.CodeMissionStateConflict, "the mission already ended in state %s", in.State)
	case in.Pending != nil:
		return nil, contracts.Errorf(contracts.CodeMissionStateConflict, "the mission waits for approval %s", in.Pending.ApprovalID)
	}
	in = in.Clone()
	from := in.State
	if in.Context == nil {
		in.Context = map[string]any{}
	}
	in.Context[ExpiredKey] = jsonvalue.CloneMap(info)
	in.State = ExpiredState
	in.Version++
	attrs := jsonvalue.CloneMap(info)
	if attrs == nil {
		attrs = map[string]any{}
	}
	attrs["from"] = from
	return &Outcome{Instance: in, Events: []Event{{Type: "workflow.expired", WorkflowID: in.ID, Attributes: attrs}}}, nil
}

// LastRunKey is the context member of a proxy_default run that holds the
// result of its latest move: {capability, ok, output, error?}.
const LastRunKey = "lastRun"

// proxyFirstMove reads which capability a proxy_default start fires and
// with which arguments: input.capability names it; the arguments are
// req.Arguments when given, else the input's other members.
func proxyFirstMove(d *Definition, req StartRequest, input map[string]any) (*Transition, map[string]any, error) {
	id, _ := input["capability"].(string)
	if id == "" {
		return nil, nil, &contracts.Error{Code: contracts.CodeInvalidParams,
			Message: "a run of proxy_default starts with the capability it fires first: input.capability",
			Hint:    "Copy the start link of a capability that search or describe answered.",
			Fields:  []contracts.FieldError{{Pointer: "/input/capability", Keyword: "required", Detail: "is required"}},
			Links:   []contracts.Link{{Rel: "list_capabilities", Method: contracts.ToolPraxecQuery, Args: map[string]any{"query": "", "kind": "capability"}}}}
	}
	t, ok := d.transitions[id]
	if !ok {
		return nil, nil, &contracts.Error{Code: contracts.CodeInvalidParams,
			Message: fmt.Sprintf("there is no capability %q", id),
			Hint:    "Search for capabilities and copy a start link.",
			Fields:  []contracts.FieldError{{Pointer: "/input/capability", Detail: "names no capability"}},
			Links:   []contracts.Link{{Rel: "search", Method: contracts.ToolPraxecQuery, Args: map[string]any{"query": id, "kind": "capability"}}}}
	}
	args := req.Arguments
	if args == nil {
		args = maps.Clone(input)
		delete(args, "capability")
	}
	return t, jsonvalue.CloneMap(args), nil
}

// producers lists the capabilities of d that produce one of the evidence
// names, in declaration order.
func (d *Definition) producers(evidence []string) []*Transition {
	var out []*Transition
	for _, t := range d.Workflow.Transitions {
		for _, ev := range t.Produces {
			if slices.Contains(evidence, ev) {
				out = append(out, d.transitions[t.Name])
				break
			}
		}
	}
	return out
}

// proxyGuardLinks are the links of a GUARD_REJECTED answer of capability
// c in a proxy run: the moves that produce the missing evidence, and the
// same call with the value an equals guard asks for (args are the call's
// arguments), as starts of a new run when the run does not exist yet, else
// as submits on it. A schedule has no link: only time satisfies it.
func proxyGuardLinks(d *Definition, in *Instance, c *Transition, ge *guardError, args map[string]any, started bool) []contracts.Link {
	var links []contracts.Link
	fixed := maps.Clone(args)
	if fixed == nil {
		fixed = map[string]any{}
	}
	retry := false
	for _, f := range ge.failed {
		if f.kind == config.GuardArgument && f.fix != nil {
			fixed[f.argument] = f.fix
			retry = true
		}
	}
	if retry && !slices.ContainsFunc(ge.failed, func(f guardFailure) bool { return f.fix == nil }) {
		// Every failed guard has a value that passes: the call with them.
		l := contracts.Link{Rel: "retry", Title: "Call " + c.Name + " with the arguments its guards accept",
			Method: contracts.ToolPraxecCommand, Actor: c.Actor()}
		if started {
			l.Args = map[string]any{"workflowId": in.ID, "expectedVersion": in.Version, "transition": c.Name, "arguments": fixed}
			l.InputSchema = c.InputSchema()
		} else {
			input := maps.Clone(fixed)
			input["capability"] = c.Name
			l.Args = map[string]any{"definitionId": config.ProxyDefaultWorkflow, "input": input}
			l.InputSchemaSnake = c.InputSchema()
		}
		links = append(links, l)
	}
	missing := ge.missing
	for _, t := range d.producers(missing) {
		if t.Name == "" {
			continue
		}
		l := contracts.Link{Rel: t.Name, Title: "Produce " + strings.Join(t.Produces, ", ") + " with " + t.Name,
			Method: contracts.ToolPraxecCommand, Actor: t.Actor()}
		if started {
			l.Args = map[string]any{"workflowId": in.ID, "expectedVersion": in.Version, "transition": t.Name}
			l.InputSchema = t.InputSchema()
		} else {
			l.Args = map[string]any{"definitionId": config.ProxyDefaultWorkflow, "input": map[string]any{"capability": t.Name}}
			l.InputSchemaSnake = t.InputSchema()
		}
		links = append(links, l)
	}
	if started {
		links = append(links, contracts.Link{Rel: "get", Method: contracts.ToolPraxecQuery, Args: map[string]any{"workflowId": in.ID}})
	} else {
		// No run was kept: what the capability accepts (its guards, its
		// input schema) is the next read, whatever else helps.
		links = append(links, contracts.Link{Rel: "describe", Title: "Read " + c.Name + ": its guards and its input schema",
			Method: contracts.ToolPraxecQuery, Args: map[string]any{"subject": c.Name}})
	}
	return links
}
