package gateway

import (
	"context"
	"maps"

	"github.com/praxa/praxa/contracts"
	"github.com/praxa/praxa/gateway/auth"
	"github.com/praxa/praxa/gateway/config"
	"github.com/praxa/praxa/gateway/ratelimit"
	"github.com/praxa/praxa/gateway/workflow"
)

// This file is the one admission chain (DESIGN, "Order of checks"). Every
// call, whatever surface it came in on (REST, MCP over HTTP or stdio, the
// console) and whatever it is (a contract tool, the praxec pair, a
// directly exposed capability), passes the same checks in the same order;
// the first that refuses answers and nothing later runs. The edges have
// already applied the transport guards (size 413, media type 415, Origin
// 403), authentication (401) and the principal's rate limit (429). Then:
//
//  1. tool allowlist (403 tool-not-allowed)
//  2. scope, where the call names it before its body: a contract tool's,
//     or the start row's for a direct call (403 insufficient-scope)
//  3. tenancy of the path's object, where the path names it (REST: 404)
//  4. the idempotency key, where a header carries it (REST: 400)
//  5. the arguments, read as strict JSON (400)
//  6. the praxec dispatch row and its scope (400 AMBIGUOUS_INTENT, 403)
//  7. tenancy of the object an argument names (MCP, console: 404)
//  8. the idempotency key, where an argument carries it (400; over REST
//     praxec.command may carry it in both, which must agree)
//  9. the input schema: the tool's, or a direct call's capability's (400)
//  10. the operation is implemented (501)
//
// and at execution, for the calls that act (admitMove): the idempotency
// lookup (replay, 409, 422) → destructive-action policy on the tool, then
// on the capability the call fires → the capability's quarantine → the
// capability's rate limit → lease → guards (under the lease) → quota
// (inside the write transaction) → execute. Reads have nothing to look up
// or to deny; a direct call has no key, so its execution starts at the
// policy.
//
// Steps 2 to 4 and 6 to 8 are each one check whose input a surface carries
// either before the body (a REST path and header) or inside it (MCP
// arguments): the chain takes it from where the call says it is, never
// both.

// admission is one call on its way through the chain.
type admission struct {
	s    *Service
	p    *auth.Principal
	tool contracts.Tool
	c    *Call
	// args are the call's arguments, nil until step 5 read them.
	args map[string]any
	// opName is the operation (the tool's operationId, a praxec dispatch
	// operation, start for a direct call); op its implementation.
	opName      string
	op          operation
	implemented bool
	// key is the call's idempotency key, "" for none.
	key string
	// checked are a direct call's arguments, checked against its
	// capability's input schema.
	checked workflow.CheckedArgs
}

// admissionStep is one check of the chain: nil passes.
type admissionStep struct {
	name  string
	check func(a *admission, ctx context.Context) *contracts.Error
}

// admissionChain is the order of checks before execution, written once.
var admissionChain = [...]admissionStep{
	{"allowlist", (*admission).allowlisted},
	{"scope", (*admission).scopeBeforeBody},
	{"tenancy", (*admission).pathOwned},
	{"key", (*admission).headerKey},
	{"arguments", (*admission).readArguments},
	{"dispatch", (*admission).dispatched},
	{"tenancy", (*admission).argumentOwned},
	{"key", (*admission).argumentKey},
	{"schema", (*admission).validated},
	{"implemented", (*admission).isImplemented},
}

// admit runs the chain for a call of tool. It returns the admitted call,
// or the refusal (with the operation it was refused as, when known).
func (s *Service) admit(ctx context.Context, p *auth.Principal, tool contracts.Tool, c *Call) (*admission, *contracts.Error) {
	a := &admission{s: s, p: p, tool: tool, c: c, opName: tool.OperationID}
	if c.Capability != "" {
		a.opName = string(contracts.OpStart)
	}
	a.op, a.implemented = s.ops[a.opName]
	for _, step := range admissionChain {
		if err := step.check(a, ctx); err != nil {
			return a, err
		}
	}
	return a, nil
}

