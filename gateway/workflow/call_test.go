package workflow

import (
	"context"
	"errors"
	"testing"

	"github.com/praxa/praxa/contracts"
	"github.com/praxa/praxa/gateway/config"
)

// runnerFunc is a Runner made of a function.
type runnerFunc func(ctx context.Context, x config.Executor, s Scope) (map[string]any, error)

func (f runnerFunc) Run(ctx context.Context, x config.Executor, s Scope) (map[string]any, error) {
	return f(ctx, x, s)
}

func proxyRegistry(t testing.TB, caps []config.ExposedCapability) (*Registry, *Definition) {
	t.Helper()
	r, err := Compile(map[string]config.Workflow{"plain": {Version: 1, Initial: "a",
		States:      map[string]config.State{"a": {}, "b": {Terminal: true}},
		Transitions: []config.Transition{{Name: "go", From: config.StringList{"a"}, To: "b"}}}})
	if err != nil {
		t.Fatal(err)
	}
	if err := r.AddProxy(caps); err != nil {
		t.Fatal(err)
	}
	d, _ := r.Lookup(config.ProxyDefaultWorkflow)
	return r, d
}

// TestStandalone: only a capability without guard, evidence, approval or
// sub-workflow can be called without a run.
func TestStandalone(t *testing.T) {
	mcpx := &config.Executor{Kind: config.ExecutorMCP, Connection: "up", Tool: "echo"}
	caps := []config.ExposedCapability{
		{ID: "plain.noop"},
		{ID: "plain.mcp", Executor: mcpx},
		{ID: "guarded", Executor: mcpx, Guards: []config.Guard{{Kind: "evidence", Requires: []string{"e"}}}},
		{ID: "producer", Executor: mcpx, Produces: []string{"e"}},
		{ID: "approved", Executor: &config.Executor{Kind: config.ExecutorHuman}},
		{ID: "child", Executor: &config.Executor{Kind: config.ExecutorWorkflow, DefinitionID: "plain"}},
	}
	r, d := proxyRegistry(t, caps)
	plain, _ := r.Lookup("plain")
	for _, c := range []struct {
		d    *Definition
		name string
		want bool
	}{
		{d, "plain.noop", true}, {d, "plain.mcp", true},
		{d, "guarded", false}, {d, "producer", false}, {d, "approved", false}, {d, "child", false},
		{d, "missing", false}, {plain, "go", false}, {nil, "plain.noop", false},
	} {
		if got := c.d.Standalone(c.name); got != c.want {
			t.Errorf("Standalone(%s) = %v, want %v", c.name, got, c.want)
		}
	}
}

// TestCallStandalone: the arguments are checked against the capability's
// schema before anything is sent; the runner sees the run's scope (the
// arguments, and the input with capability beside them); a failed
// upstream call is a result, an unavailable or unknown one an error
// without links.
func TestCallStandalone(t *testing.T) {
	schema := map[string]any{"type": "object", "required": []any{"text"}, "properties": map[string]any{"text": map[string]any{"type": "string"}}}
	caps := []config.ExposedCapability{{ID: "up.echo", InputSchema: schema, Executor: &config.Executor{Kind: config.ExecutorMCP, Connection: "up", Tool: "echo"}}}
	_, d := proxyRegistry(t, caps)
	var answer error
	var seen Scope
	calls := 0
	e := &Engine{Runners: map[config.Kind]Runner{config.ExecutorMCP: runnerFunc(func(ctx context.Context, x config.Executor, s Scope) (map[string]any, error) {
		calls++
		seen = s
		if answer != nil {
			return map[string]any{"text": "upstream says no"}, answer
		}
		return map[string]any{"text": "echo"}, nil
	})}}

	if _, err := d.CheckArguments("up.echo", map[string]any{"text": 1}, "/input"); err == nil {
		t.Fatal("invalid arguments checked")
	} else if ce := contracts.AsError(err); ce.Code != contracts.CodeInvalidParams || len(ce.Fields) == 0 || ce.Fields[0].Pointer != "/input/text" {
		t.Errorf("invalid arguments: %+v", ce)
	}
	// Arguments that were not checked (against this definition) are
	// checked before anything is sent.
	if _, err := e.CallStandalone(context.Background(), d, "up.echo", CheckedArgs{args: map[string]any{"text": 1}}); err == nil || calls != 0 {
		t.Fatalf("unchecked invalid arguments: err %v after %d calls", err, calls)
	}
	check := func(args map[string]any) CheckedArgs {
		c, err := d.CheckArguments("up.echo", args, "/input")
		if err != nil {
			t.Fatal(err)
		}
		return c
	}

	call, err := e.CallStandalone(context.Background(), d, "up.echo", check(map[string]any{"text": "hi"}))
	if err != nil || !call.OK || call.Output["text"] != "echo" || calls != 1 {
		t.Fatalf("call: %+v, %v", call, err)
	}
	if seen.Arguments["text"] != "hi" || seen.Input["capability"] != "up.echo" || seen.Input["text"] != "hi" {
		t.Errorf("scope %+v", seen)
	}

	answer = &ExecutorError{Outcome: OutcomeFailed, Kind: "mcp", Connection: "up", Message: "refused", Output: map[string]any{"text": "upstream says no"}}
	call, err = e.CallStandalone(context.Background(), d, "up.echo", check(map[string]any{"text": "hi"}))
	if err != nil || call.OK || call.Error != "refused" || call.Output["text"] != "upstream says no" {
		t.Errorf("failed call: %+v, %v", call, err)
	}
	if r := call.Record(); r["ok"] != false || r["error"] != "refused" {
		t.Errorf("record %v", r)
	}

	for _, outcome := range []string{OutcomeUnknown, OutcomeUnavailable} {
		answer = &ExecutorError{Outcome: outcome, Kind: "mcp", Connection: "up", Message: "lost"}
		_, err = e.CallStandalone(context.Background(), d, "up.echo", check(map[string]any{"text": "hi"}))
		var ce *contracts.Error
		if !errors.As(err, &ce) || len(ce.Links) != 0 {
			t.Errorf("%s: %v", outcome, err)
		}
	}
	if _, err := e.CallStandalone(context.Background(), d, "missing", CheckedArgs{}); err == nil {
		t.Errorf("a capability that is not standalone was called")
	}
}
