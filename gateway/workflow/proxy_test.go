package workflow_test

import (
	"context"
	"errors"
	"slices"
	"testing"

	"github.com/praxa/praxa/contracts"
	"github.com/praxa/praxa/gateway/config"
	"github.com/praxa/praxa/gateway/workflow"
)

// fakeRunner answers from a function.
type fakeRunner func(x config.Executor, s workflow.Scope) (map[string]any, error)

func (f fakeRunner) Run(_ context.Context, x config.Executor, s workflow.Scope) (map[string]any, error) {
	return f(x, s)
}

func TestResolveJSONPath(t *testing.T) {
	s := workflow.Scope{Arguments: map[string]any{"items": []any{map[string]any{"id": "a"}, map[string]any{"id": "b"}}, "branch-name": "x", "a.b": 1},
		Context: map[string]any{"n": 2}}
	for path, want := range map[string]any{
		"$.arguments.items[0].id":          "a",
		"$.arguments.items[*].id":          []any{"a", "b"},
		"$.arguments.branch-name":          "x",
		"$.arguments['a.b']":               1,
		"$.context.n":                      2,
		"$.context.missing":                nil,
		"$.arguments.items[9].id":          nil,
		"$.arguments.items[?@.id=='b'].id": []any{"b"},
	} {
		got := workflow.Resolve(path, s)
		if l, ok := want.([]any); ok {
			if gl, _ := got.([]any); !slices.Equal(gl, l) {
				t.Errorf("%s = %v, want %v", path, got, want)
			}
			continue
		}
		if got != want {
			t.Errorf("%s = %v, want %v", path, got, want)
		}
	}
}

func proxyEngine(t *testing.T, r workflow.Runner) *workflow.Engine {
	t.Helper()
	reg, err := workflow.Compile(nil)
	if err != nil {
		t.Fatal(err)
	}
	caps := []config.ExposedCapability{
		{ID: "run_tests", Produces: []string{"tests_passed"}, Executor: &config.Executor{Kind: "cli", Connection: "sh"}},
		{ID: "safe.create_pr", Guards: []config.Guard{{Kind: "evidence", Requires: []string{"tests_passed"}}},
			InputSchema: map[string]any{"type": "object", "required": []any{"title"}}, Executor: &config.Executor{Kind: "mcp", Connection: "gh", Tool: "t"}},
	}
	if err := reg.AddProxy(caps); err != nil {
		t.Fatal(err)
	}
	n := 0
	return &workflow.Engine{Registry: reg, NewID: func(p string) string { n++; return p + "_" + string(rune('a'+n)) },
		Runners: map[config.Kind]workflow.Runner{config.ExecutorCLI: r, config.ExecutorMCP: r}}
}

func TestProxyRun(t *testing.T) {
	green := false
	calls := 0
	e := proxyEngine(t, fakeRunner(func(x config.Executor, s workflow.Scope) (map[string]any, error) {
		calls++
		if x.Kind == "cli" && !green {
			return nil, &workflow.ExecutorError{Outcome: workflow.OutcomeFailed, Kind: "cli", Connection: "sh", Message: "exit 1", Output: map[string]any{"exitCode": 1}}
		}
		return map[string]any{"ok": s.Arguments["title"]}, nil
	}))
	ctx := context.Background()
	// The guarded capability first: refused, with a start link to run_tests.
	_, err := e.Start(ctx, workflow.StartRequest{DefinitionID: config.ProxyDefaultWorkflow, Input: map[string]any{"capability": "safe.create_pr", "title": "T"}})
	var ce *contracts.Error
	if !errors.As(err, &ce) || ce.Code != contracts.CodeGuardRejected || len(ce.Links) == 0 || ce.Links[0].Rel != "run_tests" || calls != 0 {
		t.Fatalf("guarded first move: %v %+v", err, ce)
	}
	out, err := e.Start(ctx, workflow.StartRequest{DefinitionID: config.ProxyDefaultWorkflow, Input: map[string]any{"capability": "run_tests"}})
	if err != nil {
		t.Fatal(err)
	}
	in := out.Instance
	if in.Version != 2 || len(in.Evidence) != 0 || in.Context["lastRun"].(map[string]any)["ok"] != false {
		t.Fatalf("red run: %+v", in)
	}
	if _, err := e.Fire(ctx, in, "safe.create_pr", map[string]any{"title": "T"}); !errors.As(err, &ce) || ce.Code != contracts.CodeGuardRejected {
		t.Fatalf("guarded move after a red run: %v", err)
	}
	green = true
	out, err = e.Fire(ctx, in, "run_tests", nil)
	if err != nil || !slices.Equal(out.Instance.Evidence, []string{"tests_passed"}) {
		t.Fatalf("green run: %v %+v", err, out)
	}
	out, err = e.Fire(ctx, out.Instance, "safe.create_pr", map[string]any{"title": "T"})
	if err != nil || out.Instance.Context["lastRun"].(map[string]any)["output"].(map[string]any)["ok"] != "T" {
		t.Fatalf("guarded move after a green run: %v %+v", err, out)
	}
	if _, err := e.Fire(ctx, out.Instance, "safe.create_pr", map[string]any{}); !errors.As(err, &ce) || ce.Code != contracts.CodeInvalidParams {
		t.Fatalf("arguments against the capability's schema: %v", err)
	}
}

