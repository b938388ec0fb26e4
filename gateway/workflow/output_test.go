package workflow

import (
	"context"
	"strings"
	"testing"

	"github.com/praxa/praxa/gateway/config"
)

// outputCaps are a capability whose output schema asks for a string text
// and produces evidence, and the same without evidence (standalone).
func outputCaps() []config.ExposedCapability {
	schema := map[string]any{"type": "object", "required": []any{"text"},
		"properties": map[string]any{"text": map[string]any{"type": "string"}}}
	x := &config.Executor{Kind: config.ExecutorMCP, Connection: "up", Tool: "read"}
	return []config.ExposedCapability{
		{ID: "notes.read", OutputSchema: schema, Executor: x, Produces: []string{"read"}},
		{ID: "notes.peek", OutputSchema: schema, Executor: x},
		{ID: "notes.free", Executor: x},
	}
}

// TestOutputSchema: a successful output that satisfies the capability's
// outputSchema is the move's result; one that does not fails the move
// (ok false, the error naming the first violation's pointer, the output
// withheld, no evidence), in a run and on the light path; a capability
// without one takes any output.
func TestOutputSchema(t *testing.T) {
	r, d := proxyRegistry(t, outputCaps())
	var answer map[string]any
	e := &Engine{Registry: r, NewID: func(p string) string { return p + "_1" },
		Runners: map[config.Kind]Runner{config.ExecutorMCP: runnerFunc(func(context.Context, config.Executor, Scope) (map[string]any, error) {
			return answer, nil
		})}}
	ctx := context.Background()
	start := func(capability string) (map[string]any, []string) {
		t.Helper()
		out, err := e.Start(ctx, StartRequest{DefinitionID: config.ProxyDefaultWorkflow, Input: map[string]any{"capability": capability}})
		if err != nil {
			t.Fatal(err)
		}
		return out.Instance.Context[LastRunKey].(map[string]any), out.Instance.Evidence
	}
	standalone := func(capability string) *Call {
		t.Helper()
		checked, err := d.CheckArguments(capability, nil, "/input")
		if err != nil {
			t.Fatal(err)
		}
		call, err := e.CallStandalone(ctx, d, capability, checked)
		if err != nil {
			t.Fatal(err)
		}
		return call
	}

	answer = map[string]any{"text": "hello", "extra": []any{1, true}}
	if last, ev := start("notes.read"); last["ok"] != true || last["output"].(map[string]any)["text"] != "hello" || len(ev) != 1 {
		t.Errorf("a satisfying output: %v, evidence %v", last, ev)
	}
	if call := standalone("notes.peek"); !call.OK || call.Output["text"] != "hello" {
		t.Errorf("a satisfying output on the light path: %+v", call)
	}

	for _, bad := range []struct {
		answer map[string]any
		where  string
	}{
		{map[string]any{"text": 42, "secret": "s3cr3t"}, "at /text (must be of type string)"},
		{map[string]any{"secret": "s3cr3t"}, "at /text (is required)"},
		{nil, "at /text (is required)"},
	} {
		answer = bad.answer
		last, ev := start("notes.read")
		msg, _ := last["error"].(string)
		if last["ok"] != false || len(ev) != 0 || len(last["output"].(map[string]any)) != 0 ||
			!strings.Contains(msg, "the output of notes.read does not satisfy its outputSchema "+bad.where) || strings.Contains(msg, "s3cr3t") {
			t.Errorf("%v in a run: lastRun %v, evidence %v", bad.answer, last, ev)
		}
		call := standalone("notes.peek")
		if call.OK || len(call.Output) != 0 || !strings.Contains(call.Error, "does not satisfy its outputSchema "+bad.where) {
			t.Errorf("%v on the light path: %+v", bad.answer, call)
		}
	}

	// A value of a Go type JSON does not decode to is read as its JSON.
	answer = map[string]any{"text": "typed", "lines": []string{"a", "b"}}
	if call := standalone("notes.peek"); !call.OK {
		t.Errorf("an output holding []string: %+v", call)
	}
	answer = map[string]any{"anything": 1}
	if call := standalone("notes.free"); !call.OK {
		t.Errorf("no output schema: %+v", call)
	}
}

// TestOutputSchemaCompiledOnce: AddProxy compiles the output schema; one
// that does not compile fails it.
func TestOutputSchemaCompiledOnce(t *testing.T) {
	_, d := proxyRegistry(t, outputCaps())
	if tr, _ := d.Transition("notes.read"); tr.output == nil {
		t.Fatal("the output schema was not compiled")
	}
	if tr, _ := d.Transition("notes.free"); tr.output != nil {
		t.Fatal("a capability without an output schema has one")
	}
	r := &Registry{}
	caps := []config.ExposedCapability{{ID: "bad", OutputSchema: map[string]any{"type": "strin"}}}
	if err := r.AddProxy(caps); err == nil || !strings.Contains(err.Error(), "bad.output") {
		t.Errorf("AddProxy with a broken output schema: %v", err)
	}
}

// TestOutputSchemaAfterWait: a capability whose sub-workflow parks is held
// to its output schema when the child ends and the move completes.
func TestOutputSchemaAfterWait(t *testing.T) {
	r, err := Compile(map[string]config.Workflow{"review": {Version: 1, Initial: "open",
		States:      map[string]config.State{"open": {}, "done": {Terminal: true}},
		Transitions: []config.Transition{{Name: "approve", From: config.StringList{"open"}, To: "done", Set: map[string]any{"verdict": "$.arguments.verdict"}}}}})
	if err != nil {
		t.Fatal(err)
	}
	schema := map[string]any{"type": "object", "required": []any{"verdict"}, "properties": map[string]any{"verdict": map[string]any{"type": "string"}}}
	if err := r.AddProxy([]config.ExposedCapability{{ID: "ask.review", OutputSchema: schema, Produces: []string{"reviewed"},
		Executor: &config.Executor{Kind: config.ExecutorWorkflow, DefinitionID: "review"}}}); err != nil {
		t.Fatal(err)
	}
	n := 0
	e := &Engine{Registry: r, NewID: func(p string) string { n++; return p + "_" + string(rune('a'+n)) }}
	ctx := context.Background()
	for _, c := range []struct {
		verdict any
		ok      bool
	}{{42, false}, {"lgtm", true}} {
		start, err := e.Start(ctx, StartRequest{DefinitionID: config.ProxyDefaultWorkflow, Input: map[string]any{"capability": "ask.review"}})
		if err != nil || start.Parked == nil || len(start.Children) != 1 {
			t.Fatalf("start: %+v %v", start, err)
		}
		moved, err := e.Fire(ctx, start.Children[0], "approve", map[string]any{"verdict": c.verdict})
		if err != nil {
			t.Fatal(err)
		}
		res, err := e.Resume(ctx, start.Instance, moved.Instance)
		if err != nil {
			t.Fatal(err)
		}
		last := res.Instance.Context[LastRunKey].(map[string]any)
		if last["ok"] != c.ok || (len(res.Instance.Evidence) == 1) != c.ok {
			t.Errorf("verdict %v: lastRun %v, evidence %v", c.verdict, last, res.Instance.Evidence)
		}
		if msg, _ := last["error"].(string); !c.ok && !strings.Contains(msg, "at /verdict (must be of type string)") {
			t.Errorf("verdict %v: error %q", c.verdict, msg)
		}
	}
}
