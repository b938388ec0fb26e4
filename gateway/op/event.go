package op

import (
	"maps"
	"time"

	"github.com/praxa/praxa/contracts"
	"github.com/praxa/praxa/gateway/auth"
	"github.com/praxa/praxa/gateway/redact"
	"github.com/praxa/praxa/gateway/store"
)

// EventFor is an audit event of a call of tool by p.
func EventFor(p *auth.Principal, tool contracts.Tool, typ, outcome, code, requestID, traceID string, at time.Time, attrs map[string]any) store.Event {
	e := store.Event{Type: typ, At: at, Operation: tool.OperationID, Tool: tool.Name, Outcome: outcome,
		Code: code, RequestID: requestID, TraceID: traceID, Attributes: attrs}
	ByPrincipal(&e, p)
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
