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
// subject and client), or with none the party Subject names, and the tool
// and operation it acted through.
type Actor struct {
	// Principal acts; a nil Principal leaves the event's tenant and
	// client empty and its subject Subject.
	Principal *auth.Principal
	// Subject is who acts when Principal is nil: the operator at the
	// gateway's command line (Operator), the gateway itself (Gateway), the
	// signal a reload came by. A Principal's own subject wins.
	Subject string
	// Tool and Operation name what it acted through (the event's Tool and
	// Operation).
	Tool, Operation string
}

// The subjects of the actors that act with no principal.
const (
	// SubjectOperator is the operator at the gateway's command line,
	// acting with no token and the store's authority.
	SubjectOperator = "operator"
	// SubjectGateway is the gateway itself (its check of the pinned
	// capabilities at start and on reload).
	SubjectGateway = "gateway"
)

// Caller is the actor of p's call of tool: the tool's name and its
// operationId.
func Caller(p *auth.Principal, tool contracts.Tool) Actor {
	return Actor{Principal: p, Tool: tool.Name, Operation: tool.OperationID}
}

// Operator is an operator's command through tool and operation: p's when
// it came with a token (an operator endpoint), the operator at the command
// line (SubjectOperator, no tenant) when p is nil.
func Operator(p *auth.Principal, tool, operation string) Actor {
	return Actor{Principal: p, Subject: SubjectOperator, Tool: tool, Operation: operation}
}

// Gateway is the gateway itself acting on tool through operation, in no
// tenant: its events name SubjectGateway as their subject.
func Gateway(tool, operation string) Actor {
	return Actor{Subject: SubjectGateway, Tool: tool, Operation: operation}
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
// and the ids that place it in a trace and a run. Build is the one place
// that decides an event's subject, tenant and client from its actor; an
// event's attributes are stored as given and redacted where it is shown
// (TraceEventOf).
type EventSpec struct {
	// Actor acted.
	Actor Actor
	// Tenant, when set, is the tenant the event belongs to in place of
	// the actor's: an operator's import into a tenant, the resolution of
	// a lease of another tenant's.
	Tenant string
	// Type is the event's type (request.allowed, lease.expired, ...);
	// Outcome is allowed, refused, replayed or failed, and Code the
	// contract code of a refusal or failure.
	Type, Outcome, Code string
	// RequestID and TraceID are the request's; CallTraceID is the trace
	// the caller named (praxec.command traceId).
	RequestID, TraceID, CallTraceID string
	// WorkflowID and RunID are the run the event is about, if any.
	WorkflowID, RunID string
	// At is when it happened.
	At time.Time
	// Attributes are the event's own fields (not copied: the built event
	// holds this map unless the actor adds its uid).
	Attributes map[string]any
}

// Build is the store event of s.
func (s EventSpec) Build() store.Event {
	e := store.Event{Type: s.Type, At: s.At, Operation: s.Actor.Operation, Tool: s.Actor.Tool, Outcome: s.Outcome,
		Code: s.Code, RequestID: s.RequestID, TraceID: s.TraceID, CallTraceID: s.CallTraceID,
		WorkflowID: s.WorkflowID, RunID: s.RunID, Subject: s.Actor.Subject, Attributes: s.Attributes}
	byPrincipal(&e, s.Actor.Principal)
	if s.Tenant != "" {
		e.Tenant = s.Tenant
	}
	return e
}

// byPrincipal sets who acted on ev: p's tenant, subject and client, and
// for an operating-system account (an operator command run without a
// token) its uid attribute. A nil p leaves ev as it is.
func byPrincipal(ev *store.Event, p *auth.Principal) {
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
