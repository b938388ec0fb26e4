package op_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/praxa/praxa/contracts"
	"github.com/praxa/praxa/gateway/auth"
	"github.com/praxa/praxa/gateway/op"
	"github.com/praxa/praxa/gateway/redact"
	"github.com/praxa/praxa/gateway/store"
)

// TestAsError: contract errors pass, the store's sentinels keep their
// meaning, anything else is internal with its cause kept for the log.
func TestAsError(t *testing.T) {
	own := contracts.Errorf(contracts.CodeVersionConflict, "mine")
	cause := errors.New("disk on fire")
	for _, tt := range []struct {
		name string
		err  error
		want contracts.Code
	}{
		{"Contract", fmt.Errorf("wrapped: %w", own), contracts.CodeVersionConflict},
		{"NotFound", fmt.Errorf("get: %w", store.ErrNotFound), contracts.CodeNotFound},
		{"Closed", store.ErrClosed, contracts.CodeUnavailable},
		{"Deadline", context.DeadlineExceeded, contracts.CodeUnavailable},
		{"Other", cause, contracts.CodeInternal},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got := op.AsError(tt.err)
			if got.Code != tt.want {
				t.Fatalf("AsError(%v).Code = %s, want %s", tt.err, got.Code, tt.want)
			}
			if tt.want == contracts.CodeInternal && (got.Message != "internal error" || !errors.Is(got.Cause, cause)) {
				t.Errorf("internal: %+v", got)
			}
		})
	}
	if got := op.AsError(own); got != own {
		t.Errorf("AsError(contract error) = %p, want the same error %p", got, own)
	}
}

// TestRequireScope: a granted scope passes; a missing one is refused with
// the scope named as a field and the authorization link.
func TestRequireScope(t *testing.T) {
	p := &auth.Principal{Scopes: auth.NewScopeSet(contracts.ScopeTracesRead)}
	if err := op.RequireScope(p, contracts.ScopeTracesRead); err != nil {
		t.Errorf("granted scope refused: %v", err)
	}
	err := op.RequireScope(p, contracts.ScopeCoverageWrite)
	if err == nil || err.Code != contracts.CodeInsufficientScope {
		t.Fatalf("RequireScope(missing) = %v", err)
	}
	if len(err.Fields) != 1 || err.Fields[0].Detail != string(contracts.ScopeCoverageWrite) {
		t.Errorf("fields = %+v", err.Fields)
	}
	if len(err.Links) != 1 || err.Links[0].Method != "GET "+op.ResourceMetadataPath {
		t.Errorf("links = %+v", err.Links)
	}
}

// TestRequestEvent: an event names the principal, tool, request and both
// traces; an operating-system operator's uid is recorded without touching
// the attributes the caller passed.
func TestRequestEvent(t *testing.T) {
	at := time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC)
	tool, _ := contracts.Lookup(contracts.ToolGetTrace)
	attrs := map[string]any{"traceId": "t"}
	r := &op.Request{Principal: &auth.Principal{Tenant: "acme", Subject: "os:root", ClientID: "cli", LocalUID: "0"}, Tool: tool,
		RequestID: "req", TraceID: "trace", CallTraceID: "theirs", Now: at}
	r.Event("trace.read", attrs)
	if len(r.Events) != 1 {
		t.Fatalf("events = %+v", r.Events)
	}
	ev := r.Events[0]
	want := store.Event{Type: "trace.read", At: at, Operation: tool.OperationID, Tool: tool.Name, Outcome: "allowed", RequestID: "req",
		TraceID: "trace", CallTraceID: "theirs", Tenant: "acme", Subject: "os:root", ClientID: "cli"}
	gotAttrs := ev.Attributes
	ev.Attributes = nil
	if fmt.Sprint(ev) != fmt.Sprint(want) {
		t.Errorf("event = %+v\nwant    %+v", ev, want)
	}
	if gotAttrs["uid"] != "0" || gotAttrs["traceId"] != "t" {
		t.Errorf("attributes = %v", gotAttrs)
	}
	if _, touched := attrs["uid"]; touched {
		t.Errorf("the caller's attributes were changed: %v", attrs)
	}
}

// TestArgs: the accessors read what a schema-checked call holds and
// ignore what it does not.
func TestArgs(t *testing.T) {
	args := map[string]any{"s": "x", "n": json.Number("42"), "f": float64(7), "list": []any{"a", 1, "b"}, "bad": 3}
	if got := op.StringArg(args, "s"); got != "x" {
		t.Errorf("StringArg = %q", got)
	}
	if got := op.StringArg(args, "bad"); got != "" {
		t.Errorf("StringArg(not a string) = %q", got)
	}
	if got := op.Int64Arg(args, "n") + op.Int64Arg(args, "f") + op.Int64Arg(args, "missing"); got != 49 {
		t.Errorf("Int64Arg sum = %d, want 49", got)
	}
	if got := op.StringsArg(args, "list"); !slices.Equal(got, []string{"a", "b"}) {
		t.Errorf("StringsArg = %v", got)
	}
	if got := op.StringsArg(args, "missing"); got == nil || len(got) != 0 {
		t.Errorf("StringsArg(missing) = %#v, want empty", got)
	}
}

// TestTraceEventOf: the shown event is in UTC and redacted.
func TestTraceEventOf(t *testing.T) {
	at := time.Date(2026, 6, 1, 14, 0, 0, 5, time.FixedZone("x", 2*3600))
	got := op.TraceEventOf(store.Event{Seq: 3, Type: "t", At: at, Outcome: "allowed", Attributes: map[string]any{"password": "p", "n": 1}})
	if got.At != "2026-06-01T12:00:00.000000005Z" || got.Seq != 3 {
		t.Errorf("TraceEventOf = %+v", got)
	}
	if got.Attributes["password"] != redact.Redacted || got.Attributes["n"] != 1 {
		t.Errorf("attributes = %v", got.Attributes)
	}
}

// TestMarshal: answers are encoded without HTML escaping and without a
// trailing newline; raw JSON passes as it is.
func TestMarshal(t *testing.T) {
	b, err := op.Marshal(map[string]string{"a": "<b>&"})
	if err != nil || string(b) != `{"a":"<b>&"}` {
		t.Errorf("Marshal = %s, %v", b, err)
	}
	raw := json.RawMessage(`{"x" : 1}`)
	if b, _ := op.Marshal(raw); string(b) != string(raw) {
		t.Errorf("Marshal(raw) = %s", b)
	}
}
