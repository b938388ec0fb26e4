package op_test

import (
	"reflect"
	"testing"
	"time"

	"github.com/praxa/praxa/contracts"
	"github.com/praxa/praxa/gateway/auth"
	"github.com/praxa/praxa/gateway/op"
	"github.com/praxa/praxa/gateway/store"
)

// TestEventSpecBuild pins the audit events the gateway writes, field by
// field, for a caller's call, an operator's command run without a token
// (its uid attribute), a caller's event under a job name, the gateway's
// own jobs (the events EventFor and the fake tools wrote), the gateway
// itself, the operator at the command line and with a token, an event
// placed in another tenant and one placed in a run.
func TestEventSpecBuild(t *testing.T) {
	at := time.Date(2026, 12, 7, 13, 0, 0, 0, time.UTC)
	alice := &auth.Principal{Tenant: "acme", Subject: "alice", ClientID: "cli-1"}
	root := &auth.Principal{Tenant: "acme", Subject: "root", LocalUID: "0"}
	attrs := map[string]any{"workflowId": "wf-1"}
	for _, tt := range []struct {
		name string
		spec op.EventSpec
		want store.Event
	}{
		{"Caller", op.EventSpec{Actor: op.Caller(alice, contracts.Tool{Name: "praxec.command", OperationID: "praxecCommand", SuccessStatus: 200}),
			Type: "request.refused", Outcome: "refused", Code: "FORBIDDEN", RequestID: "req-1", TraceID: "tr-1", CallTraceID: "tr-0", At: at},
			store.Event{Tenant: "acme", Subject: "alice", ClientID: "cli-1", Tool: "praxec.command", Operation: "praxecCommand",
				Type: "request.refused", Outcome: "refused", Code: "FORBIDDEN", RequestID: "req-1", TraceID: "tr-1", CallTraceID: "tr-0", At: at}},
		{"LocalOperator", op.EventSpec{Actor: op.Actor{Principal: root, Tool: "praxa lexicon", Operation: "define"},
			Type: "lexicon.defined", Outcome: "allowed", TraceID: "tr-2", At: at, Attributes: attrs},
			store.Event{Tenant: "acme", Subject: "root", Tool: "praxa lexicon", Operation: "define",
				Type: "lexicon.defined", Outcome: "allowed", TraceID: "tr-2", At: at, Attributes: map[string]any{"workflowId": "wf-1", "uid": "0"}}},
		{"CallerAsJob", op.EventSpec{Actor: op.Actor{Principal: alice, Tool: "coverage", Operation: contracts.OperationRecordCoverageRun},
			Type: "coverage.recorded", Outcome: "allowed", RequestID: "req-3", TraceID: "tr-3", At: at, Attributes: attrs},
			store.Event{Tenant: "acme", Subject: "alice", ClientID: "cli-1", Tool: "coverage", Operation: contracts.OperationRecordCoverageRun,
				Type: "coverage.recorded", Outcome: "allowed", RequestID: "req-3", TraceID: "tr-3", At: at, Attributes: attrs}},
		{"LeaseSweeper", op.EventSpec{Actor: op.SystemActor("acme", "lease-sweeper", "sweepLeases"),
			Type: "move.outcome_unknown", Outcome: "failed", Code: "OUTCOME_UNKNOWN", At: at, Attributes: attrs},
			store.Event{Tenant: "acme", Subject: "lease-sweeper", Tool: "lease-sweeper", Operation: "sweepLeases",
				Type: "move.outcome_unknown", Outcome: "failed", Code: "OUTCOME_UNKNOWN", At: at, Attributes: attrs}},
		{"RunSweeper", op.EventSpec{Actor: op.SystemActor("beta", "run-sweeper", "expireRuns"),
			Type: "run.expired", Outcome: "allowed", TraceID: "tr-4", At: at},
			store.Event{Tenant: "beta", Subject: "run-sweeper", Tool: "run-sweeper", Operation: "expireRuns",
				Type: "run.expired", Outcome: "allowed", TraceID: "tr-4", At: at}},
		{"NoPrincipal", op.EventSpec{Actor: op.Actor{Tool: "t", Operation: "o"}, Type: "x", Outcome: "allowed", At: at},
			store.Event{Tool: "t", Operation: "o", Type: "x", Outcome: "allowed", At: at}},
		{"Gateway", op.EventSpec{Actor: op.Gateway("crm.search", ""), Type: "capability.pin_mismatch", Outcome: "refused",
			Code: "CAPABILITY_QUARANTINED", TraceID: "tr-5", At: at, Attributes: attrs},
			store.Event{Subject: "gateway", Tool: "crm.search", Type: "capability.pin_mismatch", Outcome: "refused",
				Code: "CAPABILITY_QUARANTINED", TraceID: "tr-5", At: at, Attributes: attrs}},
		{"OperatorCommandLine", op.EventSpec{Actor: op.Operator(nil, "", "revokeToken"), Type: "token.revoked", Outcome: "allowed",
			RequestID: "req-6", At: at, Attributes: attrs},
			store.Event{Subject: "operator", Operation: "revokeToken", Type: "token.revoked", Outcome: "allowed",
				RequestID: "req-6", At: at, Attributes: attrs}},
		{"OperatorWithToken", op.EventSpec{Actor: op.Operator(alice, "crm.search", "acceptCapability"), Type: "capability.pin_accepted",
			Outcome: "allowed", At: at},
			store.Event{Tenant: "acme", Subject: "alice", ClientID: "cli-1", Tool: "crm.search", Operation: "acceptCapability",
				Type: "capability.pin_accepted", Outcome: "allowed", At: at}},
		{"OperatorLocalAccount", op.EventSpec{Actor: op.Operator(root, "", ""), Type: "certificates.imported", Outcome: "allowed", At: at},
			store.Event{Tenant: "acme", Subject: "root", Type: "certificates.imported", Outcome: "allowed", At: at,
				Attributes: map[string]any{"uid": "0"}}},
		{"OperatorIntoTenant", op.EventSpec{Actor: op.Operator(nil, "", ""), Tenant: "beta", Type: "memory.imported", Outcome: "allowed", At: at},
			store.Event{Tenant: "beta", Subject: "operator", Type: "memory.imported", Outcome: "allowed", At: at}},
		{"OperatorWithTokenIntoTenant", op.EventSpec{Actor: op.Operator(alice, "", ""), Tenant: "beta", Type: "goals.imported",
			Outcome: "allowed", At: at},
			store.Event{Tenant: "beta", Subject: "alice", ClientID: "cli-1", Type: "goals.imported", Outcome: "allowed", At: at}},
		{"SubjectOfASignal", op.EventSpec{Actor: op.Actor{Subject: "signal", Operation: "reloadConfig"}, Type: "config.reloaded",
			Outcome: "allowed", At: at},
			store.Event{Subject: "signal", Operation: "reloadConfig", Type: "config.reloaded", Outcome: "allowed", At: at}},
		{"PrincipalBeforeSubject", op.EventSpec{Actor: op.Actor{Principal: alice, Subject: "endpoint", Operation: "reloadConfig"},
			Type: "config.reloaded", Outcome: "allowed", At: at},
			store.Event{Tenant: "acme", Subject: "alice", ClientID: "cli-1", Operation: "reloadConfig", Type: "config.reloaded",
				Outcome: "allowed", At: at}},
		{"Run", op.EventSpec{Actor: op.Caller(alice, contracts.Tool{Name: "praxec.command", OperationID: "praxecCommand"}),
			Type: "approval.refused", Outcome: "refused", Code: "FORBIDDEN", WorkflowID: "wf-1", RunID: "run-1", At: at},
			store.Event{Tenant: "acme", Subject: "alice", ClientID: "cli-1", Tool: "praxec.command", Operation: "praxecCommand",
				Type: "approval.refused", Outcome: "refused", Code: "FORBIDDEN", WorkflowID: "wf-1", RunID: "run-1", At: at}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.spec.Build(); !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("Build() =\n%+v\nwant\n%+v", got, tt.want)
			}
		})
	}
	if len(attrs) != 1 {
		t.Fatalf("Build changed the spec's attributes: %v", attrs)
	}
}

