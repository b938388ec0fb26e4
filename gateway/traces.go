package gateway

import (
	"context"
	"time"

	"github.com/praxa/praxa/contracts"
	"github.com/praxa/praxa/gateway/redact"
	"github.com/praxa/praxa/gateway/store"
)

// maxTraceEvents bounds one trace answer.
const maxTraceEvents = 1000

// TraceResult is the answer of aura_get_trace.
type TraceResult struct {
	TraceID string       `json:"traceId"`
	Events  []TraceEvent `json:"events"`
}

// TraceEvent is one audit event as a trace shows it, redacted.
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

// getTrace reads the tenant's events of one trace in causal order. Another
// tenant's trace has no events for this tenant and answers not-found, the
// same as a trace that never existed.
func (s *Service) getTrace(ctx context.Context, tx store.ReadTx, e *env) (any, error) {
	id := stringArg(e.args, "traceId")
	events, err := tx.TraceEvents(ctx, e.principal.Tenant, id, maxTraceEvents)
	if err != nil {
		return nil, err
	}
	if len(events) == 0 {
		return nil, contracts.Errorf(contracts.CodeNotFound, "there is no trace %s", id)
	}
	out := TraceResult{TraceID: id, Events: make([]TraceEvent, len(events))}
	for i, ev := range events {
		out.Events[i] = traceEvent(ev)
	}
	e.event("trace.read", map[string]any{"traceId": id})
	return out, nil
}

// traceEvent is ev as the gateway shows it outside the store, redacted:
// in a trace, and in an audit sink (AuditSinkLine).
func traceEvent(ev store.Event) TraceEvent {
	return TraceEvent{
		Seq: ev.Seq, Type: ev.Type, At: ev.At.UTC().Format(time.RFC3339Nano), Outcome: ev.Outcome, Code: ev.Code,
		Subject: ev.Subject, Operation: ev.Operation, Tool: ev.Tool, RunID: ev.RunID, WorkflowID: ev.WorkflowID,
		RequestID: ev.RequestID, Attributes: redact.Attributes(ev.Attributes),
	}
}
