// Package op is the seam between the service layer (package gateway) and
// the features that live in packages of their own. A feature owns its
// state and hands the service the operations it serves; the service keeps
// the pipeline around them: admission (allowlist, scope, tenancy, key,
// schema), the store transaction, idempotency, the audit commit, the
// answer's status and next moves, and the missions.
//
// A feature is a package with a constructor over the store (the same
// store the service was built on, audit hooks included) and an Operations
// method:
//
//	k := knowledge.New(st, &knowledge.Options{...})
//	svc.Register(k.Operations()...)
//	reloader.Features = append(reloader.Features, k) // state from the configuration
//
// What an operation requires (its scope, its idempotency class, its input
// schema and success status) is read from package contracts by its Name,
// never repeated here. An operation sees its call as a [Request] and
// records its audit events on it; the service commits them with the
// answer.
//
// A feature whose state comes from the configuration is a [Reloadable]: a
// reload stages every feature before it swaps any, so a configuration that
// fails anywhere is refused whole.
//
// This package imports no feature and not package gateway: a feature
// imports it, never the service.
package op

import (
	"cmp"
	"context"
	"time"

	"github.com/praxa/praxa/contracts"
	"github.com/praxa/praxa/gateway/auth"
	"github.com/praxa/praxa/gateway/config"
	"github.com/praxa/praxa/gateway/skills"
	"github.com/praxa/praxa/gateway/store"
)

// Operation is one operation a feature serves: a contract tool's
// operationId or a praxec dispatch operation. Set exactly one of Read and
// Mutate.
type Operation struct {
	// Name is the operationId (or the praxec dispatch operation) the
	// service dispatches to this operation.
	Name string
	// Read answers a safe read inside one read transaction. Its tx is nil
	// when Storeless is set. An error it returns is the answer (AsError
	// converts it); its events are recorded asynchronously.
	Read func(ctx context.Context, tx store.ReadTx, r *Request) (any, error)
	// Storeless marks a read that answers from memory: it runs without
	// opening a store transaction.
	Storeless bool
	// Mutate changes state inside the write transaction that also commits
	// the call's idempotency record and its events. It must return any
	// error before it writes: a contract error is recorded as the answer
	// and the transaction commits only the record and the events.
	Mutate func(ctx context.Context, tx store.Tx, r *Request) (any, error)
}

// Request is what an operation sees of its call: who calls, which tool,
// with which arguments, and the ids that place its events in a trace.
type Request struct {
	// Principal is the verified caller; its Tenant bounds every read.
	Principal *auth.Principal
	// Tool is the contract tool the call came in as.
	Tool contracts.Tool
	// Args are the call's arguments, checked against the tool's input
	// schema (read them with StringArg and its siblings).
	Args map[string]any
	// RequestID identifies the request; TraceID is its trace.
	RequestID, TraceID string
	// CallTraceID is the trace the caller named (praxec.command traceId),
	// which every event of the call carries besides TraceID.
	CallTraceID string
	// Now is the service's clock when the call was admitted.
	Now time.Time
	// Events are the audit events the call recorded (Event), committed
	// with its answer.
	Events []store.Event
}

// Event records an audit event of this call (outcome allowed, at Now), to
// commit with its answer.
func (r *Request) Event(typ string, attrs map[string]any) {
	r.Events = append(r.Events, r.EventOf(EventSpec{Type: typ, Outcome: "allowed", Attributes: attrs}))
}

// EventOf is the audit event s specifies, as an event of this call: what
// s leaves empty of its actor, its request id and traces (the request's
// and the one the caller named, CallTraceID) and its time is the call's
// (Actor, RequestID, TraceID, CallTraceID, Now).
func (r *Request) EventOf(s EventSpec) store.Event {
	if s.Actor == (Actor{}) {
		s.Actor = r.Actor()
	}
	s.RequestID = cmp.Or(s.RequestID, r.RequestID)
	s.TraceID = cmp.Or(s.TraceID, r.TraceID)
	s.CallTraceID = cmp.Or(s.CallTraceID, r.CallTraceID)
	if s.At.IsZero() {
		s.At = r.Now
	}
	return s.Build()
}

// Actor is who the call's events name as acting: its principal through
// its tool.
func (r *Request) Actor() Actor { return Caller(r.Principal, r.Tool) }

// Staged is a configuration a reload has read and checked, with the parts
// built from it that more than one feature reads.
type Staged struct {
	// Config is the new configuration, prepared as at start.
	Config *config.Config
	// Skills are its skills (the catalogue lists them, the knowledge
	// reads serve them); never nil.
	Skills *skills.Catalog
}

// A Reloadable is a feature whose state comes from the configuration.
// Stage builds that state from s without installing it and returns what
// installs it; an error refuses the reload, and nothing has changed. The
// service calls Stage for every feature before it calls any apply, and the
// applies one at a time, with no call in between guaranteed: each must
// swap its state atomically.
type Reloadable interface {
	Stage(s Staged) (apply func(), err error)
}