// TestActorRequest: a job's request carries its actor, no arguments (not
// nil) and the clock, and the events it records name the job as the
// events of a caller's request name the caller.
func TestActorRequest(t *testing.T) {
	at := time.Date(2026, 12, 7, 13, 0, 0, 0, time.UTC)
	r := op.SystemActor("acme", "wait-resume", "resumeWait").Request(at)
	r.TraceID, r.CallTraceID = "tr-1", "tr-0"
	if r.Args == nil || len(r.Args) != 0 || !r.Now.Equal(at) || r.Tool.Name != "wait-resume" || r.Tool.OperationID != "resumeWait" {
		t.Fatalf("Request = %+v", r)
	}
	r.Event("mission.resumed", map[string]any{"n": 1})
	want := store.Event{Tenant: "acme", Subject: "wait-resume", Tool: "wait-resume", Operation: "resumeWait", Type: "mission.resumed",
		Outcome: "allowed", TraceID: "tr-1", CallTraceID: "tr-0", At: at, Attributes: map[string]any{"n": 1}}
	if len(r.Events) != 1 || !reflect.DeepEqual(r.Events[0], want) {
		t.Fatalf("Events = %+v, want [%+v]", r.Events, want)
	}
	if a := r.Actor(); a.Tool != "wait-resume" || a.Operation != "resumeWait" || a.Principal.Subject != "wait-resume" {
		t.Fatalf("Actor() = %+v", a)
	}
}