func TestTapeReplaysWithoutCalling(t *testing.T) {
	calls := 0
	e := proxyEngine(t, fakeRunner(func(config.Executor, workflow.Scope) (map[string]any, error) {
		calls++
		return map[string]any{"n": calls}, nil
	}))
	tape := workflow.NewRecorder(nil)
	req := workflow.StartRequest{DefinitionID: config.ProxyDefaultWorkflow, Input: map[string]any{"capability": "run_tests"}}
	if _, err := e.Start(workflow.WithTape(context.Background(), tape), req); err != nil {
		t.Fatal(err)
	}
	out, err := e.Start(workflow.WithTape(context.Background(), tape.Replay()), req)
	if err != nil || calls != 1 || out.Instance.Context["lastRun"].(map[string]any)["output"].(map[string]any)["n"] != 1 {
		t.Fatalf("replay: %v, %d calls", err, calls)
	}
	// An outcome-unknown call answers outcome-unknown.
	e = proxyEngine(t, fakeRunner(func(config.Executor, workflow.Scope) (map[string]any, error) {
		return nil, &workflow.ExecutorError{Outcome: workflow.OutcomeUnknown, Kind: "cli", Connection: "sh", Message: "timed out"}
	}))
	if _, err := e.Start(context.Background(), req); contracts.AsError(err).Code != contracts.CodeOutcomeUnknown {
		t.Fatalf("unknown: %v", err)
	}
}

// TestTapeRefusesAnotherExecutor: a replay whose definition declares
// another executor than the recording move's (a reload between the two
// passes changed its arguments) does not take the recorded answer.
func TestTapeRefusesAnotherExecutor(t *testing.T) {
	calls := 0
	runner := fakeRunner(func(config.Executor, workflow.Scope) (map[string]any, error) {
		calls++
		return map[string]any{"n": calls}, nil
	})
	recorder := proxyEngine(t, runner)
	tape := workflow.NewRecorder(nil)
	req := workflow.StartRequest{DefinitionID: config.ProxyDefaultWorkflow, Input: map[string]any{"capability": "run_tests"}}
	if _, err := recorder.Start(workflow.WithTape(context.Background(), tape), req); err != nil {
		t.Fatal(err)
	}
	reloaded, err := workflow.Compile(nil)
	if err != nil {
		t.Fatal(err)
	}
	// The same kind and connection, other arguments.
	if err := reloaded.AddProxy([]config.ExposedCapability{{ID: "run_tests", Produces: []string{"tests_passed"},
		Executor: &config.Executor{Kind: "cli", Connection: "sh", Args: []string{"-c", "exit 0"}}}}); err != nil {
		t.Fatal(err)
	}
	replayer := &workflow.Engine{Registry: reloaded, NewID: func(p string) string { return p + "_r" }, Runners: map[config.Kind]workflow.Runner{config.ExecutorCLI: runner}}
	if _, err := replayer.Start(workflow.WithTape(context.Background(), tape.Replay()), req); !errors.Is(err, workflow.ErrTapeMismatch) {
		t.Fatalf("replay under another executor: %v, want ErrTapeMismatch", err)
	}
	if calls != 1 {
		t.Fatalf("the replay called the upstream (%d calls)", calls)
	}
}