// praxec reports whether the call is one of the praxec pair, whose
// dispatch row (and so scope and operation) is known only from its body.
func (a *admission) praxec() bool {
	return a.c.Capability == "" && (a.tool.Name == contracts.ToolPraxecQuery || a.tool.Name == contracts.ToolPraxecCommand)
}

// outsideBody reports whether the call's path value and idempotency key
// travel outside its arguments (a REST path and header).
func (a *admission) outsideBody() bool { return a.c.Surface == SurfaceREST }

func (a *admission) allowlisted(_ context.Context) *contracts.Error {
	if !a.p.AllowsTool(a.tool.Name) {
		return contracts.Errorf(contracts.CodeToolNotAllowed, "the token does not allow the tool %s", a.tool.Name)
	}
	return nil
}

// scopeBeforeBody checks the scope a call names before its body: a
// contract tool's, or for a direct call the start row's (the praxec.command
// start it stands for). The praxec pair waits for its row (dispatched).
func (a *admission) scopeBeforeBody(_ context.Context) *contracts.Error {
	switch {
	case a.c.Capability != "":
		return requireScope(a.p, contracts.ScopeMissionsWrite)
	case a.praxec():
		return nil
	}
	return requireScope(a.p, a.tool.RequiredScope)
}

// pathOwned checks, before the key and the body, that the object a REST
// path names belongs to the caller's tenant.
func (a *admission) pathOwned(ctx context.Context) *contracts.Error {
	if !a.outsideBody() || a.praxec() || !a.implemented || a.op.exists == nil {
		return nil
	}
	return a.s.owns(ctx, a.op, a.p, a.c.PathValue)
}

// headerKey checks the idempotency key a REST header carries: required
// operations need one; a versioned one takes one when sent.
func (a *admission) headerKey(_ context.Context) *contracts.Error {
	if !a.outsideBody() || a.tool.Idempotency == contracts.IdempotencySafeRead || a.c.Capability != "" {
		return nil
	}
	if err := checkHeaderKey(a.tool, a.c.Key, a.c.KeySent); err != nil {
		return err
	}
	a.key = a.c.Key
	return nil
}

func (a *admission) readArguments(_ context.Context) *contracts.Error {
	args, err := a.c.Args()
	if err != nil {
		return contracts.AsError(err)
	}
	if args == nil {
		args = map[string]any{}
	}
	a.args = args
	return nil
}

// dispatched classifies a praxec call by the keys its body holds, and
// checks the row's scope.
func (a *admission) dispatched(_ context.Context) *contracts.Error {
	if !a.praxec() {
		return nil
	}
	d, err := contracts.Classify(a.tool.Name, a.args)
	if err != nil {
		return contracts.AsError(err)
	}
	a.opName = string(d.Operation)
	a.op, a.implemented = a.s.ops[a.opName]
	return requireScope(a.p, d.Row.Scope)
}

// argumentOwned checks that the object the path argument names (in the
// arguments, off REST) belongs to the caller's tenant.
func (a *admission) argumentOwned(ctx context.Context) *contracts.Error {
	if a.outsideBody() || !a.implemented || a.op.exists == nil || a.tool.PathArgument == "" {
		return nil
	}
	id, ok := a.args[a.tool.PathArgument].(string)
	if !ok {
		return nil // the schema refuses it
	}
	return a.s.owns(ctx, a.op, a.p, id)
}

