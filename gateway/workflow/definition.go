// Package workflow is the praxec workflow engine: definitions compiled from
// the configuration, and the pure state machine that starts instances,
// fires transitions (guards right before executors), chains deterministic
// transitions, and says which moves are legal now. It knows nothing of
// storage, HTTP or MCP: the service layer loads an Instance, asks the
// engine for the next one, and stores it with compare-and-set.
package workflow

import (
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"sync/atomic"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/praxa/praxa/contracts"
	"github.com/praxa/praxa/gateway/config"
)

// CancelledState is the terminal state every instance can be cancelled
// into; definitions need not declare it.
const CancelledState = "cancelled"

// Definition is a compiled workflow definition.
type Definition struct {
	ID string
	config.Workflow
	input       *jsonschema.Schema
	transitions map[string]*Transition
	// proxy marks the built-in proxy_default workflow (AddProxy).
	proxy bool
	// outside says a move may reach outside the engine (ReachesOutside).
	outside bool
	// limited says a transition has rate limits (Limited).
	limited bool
}

// Transition is a compiled transition.
type Transition struct {
	config.Transition
	input *jsonschema.Schema
	// inputSchema is the schema JSON links carry.
	inputSchema json.RawMessage
	// reliability is the retry and fallback policy of the executor (a
	// proxy capability's reliability; nil for the defaults).
	reliability *config.Reliability
	// guards are the transition's guards, prepared (guards.go).
	guards []compiledGuard
	// hints are the annotations in force of a proxy capability
	// (config.ExposedCapability.Hints; nil elsewhere).
	hints *config.Hints
	// limits are a proxy capability's rate limits
	// (config.ExposedCapability.Limits; nil elsewhere).
	limits []config.CapabilityLimit
	// output is a proxy capability's output schema
	// (config.ExposedCapability.OutputSchema, compiled once; nil: none),
	// which a successful output must satisfy (checkOutput).
	output *jsonschema.Schema
	// record are the paths a proxy capability's audit block records of
	// its calls (config.CapabilityAudit.Record; record.go).
	record []string
}

// Actor returns the transition's actor, agent by default.
func (t *Transition) Actor() string {
	if t.Transition.Actor == "" {
		return config.ActorAgent
	}
	return t.Transition.Actor
}

// NeedsApproval reports whether firing the transition waits for a person:
// a human actor or a human executor.
func (t *Transition) NeedsApproval() bool {
	return t.Actor() == config.ActorHuman || (t.Executor != nil && t.Executor.Kind.NeedsApproval())
}

// InputSchema returns the JSON Schema of the transition's arguments
// ({"type":"object"} when it declares none).
func (t *Transition) InputSchema() json.RawMessage {
	return append(json.RawMessage(nil), t.inputSchema...)
}

// Registry holds the compiled definitions. Its set can be replaced as a
// whole (Replace, on a configuration reload) while it is read: a Lookup
// sees the old set or the new one, never a mix.
type Registry struct {
	set atomic.Pointer[definitionSet]
}

// definitionSet is one compiled set of definitions; it is not changed once
// a Registry publishes it.
type definitionSet struct {
	defs map[string]*Definition
	ids  []string
}

// load returns the current set (an empty one for a zero Registry).
func (r *Registry) load() *definitionSet {
	if s := r.set.Load(); s != nil {
		return s
	}
	return &definitionSet{defs: map[string]*Definition{}}
}

// Replace makes next's definitions those of r, atomically: later Lookups
// answer from them. Instances keep their definition id, so an instance
// whose definition next still holds moves on under next's version of it.
// next should not be used on its own afterwards.
func (r *Registry) Replace(next *Registry) {
	r.set.Store(next.load())
}

