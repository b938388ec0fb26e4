package workflow_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"

	"github.com/praxa/praxa/contracts"
	"github.com/praxa/praxa/examples"
	"github.com/praxa/praxa/gateway/config"
	"github.com/praxa/praxa/gateway/workflow"
)

// engine is an engine of the example configuration's workflows.
func engine(t *testing.T) *workflow.Engine {
	t.Helper()
	return engineOf(t, examples.PraxecYAMLName, examples.PraxecYAML)
}

// started starts the example workflow def on a new engine of the example
// configuration, failing the test when it cannot.
func started(t *testing.T, def string) (*workflow.Engine, *workflow.Instance) {
	t.Helper()
	e := engine(t)
	out, err := e.Start(context.Background(), workflow.StartRequest{DefinitionID: def})
	if err != nil {
		t.Fatalf("start %s: %v", def, err)
	}
	return e, out.Instance
}

// cancelled reports whether events record that the approval id was
// cancelled.
func cancelled(events []workflow.Event, id string) bool {
	return slices.ContainsFunc(events, func(ev workflow.Event) bool {
		return ev.Type == "human.approval.cancelled" && ev.Attributes["approvalId"] == id
	})
}

// engineOf is an engine of the workflows of the configuration file name
// (its text data), whose ids count up (mission_1, mission_2, …).
func engineOf(t *testing.T, name string, data []byte) *workflow.Engine {
	t.Helper()
	cfg, err := config.Parse(name, data)
	if err != nil {
		t.Fatalf("config %s: %v", name, err)
	}
	reg, err := workflow.Compile(cfg.Workflows)
	if err != nil {
		t.Fatalf("Compile: %v", err)
	}
	n := 0
	return &workflow.Engine{Registry: reg, NewID: func(p string) string { n++; return fmt.Sprintf("%s_%d", p, n) }}
}

func TestDeployPipeline(t *testing.T) {
	ctx := context.Background()
	e := engine(t)
	out, err := e.Start(ctx, workflow.StartRequest{DefinitionID: "deploy_pipeline", Tenant: "t"})
	if err != nil {
		t.Fatal(err)
	}
	in := out.Instance
	if in.State != "lint" || in.Version != 1 || in.RunID != in.ID {
		t.Fatalf("start: %+v", in)
	}
	steps := []struct {
		name string
		args map[string]any
		want string
	}{
		{"run_lint", nil, "test"},
		{"run_tests", map[string]any{"coverage": 87.5}, "build"},
		{"build", map[string]any{"artifactId": "art_1"}, "ready_to_deploy"},
		{"deploy", map[string]any{"confirm": true}, "deployed"},
	}
	for i, s := range steps {
		out, err := e.Fire(ctx, in, s.name, s.args)
		if err != nil {
			t.Fatalf("%s: %v", s.name, err)
		}
		if out.Instance.State != s.want || out.Instance.Version != int64(i+2) {
			t.Fatalf("%s: state %s version %d", s.name, out.Instance.State, out.Instance.Version)
		}
		if s.name == "build" {
			if len(out.Children) != 1 || out.Children[0].State != "valid" || out.Instance.Context["validated"] != true {
				t.Errorf("build ran no completed sub-workflow: children %+v, context %+v", out.Children, out.Instance.Context)
			}
		}
		in = out.Instance
	}
	if in.Context["coverage"] != 87.5 || !slices.Equal(in.Evidence, []string{"lint_passed", "tests_passed"}) {
		t.Errorf("context %+v evidence %v", in.Context, in.Evidence)
	}
	if _, err := e.Fire(ctx, in, "abort", nil); contracts.AsError(err).Code != contracts.CodeInvalidTransition {
		t.Errorf("move after the end: %v", err)
	}
}

func TestErrors(t *testing.T) {
	ctx := context.Background()
	e, in := started(t, "deploy_pipeline")
	if _, err := e.Fire(ctx, in, "deploy", nil); contracts.AsError(err).Code != contracts.CodeInvalidTransition {
		t.Errorf("illegal move: %v", err)
	}
	next, _ := e.Fire(ctx, in, "run_lint", nil)
	if _, err := e.Fire(ctx, next.Instance, "run_tests", map[string]any{"coverage": "high"}); contracts.AsError(err).Code != contracts.CodeInvalidParams {
		t.Errorf("bad arguments: %v", err)
	} else {
		var ce *contracts.Error
		errors.As(err, &ce)
		if ce.Fields[0].Pointer != "/arguments/coverage" {
			t.Errorf("pointer %q", ce.Fields[0].Pointer)
		}
	}
	if _, err := e.Start(ctx, workflow.StartRequest{DefinitionID: "nope"}); contracts.AsError(err).Code != contracts.CodeNotFound {
		t.Errorf("unknown definition: %v", err)
	}
}

