// Package lightpath runs the calls for which the contract promises nothing
// durable but their audit event: a directly exposed capability called
// without an idempotency key, a run or a guard, whose capability produces
// no evidence (DESIGN, "Missions are praxec workflows"). Such a call needs
// no mission, no lease and no per-call transaction: Path calls the
// capability's executor once (workflow.Engine.CallStandalone, with the
// arguments the caller checked against the capability's input schema, and
// its reliability) and then commits the call's
// one audit event through a Journal that groups concurrent commits, before
// the answer leaves.
//
// The service layer (package gateway) decides that a call takes this path
// and runs the checks every call gets first (tool allowlist, scope,
// policy); everything else, a call with a key, a run or a guard, goes
// through the mission machinery as a one-move run of proxy_default.
//
// Package lightpath imports the workflow engine, the store's event type and
// contracts; it must not import package gateway or any surface.
package lightpath

import (
	"context"
	"errors"

	"github.com/praxa/praxa/contracts"
	"github.com/praxa/praxa/gateway/config"
	"github.com/praxa/praxa/gateway/store"
	"github.com/praxa/praxa/gateway/workflow"
)

// EventCalled is the type of the audit event of a call on the light path.
const EventCalled = "capability.called"

// Journal commits an audit event durably: Commit returns once the event is
// committed, or with the error that kept it from committing. Concurrent
// Commits should share a transaction (audit.Auditor.Commit does).
type Journal interface {
	Commit(ctx context.Context, e store.Event) error
}

// Path runs calls on the light path.
type Path struct {
	// Engine runs the capability's executor; its Registry holds
	// proxy_default.
	Engine *workflow.Engine
	// Journal commits each call's audit event.
	Journal Journal
}

// Takes reports whether a call of capability takes the light path: the
// capability is one of proxy_default's and can be called without a run
// (workflow.Definition.Standalone). The caller adds what the call itself
// must lack (a key, a run).
func (p *Path) Takes(capability string) bool {
	d, ok := p.Engine.Registry.Lookup(config.ProxyDefaultWorkflow)
	return ok && d.Standalone(capability)
}

// Call runs capability with args (checked: workflow.CheckedArgs) and
// commits ev, the call's audit event,
// completed with what happened: type EventCalled, outcome allowed (the
// upstream answered, ok or not) or refused (with the error's code), and
// the attributes capability, ok, the executor's kind and connection, the
// upstream's error message and the attempts when there are any, and the
// arguments and output the capability's audit block records. It
// answers the call, or the contract error that refused or ended it.
//
// An answer whose event could not be committed is not given: the call
// ends outcome-unknown instead, since the upstream may have acted.
func (p *Path) Call(ctx context.Context, capability string, args workflow.CheckedArgs, ev store.Event) (*workflow.Call, *contracts.Error) {
	d, ok := p.Engine.Registry.Lookup(config.ProxyDefaultWorkflow)
	if !ok || !d.Standalone(capability) {
		// A reload between Takes and Call changed the capability.
		return nil, &contracts.Error{Code: contracts.CodeUnavailable, Message: "the capability " + capability + " changed while the call was being prepared",
			Hint: "Nothing was sent; call it again."}
	}
	call, err := p.Engine.CallStandalone(ctx, d, capability, args)
	ev.Type = EventCalled
	attrs := map[string]any{"capability": capability}
	var ce *contracts.Error
	if err != nil {
		// Nothing but the audit event records a call on this path: an
		// outcome-unknown must not invite a retry.
		ce = workflow.Unrecorded(asContract(err))
		ev.Outcome, ev.Code = "refused", string(ce.Code)
	} else {
		ev.Outcome = "allowed"
		attrs["ok"] = call.OK
		if call.Executor != nil {
			attrs["kind"], attrs["connection"] = string(call.Executor.Kind), call.Executor.Connection
		}
		if !call.OK {
			attrs["error"] = call.Error
		}
		if len(call.Attempts) > 0 {
			attrs["attempts"] = call.Attempts
		}
		// What the capability's audit block records of the call.
		for k, v := range call.Recorded {
			attrs[k] = v
		}
	}
	ev.Attributes = attrs
	if cerr := p.Journal.Commit(context.WithoutCancel(ctx), ev); cerr != nil {
		if ce != nil && ce.Code != contracts.CodeOutcomeUnknown {
			// Refused, or failed before the upstream could act: the answer
			// stands; the event is lost with the store that refused it.
			return nil, ce
		}
		return nil, &contracts.Error{Code: contracts.CodeOutcomeUnknown,
			Message: "the call of " + capability + " was sent, but its audit record could not be written; it may have taken effect",
			Hint:    "Do not repeat it blindly: read the upstream back first. To have a call recorded before it is sent, start a run of proxy_default through praxec.command.",
			Cause:   cerr}
	}
	return call, ce
}

// asContract keeps contract errors and turns anything else into an
// internal error.
func asContract(err error) *contracts.Error {
	var ce *contracts.Error
	if errors.As(err, &ce) {
		return ce
	}
	return &contracts.Error{Code: contracts.CodeInternal, Message: "internal error", Cause: err}
}