// TestRequestEventOf: an event of a call takes from the call what its
// spec leaves empty (actor, request id, traces, time) and keeps what the
// spec sets.
func TestRequestEventOf(t *testing.T) {
	at := time.Date(2026, 12, 7, 13, 0, 0, 0, time.UTC)
	later := at.Add(time.Minute)
	tool := contracts.Tool{Name: "praxec.command", OperationID: "praxecCommand"}
	alice := &auth.Principal{Tenant: "acme", Subject: "alice", ClientID: "cli-1"}
	r := &op.Request{Principal: alice, Tool: tool, RequestID: "req-1", TraceID: "tr-1", CallTraceID: "tr-0", Now: at}
	call := store.Event{Tenant: "acme", Subject: "alice", ClientID: "cli-1", Tool: "praxec.command", Operation: "praxecCommand",
		RequestID: "req-1", TraceID: "tr-1", CallTraceID: "tr-0", At: at}
	with := func(f func(*store.Event)) store.Event { e := call; f(&e); return e }
	for _, tt := range []struct {
		name string
		spec op.EventSpec
		want store.Event
	}{
		{"Refused", op.EventSpec{Type: "request.refused", Outcome: "refused", Code: "NOT_FOUND"},
			with(func(e *store.Event) { e.Type, e.Outcome, e.Code = "request.refused", "refused", "NOT_FOUND" })},
		{"Replayed", op.EventSpec{Type: "request.replayed", Outcome: "replayed"},
			with(func(e *store.Event) { e.Type, e.Outcome = "request.replayed", "replayed" })},
		{"LaterInAnotherTenant", op.EventSpec{Type: "start.outcome_unknown", Outcome: "failed", Code: "OUTCOME_UNKNOWN", Tenant: "beta", At: later,
			Attributes: map[string]any{"definitionId": "d"}},
			with(func(e *store.Event) {
				e.Type, e.Outcome, e.Code, e.Tenant, e.At = "start.outcome_unknown", "failed", "OUTCOME_UNKNOWN", "beta", later
				e.Attributes = map[string]any{"definitionId": "d"}
			})},
		{"InARun", op.EventSpec{Type: "transition.fired", Outcome: "allowed", WorkflowID: "wf-1", RunID: "run-1"},
			with(func(e *store.Event) {
				e.Type, e.Outcome, e.WorkflowID, e.RunID = "transition.fired", "allowed", "wf-1", "run-1"
			})},
		{"OwnIDs", op.EventSpec{Actor: op.Gateway("cap", ""), Type: "x", Outcome: "allowed", RequestID: "req-2", TraceID: "tr-2", CallTraceID: "tr-3"},
			store.Event{Subject: "gateway", Tool: "cap", Type: "x", Outcome: "allowed", RequestID: "req-2", TraceID: "tr-2", CallTraceID: "tr-3", At: at}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := r.EventOf(tt.spec); !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("EventOf() =\n%+v\nwant\n%+v", got, tt.want)
			}
		})
	}
	if len(r.Events) != 0 {
		t.Fatalf("EventOf recorded events: %+v", r.Events)
	}
}
