package op

import (
	"maps"
	"time"

	"github.com/praxa/praxa/contracts"
	"github.com/praxa/praxa/gateway/auth"
	"github.com/praxa/praxa/gateway/redact"
	"github.com/praxa/praxa/gateway/store"
)

// Actor is who an audit event names as acting: a principal (its tenant,
// subject and client) and the tool and operation it acted through.
type Actor struct {
	// Principal acts; a nil Principal leaves the event's tenant, subject
	// and client empty.
	Principal *auth.Principal
	// Tool and Operation name what it acted through (the event's Tool and
	// Operation).
	Tool, Operation string
}

// Caller is the actor of p's call of tool: the tool's name and its
// operationId.
func Caller(p *auth.Principal, tool contracts.Tool) Actor {
	return Actor{Principal: p, Tool: tool.Name, Operation: tool.OperationID}
}

// SystemActor is one of the gateway's own jobs (a sweeper, a resume in the
// background) acting in tenant: its events name it as their subject and
// their tool, and operation as their operation.
func SystemActor(tenant, name, operation string) Actor {
	return Actor{Principal: &auth.Principal{Tenant: tenant, Subject: name}, Tool: name, Operation: operation}
}

// Request is a call of a's as an operation sees it, at now and with no
// arguments: how the gateway's own jobs and its operator commands run the
// code a caller's call runs. Its Tool names only a's tool and operation.
func (a Actor) Request(now time.Time) Request {
	return Request{Principal: a.Principal, Tool: contracts.Tool{Name: a.Tool, OperationID: a.Operation}, Args: map[string]any{}, Now: now}
}

// EventSpec is an audit event to build: who acted, what happened, when,
// and the ids that place it in a trace.
type EventSpec struct {
	// Actor acted.
	Actor Actor
	// Type is the event's type (request.allowed, lease.expired, ...);
	// Outcome is allowed, refused, replayed or failed, and Code the
	// contract code of a refusal or failure.
	Type, Outcome, Code string
	// RequestID and TraceID are the request's; CallTraceID is the trace
	// the caller named (praxec.command traceId).
	RequestID, TraceID, CallTraceID string
	// At is when it happened.
	At time.Time
	// Attributes are the event's own fields (not copied: the built event
	// holds this map unless the actor adds its uid).
	Attributes map[string]any
}

// Build is the store event of s.
func (s EventSpec) Build() store.Event {
	e := store.Event{Type: s.Type, At: s.At, Operation: s.Actor.Operation, Tool: s.Actor.Tool, Outcome: s.Outcome,
		Code: s.Code, RequestID: s.RequestID, TraceID: s.TraceID, CallTraceID: s.CallTraceID, Attributes: s.Attributes}
	ByPrincipal(&e, s.Actor.Principal)
	return e
}

// ByPrincipal sets who acted on ev: p's tenant, subject and client, and
// for an operating-system account (an operator command run without a
// token) its uid attribute. A nil p leaves ev as it is.
func ByPrincipal(ev *store.Event, p *auth.Principal) {
	if p == nil {
		return
	}
	ev.Tenant, ev.Subject, ev.ClientID = p.Tenant, p.Subject, p.ClientID
	if p.LocalUID != "" {
		attrs := make(map[string]any, len(ev.Attributes)+1)
		maps.Copy(attrs, ev.Attributes)
		attrs["uid"] = p.LocalUID
		ev.Attributes = attrs
	}
}

// TraceEvent is one audit event as the gateway shows it outside the store,
// redacted: in a trace (aura_get_trace), on the console and in an audit
// sink.
type TraceEvent struct {
	Seq        int64          `json:"seq"`
	Type       string         `json:"type"`
	At         string         `json:"at"`
	Outcome    string         `json:"outcome"`
	Code       string         `json:"code,omitempty"`
	Subject    string         `json:"subject,omitempty"`
	Operation  string         `json:"operation,omitempty"`
	Tool       string         `json:"tool,omitempty"`
	RunID      string         `json:"runId,omitempty"`
	WorkflowID string         `json:"workflowId,omitempty"`
	RequestID  string         `json:"requestId,omitempty"`
	Attributes map[string]any `json:"attributes,omitempty"`
}

// TraceEventOf is ev as a TraceEvent, its attributes redacted (package
// redact).
func TraceEventOf(ev store.Event) TraceEvent {
	return TraceEvent{
		Seq: ev.Seq, Type: ev.Type, At: ev.At.UTC().Format(time.RFC3339Nano), Outcome: ev.Outcome, Code: ev.Code,
		Subject: ev.Subject, Operation: ev.Operation, Tool: ev.Tool, RunID: ev.RunID, WorkflowID: ev.WorkflowID,
		RequestID: ev.RequestID, Attributes: redact.Attributes(ev.Attributes),
	}
}