// Compile compiles the configured workflows. The configuration loader has
// already checked their structure; Compile compiles their schemas.
func Compile(workflows map[string]config.Workflow) (*Registry, error) {
	r := &definitionSet{defs: map[string]*Definition{}}
	for id, w := range workflows {
		d := &Definition{ID: id, Workflow: w, transitions: map[string]*Transition{}}
		if len(w.InputSchema) > 0 {
			s, err := compile(id+".input", w.InputSchema)
			if err != nil {
				return nil, err
			}
			d.input = s
		}
		for _, t := range w.Transitions {
			ct := &Transition{Transition: t, inputSchema: json.RawMessage(`{"type":"object"}`)}
			gs, err := compileGuards(id+"."+t.Name, t.Guards)
			if err != nil {
				return nil, err
			}
			ct.guards = gs
			if len(t.InputSchema) > 0 {
				s, err := compile(id+"."+t.Name+".input", t.InputSchema)
				if err != nil {
					return nil, err
				}
				ct.input = s
				ct.inputSchema, _ = json.Marshal(t.InputSchema)
			}
			d.transitions[t.Name] = ct
		}
		r.defs[id] = d
		r.ids = append(r.ids, id)
	}
	sort.Strings(r.ids)
	r.markOutside()
	reg := &Registry{}
	reg.set.Store(r)
	return reg, nil
}

func compile(name string, schema map[string]any) (*jsonschema.Schema, error) {
	b, err := json.Marshal(schema)
	if err != nil {
		return nil, fmt.Errorf("workflow: schema %s: %w", name, err)
	}
	s, err := contracts.CompileSchema(name, b)
	if err != nil {
		return nil, fmt.Errorf("workflow: %w", err)
	}
	return s, nil
}

// ReachesOutside reports whether a move of d may run an executor of a
// kind that reaches outside the engine (config.Kind.ReachesOutside), in a
// transition, a state's onEnter or a sub-workflow.
func (d *Definition) ReachesOutside() bool { return d.outside }

// external reports whether x reaches outside the engine.
func external(x *config.Executor) bool {
	return x != nil && x.Kind.ReachesOutside()
}

// subWorkflow returns the definition x starts as a sub-workflow, if it
// starts one.
func subWorkflow(x *config.Executor) (string, bool) {
	if x == nil || x.Kind.Runs() != config.RunWorkflow {
		return "", false
	}
	return x.DefinitionID, true
}

// markOutside sets outside on the definitions that reach outside, through
// their sub-workflows too.
func (r *definitionSet) markOutside() {
	direct := map[string]bool{}
	subs := map[string][]string{}
	for id, d := range r.defs {
		for _, st := range d.States {
			direct[id] = direct[id] || external(st.OnEnter)
			if sub, ok := subWorkflow(st.OnEnter); ok {
				subs[id] = append(subs[id], sub)
			}
		}
		for _, t := range d.Workflow.Transitions {
			direct[id] = direct[id] || external(t.Executor)
			if sub, ok := subWorkflow(t.Executor); ok {
				subs[id] = append(subs[id], sub)
			}
		}
	}
	for id, d := range r.defs {
		seen := map[string]bool{}
		var walk func(string) bool
		walk = func(x string) bool {
			if seen[x] {
				return false
			}
			seen[x] = true
			if direct[x] {
				return true
			}
			for _, y := range subs[x] {
				if walk(y) {
					return true
				}
			}
			return false
		}
		d.outside = walk(id)
	}
}

// Lookup returns the definition with this id.
func (r *Registry) Lookup(id string) (*Definition, bool) {
	d, ok := r.load().defs[id]
	return d, ok
}

// IDs returns the definition ids, sorted.
func (r *Registry) IDs() []string { return slices.Clone(r.load().ids) }

// Transition returns the named transition.
func (d *Definition) Transition(name string) (*Transition, bool) {
	t, ok := d.transitions[name]
	return t, ok
}

// Terminal reports whether state ends the workflow. A nil d (a definition
// a configuration reload removed) knows only the cancelled state.
func (d *Definition) Terminal(state string) bool {
	if state == CancelledState {
		return true
	}
	if d == nil {
		return false
	}
	return d.States[state].Terminal
}

// Legal returns the transitions that may leave state, in declaration order.
func (d *Definition) Legal(state string) []*Transition {
	if d.Terminal(state) {
		return nil
	}
	var out []*Transition
	for _, t := range d.Workflow.Transitions {
		if slices.Contains(t.From, state) {
			out = append(out, d.transitions[t.Name])
		}
	}
	return out
}
