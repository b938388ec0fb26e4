package knowledge

import (
	"context"

	"github.com/praxa/praxa/contracts"
	"github.com/praxa/praxa/gateway/op"
	"github.com/praxa/praxa/gateway/store"
)

// maxTraceEvents bounds one trace answer.
const maxTraceEvents = 1000

// TraceResult is the answer of aura_get_trace.
type TraceResult struct {
	TraceID string          `json:"traceId"`
	Events  []op.TraceEvent `json:"events"`
}

// getTrace reads the tenant's events of one trace in causal order. Another
// tenant's trace has no events for this tenant and answers not-found, the
// same as a trace that never existed.
func (k *Knowledge) getTrace(ctx context.Context, tx store.ReadTx, e *op.Request) (any, error) {
	id := op.StringArg(e.Args, "traceId")
	events, err := tx.TraceEvents(ctx, e.Principal.Tenant, id, maxTraceEvents)
	if err != nil {
		return nil, err
	}
	if len(events) == 0 {
		return nil, contracts.Errorf(contracts.CodeNotFound, "there is no trace %s", id)
	}
	out := TraceResult{TraceID: id, Events: make([]op.TraceEvent, len(events))}
	for i, ev := range events {
		out.Events[i] = op.TraceEventOf(ev)
	}
	e.Event("trace.read", map[string]any{"traceId": id})
	return out, nil
}