func TestEvidenceGuard(t *testing.T) {
	ctx := context.Background()
	e, in := started(t, "guarded_merge")
	rejected, err := e.Fire(ctx, in, "merge", nil)
	if contracts.AsError(err).Code != contracts.CodeGuardRejected {
		t.Fatalf("merge before tests: %v", err)
	}
	if len(rejected.Events) != 1 || rejected.Events[0].Type != "guard.rejected" {
		t.Errorf("guard rejection events: %+v", rejected.Events)
	}
	tested, err := e.Fire(ctx, in, "run_tests", nil)
	if err != nil {
		t.Fatal(err)
	}
	merged, err := e.Fire(ctx, tested.Instance, "merge", nil)
	if err != nil || merged.Instance.State != "merged" {
		t.Fatalf("merge after tests: %v", err)
	}
}

func TestHumanApproval(t *testing.T) {
	ctx := context.Background()
	e, in := started(t, "release_approval")
	req, err := e.Fire(ctx, in, "request_release", map[string]any{"version": "2.0.0"})
	if err != nil {
		t.Fatal(err)
	}
	pending, err := e.Fire(ctx, req.Instance, "approve_release", nil)
	if err != nil || pending.Pending == nil || pending.Instance.State != "awaiting_approval" {
		t.Fatalf("approval not queued: %+v, %v", pending, err)
	}
	if _, err := e.Fire(ctx, pending.Instance, "approve_release", nil); contracts.AsError(err).Code != contracts.CodeInvalidTransition {
		t.Errorf("firing the pending transition again: %v", err)
	}
	id := pending.Pending.ApprovalID
	if _, err := e.Resolve(ctx, pending.Instance, "apr_other", true, "ops"); contracts.AsError(err).Code != contracts.CodeMissionStateConflict {
		t.Errorf("resolving another approval: %v", err)
	}
	rejected, err := e.Resolve(ctx, pending.Instance, id, false, "ops")
	if err != nil || rejected.Instance.Pending != nil || rejected.Instance.State != "awaiting_approval" {
		t.Fatalf("reject: %+v, %v", rejected, err)
	}
	again, _ := e.Fire(ctx, rejected.Instance, "approve_release", nil)
	done, err := e.Resolve(ctx, again.Instance, again.Pending.ApprovalID, true, "ops")
	if err != nil || done.Instance.State != "released" || !slices.Contains(done.Instance.Evidence, "release_approved") {
		t.Fatalf("approve: %+v, %v", done, err)
	}
	// Another move overtakes a pending approval.
	p2, _ := e.Fire(ctx, req.Instance, "approve_release", nil)
	withdrawn, err := e.Fire(ctx, p2.Instance, "withdraw", nil)
	if err != nil || withdrawn.Instance.Pending != nil {
		t.Fatalf("withdraw while pending: %+v, %v", withdrawn, err)
	}
	if !cancelled(withdrawn.Events, p2.Pending.ApprovalID) {
		t.Errorf("withdraw while pending: events %+v, want human.approval.cancelled of %s", withdrawn.Events, p2.Pending.ApprovalID)
	}
}

func TestCancel(t *testing.T) {
	e, in := started(t, "guarded_merge")
	c, err := e.Cancel(in, "no longer needed")
	if err != nil || c.Instance.State != workflow.CancelledState || c.Instance.Version != 2 {
		t.Fatalf("cancel: %+v, %v", c, err)
	}
	if _, err := e.Cancel(c.Instance, ""); contracts.AsError(err).Code != contracts.CodeMissionStateConflict {
		t.Errorf("cancel of a terminal instance: %v", err)
	}
}

func TestChainAndResolve(t *testing.T) {
	out, err := engine(t).Start(context.Background(), workflow.StartRequest{DefinitionID: "validation", Input: map[string]any{"artifact": "a1"}})
	if err != nil {
		t.Fatal(err)
	}
	if out.Instance.State != "valid" || len(out.Chain) != 1 || out.Chain[0].Transition != "validate" || out.Instance.Context["artifact"] != "a1" {
		t.Fatalf("chain: %+v %+v", out.Instance, out.Chain)
	}
	scope := workflow.Scope{Arguments: map[string]any{"a": map[string]any{"b": 1}}}
	if got := workflow.Resolve(map[string]any{"x": "$.arguments.a.b", "y": "lit", "z": "$.context.none"}, scope); fmt.Sprint(got) != "map[x:1 y:lit z:<nil>]" {
		t.Errorf("Resolve = %v", got)
	}
}