// TestProxyExpire: Expire moves a proxy_default run at rest to the
// terminal state expired (version up, context and event saying when and
// why, stored status expired), after which no move is legal; it refuses a
// run of another workflow, an ended run and one waiting for an approval.
// A configured workflow's own state named expired is not terminal.
func TestProxyExpire(t *testing.T) {
	e := proxyEngine(t, fakeRunner(func(config.Executor, workflow.Scope) (map[string]any, error) {
		return map[string]any{"ok": true}, nil
	}))
	ctx := context.Background()
	out, err := e.Start(ctx, workflow.StartRequest{DefinitionID: config.ProxyDefaultWorkflow, Input: map[string]any{"capability": "run_tests"}})
	if err != nil {
		t.Fatal(err)
	}
	in := out.Instance
	d, _ := e.Registry.Lookup(config.ProxyDefaultWorkflow)
	if d.Terminal(workflow.ProxyState) || !d.Terminal(workflow.ExpiredState) || in.Status(d) != "active" {
		t.Fatalf("proxy_default: running terminal %v, expired terminal %v, status %s", d.Terminal(workflow.ProxyState), d.Terminal(workflow.ExpiredState), in.Status(d))
	}
	info := map[string]any{"retention": "1h0m0s"}
	exp, err := e.Expire(in, info)
	if err != nil {
		t.Fatal(err)
	}
	got := exp.Instance
	if got.State != workflow.ExpiredState || got.Version != in.Version+1 || got.Status(d) != "expired" || len(d.Legal(got.State)) != 0 {
		t.Errorf("expired run: %+v (status %s)", got, got.Status(d))
	}
	if m, _ := got.Context[workflow.ExpiredKey].(map[string]any); m["retention"] != "1h0m0s" || got.Context[workflow.LastRunKey] == nil {
		t.Errorf("context = %v, want lastRun kept and expired added", got.Context)
	}
	if in.State != workflow.ProxyState || in.Context[workflow.ExpiredKey] != nil {
		t.Errorf("Expire changed its argument: %+v", in)
	}
	if len(exp.Events) != 1 || exp.Events[0].Type != "workflow.expired" || exp.Events[0].WorkflowID != in.ID ||
		exp.Events[0].Attributes["from"] != workflow.ProxyState || exp.Events[0].Attributes["retention"] != "1h0m0s" {
		t.Errorf("events = %+v", exp.Events)
	}
	if _, ok := info["from"]; ok {
		t.Errorf("Expire wrote into its info: %v", info)
	}
	var ce *contracts.Error
	if _, err := e.Fire(ctx, got, "run_tests", nil); !errors.As(err, &ce) || ce.Code != contracts.CodeInvalidTransition {
		t.Errorf("a move on the expired run: %v, want INVALID_TRANSITION", err)
	}
	waiting := in.Clone()
	waiting.Pending = &workflow.Pending{ApprovalID: "apr_1", Transition: "run_tests"}
	other := in.Clone()
	other.DefinitionID = "deploy"
	for name, x := range map[string]*workflow.Instance{"expired": got, "waiting": waiting, "another workflow": other} {
		if _, err := e.Expire(x, info); !errors.As(err, &ce) || ce.Code != contracts.CodeMissionStateConflict {
			t.Errorf("%s: %v, want MISSION_STATE_CONFLICT", name, err)
		}
	}
	reg, err := workflow.Compile(map[string]config.Workflow{"lease": {Version: 1, Initial: "active",
		States:      map[string]config.State{"active": {}, workflow.ExpiredState: {}, "returned": {Terminal: true}},
		Transitions: []config.Transition{{Name: "lapse", From: config.StringList{"active"}, To: workflow.ExpiredState}}}})
	if err != nil {
		t.Fatal(err)
	}
	ld, _ := reg.Lookup("lease")
	mine := &workflow.Instance{DefinitionID: "lease", State: workflow.ExpiredState}
	if ld.Terminal(workflow.ExpiredState) || mine.Status(ld) != "active" {
		t.Errorf("a configured state named expired: terminal %v, status %s", ld.Terminal(workflow.ExpiredState), mine.Status(ld))
	}
}
