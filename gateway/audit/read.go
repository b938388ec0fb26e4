package audit

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/praxa/praxa/contracts"
	"github.com/praxa/praxa/gateway/auth"
	"github.com/praxa/praxa/gateway/op"
	"github.com/praxa/praxa/gateway/store"
)

// This file reads the audit trail back: the console's audit page.

// Event is one audit event as the console shows it: as a trace shows it
// (op.TraceEventOf: redacted), with the trace it belongs to.
type Event struct {
	op.TraceEvent
	TraceID string `json:"traceId"`
}

// Query narrows Events; each member set must match.
type Query struct {
	// Subject is the principal's subject; Capability a capability or
	// tool (the event's tool, or its capability attribute); Outcome
	// allowed, refused, replayed or failed.
	Subject, Capability, Outcome string
	// Since and Until bound the events' time: Since <= at < Until; a
	// zero time does not bound.
	Since, Until time.Time
	// Before pages back: the events appended before the event of this
	// seq (Page.Older); 0 starts at the newest.
	Before int64
}

// Page is one page of the tenant's audit trail, newest first.
type Page struct {
	// Events are redacted as aura_get_trace shows them, with their trace.
	Events []Event `json:"events"`
	// Older is the Before of the next page back; 0 when this page ends
	// the trail.
	Older int64 `json:"older,omitempty"`
}

// maxPage bounds one page of Events; maxAuditFilter one filter
// value.
const (
	maxPage        = 200
	maxAuditFilter = 256
)

// auditOutcomes are the outcomes an audit event records.
var auditOutcomes = []string{"allowed", "refused", "replayed", "failed"}

// Events lists the tenant's audit events matching q, newest first,
// at most limit (50 when out of 1..200), each redacted as aura_get_trace
// shows it (op.TraceEventOf, package redact): the console's audit page. It
// needs traces:read, the scope a trace is read with, and answers only the
// principal's tenant's events. The read is itself audited (audit.read,
// with the filter), under requestID and traceID.
func (a *Auditor) Events(ctx context.Context, p *auth.Principal, q Query, limit int, requestID, traceID string) (Page, error) {
	if err := op.RequireScope(p, contracts.ScopeTracesRead); err != nil {
		return Page{}, err
	}
	var bad []contracts.FieldError
	for name, v := range map[string]string{"subject": q.Subject, "capability": q.Capability} {
		if len(v) > maxAuditFilter {
			bad = append(bad, contracts.FieldError{Pointer: "/" + name, Detail: fmt.Sprintf("at most %d bytes", maxAuditFilter)})
		}
	}
	if q.Outcome != "" && !slices.Contains(auditOutcomes, q.Outcome) {
		bad = append(bad, contracts.FieldError{Pointer: "/outcome", Detail: "one of " + strings.Join(auditOutcomes, ", ")})
	}
	if !q.Since.IsZero() && !q.Until.IsZero() && !q.Since.Before(q.Until) {
		bad = append(bad, contracts.FieldError{Pointer: "/until", Detail: "after since"})
	}
	if q.Before < 0 {
		bad = append(bad, contracts.FieldError{Pointer: "/before", Detail: "a positive event sequence number"})
	}
	if len(bad) > 0 {
		slices.SortFunc(bad, func(x, y contracts.FieldError) int { return strings.Compare(x.Pointer, y.Pointer) })
		return Page{}, &contracts.Error{Code: contracts.CodeInvalidParams, Message: "the audit filter is not valid", Fields: bad}
	}
	if limit <= 0 || limit > maxPage {
		limit = 50
	}
	f := store.EventFilter{Tenant: p.Tenant, Subject: q.Subject, Capability: q.Capability, Outcome: q.Outcome,
		Since: q.Since, Until: q.Until, BeforeSeq: q.Before, Newest: true}
	out := Page{Events: []Event{}}
	err := a.store.View(ctx, func(ctx context.Context, tx store.ReadTx) error {
		// One more than the page tells whether an older page exists.
		events, err := tx.ExportEvents(ctx, f, limit+1)
		if len(events) > limit {
			events = events[:limit]
			out.Older = events[limit-1].Seq
		}
		for _, ev := range events {
			out.Events = append(out.Events, Event{TraceEvent: op.TraceEventOf(ev), TraceID: ev.TraceID})
		}
		return err
	})
	if err != nil {
		return Page{}, op.AsError(err)
	}
	attrs := map[string]any{"events": len(out.Events)}
	for k, v := range map[string]string{"subject": q.Subject, "capability": q.Capability, "outcome": q.Outcome} {
		if v != "" {
			attrs[k] = v
		}
	}
	if !q.Since.IsZero() {
		attrs["since"] = q.Since.UTC().Format(time.RFC3339Nano)
	}
	if !q.Until.IsZero() {
		attrs["until"] = q.Until.UTC().Format(time.RFC3339Nano)
	}
	a.Record(op.EventSpec{Actor: op.Actor{Principal: p}, Type: EventRead, Outcome: "allowed", RequestID: requestID, TraceID: traceID,
		At: a.now(), Attributes: attrs}.Build())
	return out, nil
}

// EventRead is the audit event of a read of the audit trail (Events).
const EventRead = "audit.read"
