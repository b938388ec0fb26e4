package workflow

import (
	"context"
	"reflect"
	"strings"
	"testing"

	"github.com/praxa/praxa/gateway/config"
	"github.com/praxa/praxa/gateway/redact"
)

// TestCapabilityEventsRecord: the events of a capability's calls name it
// and record what its audit block asks, in a run (transition.fired, and
// guard.rejected with the arguments only) and without one (Call.Recorded):
// each value at its path, redacted by name (a list of objects included),
// a value too large replaced by a note, a path naming nothing left out.
// Events of a configured workflow's transitions name no capability, and a
// capability without an audit block records nothing.
func TestCapabilityEventsRecord(t *testing.T) {
	mcpx := &config.Executor{Kind: config.ExecutorMCP, Connection: "up", Tool: "create"}
	record := config.CapabilityAudit{Record: []string{"$.arguments.title", "$.arguments.repo.owner", "$.arguments.headers",
		"$.arguments.body", "$.arguments.missing", "$.output.url", "$.output.number"}}
	caps := []config.ExposedCapability{
		{ID: "pr.create", Executor: mcpx, Audit: record},
		{ID: "pr.guarded", Executor: mcpx, Audit: record, Guards: []config.Guard{{Kind: "evidence", Requires: []string{"tests_passed"}}}},
		{ID: "pr.quiet", Executor: mcpx},
	}
	r, d := proxyRegistry(t, caps)
	e := &Engine{Registry: r, NewID: func(p string) string { return p + "_1" }, Runners: map[config.Kind]Runner{config.ExecutorMCP: runnerFunc(func(ctx context.Context, x config.Executor, s Scope) (map[string]any, error) {
		return map[string]any{"url": "https://git.example.com/pr/7", "number": 7, "token": "upstream-secret"}, nil
	})}}
	args := map[string]any{
		"title":   "Fix the build",
		"repo":    map[string]any{"owner": "acme", "name": "app"},
		"headers": []any{map[string]any{"name": "X-Trace", "authorization": "Bearer s3cret"}},
		"body":    strings.Repeat("x", config.MaxRecordedBytes+1),
		"other":   "not recorded",
	}
	wantArgs := map[string]any{
		"title":   "Fix the build",
		"repo":    map[string]any{"owner": "acme"},
		"headers": []any{map[string]any{"name": "X-Trace", "authorization": redact.Redacted}},
	}
	ctx := context.Background()

	out, err := e.Start(ctx, StartRequest{DefinitionID: config.ProxyDefaultWorkflow, Input: map[string]any{"capability": "pr.create"}, Arguments: args})
	if err != nil {
		t.Fatal(err)
	}
	fired := eventOf(t, out.Events, "transition.fired")
	if fired["capability"] != "pr.create" || fired["transition"] != "pr.create" {
		t.Errorf("transition.fired names no capability: %v", fired)
	}
	checkRecorded(t, "transition.fired", fired, wantArgs, map[string]any{"url": "https://git.example.com/pr/7", "number": 7})
	if args["headers"].([]any)[0].(map[string]any)["authorization"] != "Bearer s3cret" {
		t.Error("recording changed the call's arguments")
	}

	out, err = e.Start(ctx, StartRequest{DefinitionID: config.ProxyDefaultWorkflow, Input: map[string]any{"capability": "pr.guarded"}, Arguments: args})
	if err == nil {
		t.Fatal("the guarded capability ran without its evidence")
	}
	rejected := eventOf(t, out.Events, "guard.rejected")
	if rejected["capability"] != "pr.guarded" {
		t.Errorf("guard.rejected names no capability: %v", rejected)
	}
	checkRecorded(t, "guard.rejected", rejected, wantArgs, nil)

	out, err = e.Start(ctx, StartRequest{DefinitionID: config.ProxyDefaultWorkflow, Input: map[string]any{"capability": "pr.quiet"}, Arguments: args})
	if err != nil {
		t.Fatal(err)
	}
	if quiet := eventOf(t, out.Events, "transition.fired"); quiet["capability"] != "pr.quiet" || quiet["arguments"] != nil || quiet["output"] != nil {
		t.Errorf("a capability without an audit block: %v", quiet)
	}

	checked, err := d.CheckArguments("pr.create", args, "/input")
	if err != nil {
		t.Fatal(err)
	}
	call, err := e.CallStandalone(ctx, d, "pr.create", checked)
	if err != nil {
		t.Fatal(err)
	}
	checkRecorded(t, "Call.Recorded", call.Recorded, wantArgs, map[string]any{"url": "https://git.example.com/pr/7", "number": 7})

	plain, err := e.Start(ctx, StartRequest{DefinitionID: "plain"})
	if err != nil {
		t.Fatal(err)
	}
	out, err = e.Fire(ctx, plain.Instance, "go", nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, has := eventOf(t, out.Events, "transition.fired")["capability"]; has {
		t.Error("a configured workflow's transition names a capability")
	}
}

// eventOf returns the attributes of the event of type typ.
func eventOf(t *testing.T, events []Event, typ string) map[string]any {
	t.Helper()
	for _, ev := range events {
		if ev.Type == typ {
			return ev.Attributes
		}
	}
	t.Fatalf("no %s among %+v", typ, events)
	return nil
}

// checkRecorded checks the arguments and output attributes attrs record
// (output nil: none), and that the large body is a note of its size.
func checkRecorded(t *testing.T, what string, attrs, wantArgs, wantOutput map[string]any) {
	t.Helper()
	got, _ := attrs["arguments"].(map[string]any)
	body, _ := got["body"].(string)
	if !strings.HasPrefix(body, "[omitted: ") {
		t.Errorf("%s: the large body is recorded as %.40q", what, body)
	}
	rest := map[string]any{}
	for k, v := range got {
		if k != "body" {
			rest[k] = v
		}
	}
	if !reflect.DeepEqual(rest, wantArgs) {
		t.Errorf("%s: arguments recorded %v, want %v", what, rest, wantArgs)
	}
	if o, _ := attrs["output"].(map[string]any); !reflect.DeepEqual(o, wantOutput) && (o != nil || wantOutput != nil) {
		t.Errorf("%s: output recorded %v, want %v", what, attrs["output"], wantOutput)
	}
}