// argumentKey takes the idempotency key from the arguments: off REST, a
// required operation needs one; on every surface a versioned one
// (praxec.command) takes one when sent, and on REST a key sent both as the
// Idempotency-Key header and as the idempotencyKey member must be the same.
// A key that is present but empty or not a string is malformed, not
// missing.
func (a *admission) argumentKey(_ context.Context) *contracts.Error {
	raw, present := a.args["idempotencyKey"]
	switch {
	case a.c.Capability != "":
		return nil
	case a.tool.Idempotency == contracts.IdempotencyRequired && !a.outsideBody():
	case a.tool.Idempotency == contracts.IdempotencyVersioned && present:
	default:
		return nil
	}
	k, _ := raw.(string)
	if !present {
		k = ""
	} else if k == "" {
		k = "\x00"
	}
	if err := contracts.CheckIdempotencyKey(k); err != nil {
		return err.(*contracts.Error)
	}
	if a.key != "" && a.key != k {
		return &contracts.Error{Code: contracts.CodeInvalidParams,
			Message: "the Idempotency-Key header and the idempotencyKey member name two different keys",
			Hint:    "Send the key once (the header or the member), or the same key in both.",
			Fields:  []contracts.FieldError{{Pointer: "/idempotencyKey", Keyword: "const", Detail: "must equal the Idempotency-Key header"}}}
	}
	a.key = k
	return nil
}

// validated checks the arguments against the input schema: the tool's, or
// for a direct call its capability's (the only schema its arguments have:
// pointers read as the start's input, /input/NAME).
func (a *admission) validated(_ context.Context) *contracts.Error {
	if a.c.Capability == "" {
		if err := contracts.ValidateInput(a.tool.Name, a.args); err != nil {
			return contracts.AsError(err)
		}
		return nil
	}
	d, ok := a.s.workflows.Lookup(config.ProxyDefaultWorkflow)
	if !ok {
		return nil // the move answers not-found itself
	}
	checked, err := d.CheckArguments(a.c.Capability, a.args, "/input")
	if err != nil {
		return contracts.AsError(err)
	}
	a.checked = checked
	return nil
}

func (a *admission) isImplemented(_ context.Context) *contracts.Error {
	if !a.implemented {
		return contracts.Errorf(contracts.CodeNotImplemented, "%s is not available on this gateway yet", a.opName)
	}
	return nil
}

// directStart is the praxec.command start a direct call stands for, which
// its run executes: the capability's arguments beside input.capability (a
// capability argument named capability cannot be sent this way).
func directStart(capability string, args map[string]any) map[string]any {
	input := maps.Clone(args)
	if input == nil {
		input = map[string]any{}
	}
	input["capability"] = capability
	return map[string]any{"definitionId": config.ProxyDefaultWorkflow, "input": input}
}

// admitMove is the chain's execution part for a call that acts, after the
// idempotency lookup: the destructive-action policy on the tool, then on
// the capability the call fires, the capability's quarantine, then its
// rate limit. fired names what the call fires (the definition and the
// transition); it is asked once, and only when a check needs it.
func (s *Service) admitMove(ctx context.Context, p *auth.Principal, tool contracts.Tool, toolSet string, fired func() (def, id string, err error)) *Result {
	if err := s.deniedDestructive(p, tool, toolSet); err != nil {
		return &Result{Err: err}
	}
	if fired == nil {
		return nil
	}
	denies := s.deniesDestructive(p, toolSet)
	d, ok := s.workflows.Lookup(config.ProxyDefaultWorkflow)
	limited := ok && d.Limited()
	if !denies && !limited && !s.pins.Any() {
		return nil // nothing to check: nothing to read
	}
	def, id, err := fired()
	if err != nil {
		return &Result{Err: asContractError(err)}
	}
	if def != config.ProxyDefaultWorkflow {
		return nil
	}
	if denies {
		if err := s.deniedCapability(p, id, toolSet); err != nil {
			return &Result{Err: err}
		}
	}
	if err := s.pins.Refusal(ctx, id); err != nil {
		return &Result{Err: err}
	}
	if err, wait := s.limitedCapability(ctx, id); err != nil {
		return &Result{Err: err, Header: map[string]string{"Retry-After": ratelimit.RetryAfter(wait)}}
	}
	return nil
}

// firedBy is what a move of op fires, asked at most once for the call.
func firedBy(ctx context.Context, op operation, e *env) func() (string, string, error) {
	if op.fires == nil {
		return nil
	}
	var def, id string
	var err error
	done := false
	return func() (string, string, error) {
		if !done {
			def, id, err = op.fires(ctx, e)
			done = true
		}
		return def, id, err
	}
}
