package gateway

import (
	"context"
	"encoding/json"

	oteltrace "go.opentelemetry.io/otel/trace"

	"github.com/praxa/praxa/contracts"
	"github.com/praxa/praxa/gateway/auth"
	"github.com/praxa/praxa/gateway/catalogue"
	"github.com/praxa/praxa/gateway/config"
	"github.com/praxa/praxa/gateway/op"
	"github.com/praxa/praxa/gateway/store"
	"github.com/praxa/praxa/gateway/telemetry/tracing"
	"github.com/praxa/praxa/gateway/workflow"
)

// This file is the typed entry point of a directly exposed capability (an
// MCP tool of its own, mcpadapter's direct tools). Such a call is the
// describe link of seeds/000 made by the surface: praxec.command start of
// proxy_default with input.capability, and it passes the one admission
// chain (admission.go) as that start: the praxec.command tool allowlist,
// the start row's scope, then the capability's own input schema (its
// arguments are not rebuilt as a start to be validated), then at execution
// the policy. Then:
//
//   - a capability that can be called without a run (no guard, no
//     evidence produced, no approval: workflow.Definition.Standalone)
//     takes the light path (package lightpath): its executor is called
//     once and one audit event is committed, group-committed with others,
//     before the answer leaves; no mission, lease or idempotency record;
//   - any other starts a one-move run of proxy_default, as the same
//     praxec.command start does, and answers its first move.
//
// A direct call carries no idempotency key and no runId (the surface has
// nowhere to put them); a caller that needs either, or evidence across
// calls, uses praxec.command.

// DirectCall is one call of a directly exposed capability.
type DirectCall struct {
	// Capability is the capability's id (the tool's name).
	Capability string
	Surface    Surface
	// Args loads the call's arguments (the capability's own, a JSON
	// object); it is called after the allowlist and scope checks.
	Args func() (map[string]any, error)
	// ToolSet names the tool set the surface serves ("" for all).
	ToolSet string
	// RequestID identifies the request; TraceID is its W3C trace id.
	RequestID, TraceID string
}

// DirectResult is the answer of a DirectCall.
type DirectResult struct {
	// Call is the capability's answer (nil when Err is set): OK with its
	// output, or the upstream's failure with its message and output.
	Call *workflow.Call
	// Workflow is the run the call started, nil on the light path.
	Workflow *WorkflowRef
	// Links are the next calls: on the light path, the start of a run of
	// proxy_default with this capability (the describe link: where
	// evidence, a runId or an idempotency key is wanted); after a run, the
	// run's own links.
	Links []contracts.Link
	// Err refuses or ends the call.
	Err *contracts.Error
	// Light says the call took the light path.
	Light bool
	// TraceID is the trace id an error's envelope names; surfaces fill
	// in the call's own when it is empty.
	TraceID string
}

// CallDirect runs a call of a directly exposed capability for principal p.
func (s *Service) CallDirect(ctx context.Context, p *auth.Principal, c DirectCall) *DirectResult {
	tool := tools[contracts.ToolPraxecCommand]
	call := Call{Tool: tool.Name, Capability: c.Capability, Surface: c.Surface, Args: c.Args, ToolSet: c.ToolSet,
		RequestID: c.RequestID, TraceID: c.TraceID}
	if !s.light.Takes(c.Capability) {
		return s.directRun(ctx, p, call)
	}
	ctx = traced(ctx, c.TraceID)
	a, err := s.admit(ctx, p, tool, &call)
	if err == nil {
		// No key, so no idempotency lookup: the execution starts at the
		// policy, on the capability the call names.
		fired := func() (string, string, error) { return config.ProxyDefaultWorkflow, c.Capability, nil }
		if refused := s.admitMove(ctx, p, tool, c.ToolSet, fired); refused != nil {
			err = refused.Err
		}
	}
	if err != nil {
		res := &Result{Err: WithNextMoves(err, tool, directStart(c.Capability, a.args)), Operation: a.opName}
		s.finish(ctx, p, tool, c.RequestID, c.TraceID, res)
		return &DirectResult{Err: res.Err, Light: true}
	}
	ev := op.EventSpec{Actor: op.Actor{Principal: p, Tool: tool.Name, Operation: string(contracts.OpStart)},
		RequestID: c.RequestID, TraceID: c.TraceID, At: s.now()}.Build()
	out, ce := s.lightCall(ctx, p, c.Capability, a.checked, ev)
	if ce != nil {
		if ce.Code == contracts.CodeInternal {
			s.log.ErrorContext(ctx, "direct call failed", "capability", c.Capability, "err", ce.Cause)
		}
		return &DirectResult{Err: ce, Light: true}
	}
	schema := json.RawMessage(nil)
	if d, ok := s.workflows.Lookup(config.ProxyDefaultWorkflow); ok {
		if t, ok := d.Transition(c.Capability); ok {
			schema = t.InputSchema()
		}
	}
	return &DirectResult{Call: out, Light: true, Links: []contracts.Link{catalogue.CapabilityStartLink(c.Capability, schema)}}
}

// lightCall runs a direct call on the light path: while telemetry.Tracing
// an executor span under the request's (its capability and outcome), and
// the gateway's attributes on the request's span.
func (s *Service) lightCall(ctx context.Context, p *auth.Principal, capability string, args workflow.CheckedArgs, ev store.Event) (*workflow.Call, *contracts.Error) {
	if !tracing.Recording(ctx) {
		return s.light.Call(ctx, capability, args, ev)
	}
	outer := ctx
	ctx, span := tracing.StartChild(ctx, "executor light", oteltrace.SpanKindInternal,
		tracing.KeyCapability.String(tracing.Bounded(capability)), tracing.KeyTenant.String(tracing.Bounded(p.Tenant)))
	out, ce := s.light.Call(ctx, capability, args, ev)
	outcome := "ok"
	if ce != nil {
		outcome = string(ce.Code)
		tracing.End(span, nil, outcome)
	} else {
		tracing.End(span, nil, "")
	}
	tracing.Annotate(outer, p.Tenant, string(contracts.OpStart), capability, "", outcome)
	return out, ce
}

// directRun answers a direct call with a one-move run of proxy_default:
// the praxec.command start it stands for, through Invoke.
func (s *Service) directRun(ctx context.Context, p *auth.Principal, call Call) *DirectResult {
	res := s.Invoke(ctx, p, call)
	if res.Err != nil {
		return &DirectResult{Err: res.Err}
	}
	proj, ok := res.value.(Projection)
	if !ok {
		// A replayed answer holds its bytes only.
		if err := json.Unmarshal(res.Body, &proj); err != nil {
			return &DirectResult{Err: asContractError(err)}
		}
	}
	out := &workflow.Call{Capability: call.Capability, Output: map[string]any{}}
	if last, ok := proj.Context[workflow.LastRunKey].(map[string]any); ok {
		out.OK, _ = last["ok"].(bool)
		if o, ok := last["output"].(map[string]any); ok {
			out.Output = o
		}
		out.Error, _ = last["error"].(string)
	}
	wf := proj.Workflow
	return &DirectResult{Call: out, Workflow: &wf, Links: proj.Links}
}
