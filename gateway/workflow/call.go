package workflow

import (
	"context"
	"errors"
	"maps"

	"github.com/praxa/praxa/contracts"
	"github.com/praxa/praxa/gateway/config"
	"github.com/praxa/praxa/internal/jsonvalue"
)

// This file runs one capability of proxy_default without an instance: the
// call the light path makes (gateway/lightpath). A capability qualifies
// when nothing of a run could change its outcome or record anything
// beyond its answer: no guard (no evidence to read), no evidence produced
// (nothing for a later move to read), no person to wait for, no
// sub-workflow, and an executor the engine calls directly (a connection's
// kind, or noop). Everything else about the call is the first move of a
// run exactly: the input schema, the executor with its argument map, its
// reliability (timeouts, retries, fallbacks), its output schema, and a
// failed upstream call being the call's result rather than an error.

// Standalone reports whether capability name of the proxy definition d can
// be called without a run (see CallStandalone). It is false for any other
// definition and for a name d does not hold.
func (d *Definition) Standalone(name string) bool {
	if d == nil || !d.proxy || len(d.Subjects) > 0 {
		return false
	}
	t, ok := d.transitions[name]
	if !ok || len(t.Guards) > 0 || len(t.Produces) > 0 || t.NeedsApproval() || len(t.Set) > 0 {
		return false
	}
	return t.Executor == nil || t.Executor.Kind.Runs() == config.RunNothing || t.Executor.Kind.ReachesOutside()
}

// CheckedArgs are the arguments of a capability of a proxy definition,
// checked against its input schema (Definition.CheckArguments): the only
// arguments CallStandalone takes, so that no call runs unchecked and none
// is checked twice.
type CheckedArgs struct {
	t    *Transition
	args map[string]any
}

// Args returns the checked arguments.
func (c CheckedArgs) Args() map[string]any { return c.args }

// CheckArguments checks args (nil for none) against the input schema of
// capability name, a transition of the proxy definition d, with its field
// errors' pointers under prefix (the start's /input, where a direct call's
// arguments stand). A name d does not hold passes unchecked:
// CallStandalone refuses it.
func (d *Definition) CheckArguments(name string, args map[string]any, prefix string) (CheckedArgs, error) {
	if args == nil {
		args = map[string]any{}
	}
	t, ok := d.transitions[name]
	if !ok || !d.proxy {
		return CheckedArgs{args: args}, nil
	}
	if err := t.validate(args, prefix); err != nil {
		return CheckedArgs{}, err
	}
	return CheckedArgs{t: t, args: args}, nil
}

// Call is the answer of a capability called without a run.
type Call struct {
	// Capability names the capability called.
	Capability string
	// OK says the upstream answered with success; a failed call (an MCP
	// error result, a non-zero exit, an HTTP error status) is a result
	// too, with OK false, Error its message and Output what it answered.
	OK     bool
	Output map[string]any
	Error  string
	// Executor is the capability's executor as declared (nil: none).
	Executor *config.Executor
	// Attempts lists the attempts made (retries, fallbacks) when there
	// was more than one, as the audit event and a run's lastRun show them.
	Attempts []any
	// Recorded is what the capability's audit block records of the call
	// (config.CapabilityAudit.Record): {"arguments": ..., "output": ...},
	// redacted; nil when it records nothing. The audit event of the call
	// carries its members as attributes.
	Recorded map[string]any
}

// Record renders c as a run's lastRun shows a move: capability, ok,
// output, and error and attempts when there are any.
func (c *Call) Record() map[string]any {
	r := map[string]any{"capability": c.Capability, "ok": c.OK, "output": c.Output}
	if !c.OK {
		r["error"] = c.Error
	}
	if len(c.Attempts) > 0 {
		r["attempts"] = c.Attempts
	}
	return r
}

// CallStandalone calls capability name of the proxy definition d with the
// arguments checked against its input schema (CheckArguments: the caller
// checks them before its policy, as the order of checks wants; arguments
// checked against another definition are checked again), outside any
// instance: the executor under the capability's reliability, `$.input`
// paths reading the arguments with capability added (a run's input).
// d.Standalone(name) must hold.
//
// A contract error refuses the call before anything was sent (unknown
// capability) or answers an executor that
// could not be reached or whose outcome is unknown (unavailable,
// outcome-unknown), as the first move of a new run answers them: without
// links, since there is no run to read back.
func (e *Engine) CallStandalone(ctx context.Context, d *Definition, name string, checked CheckedArgs) (*Call, error) {
	if !d.Standalone(name) {
		return nil, contracts.Errorf(contracts.CodeInternal, "capability %q cannot be called without a run", name)
	}
	t := d.transitions[name]
	args := checked.args
	if checked.t != t {
		// Checked against another definition (a reload came between), or
		// not at all: check against this one.
		var err error
		if checked, err = d.CheckArguments(name, args, "/input"); err != nil {
			return nil, err
		}
		args = checked.args
	}
	input := maps.Clone(args)
	input["capability"] = name
	scope := Scope{Arguments: args, Context: map[string]any{}, Input: input}
	call := &Call{Capability: name, OK: true, Executor: t.Executor}
	output, attempts, err := e.callStandalone(ctx, t, scope)
	var xe *ExecutorError
	switch {
	case err == nil:
		if xe = t.checkOutput(output); xe != nil {
			call.OK, call.Error, output = false, xe.Message, nil
		}
	case errors.As(err, &xe) && xe.Outcome == OutcomeFailed:
		call.OK, call.Error, output = false, xe.Message, xe.Output
	case errors.As(err, &xe):
		return nil, xe.contractError("")
	default:
		return nil, err
	}
	if output == nil {
		output = map[string]any{}
	}
	call.Output = jsonvalue.CloneMap(output)
	if listAttempts(attempts) {
		call.Attempts = attemptRecords(attempts)
	}
	call.Recorded = t.recorded(args, output)
	return call, nil
}

// callStandalone runs t's executor as execute does for a connection's kind
// (noop answers nothing).
func (e *Engine) callStandalone(ctx context.Context, t *Transition, scope Scope) (map[string]any, []attempt, error) {
	if t.Executor == nil || t.Executor.Kind.Runs() == config.RunNothing {
		return map[string]any{}, nil, nil
	}
	if t.Executor.Kind.Runs() == config.RunBranches {
		return e.parallel(ctx, *t.Executor, t.reliability, scope)
	}
	if _, ok := e.Runners[t.Executor.Kind]; !ok {
		return nil, nil, contracts.Errorf(contracts.CodeNotImplemented, "executors of kind %s need connections, which this gateway does not run here", t.Executor.Kind)
	}
	return e.callReliably(ctx, *t.Executor, t.reliability, scope)
}
