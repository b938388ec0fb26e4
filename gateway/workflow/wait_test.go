package workflow_test

import (
	"context"
	"testing"

	"github.com/praxa/praxa/contracts"
	"github.com/praxa/praxa/gateway/workflow"
)

const waitYAML = `workflows:
  review:
    version: 1
    title: Review
    initial: open
    states: {open: {}, approved: {terminal: true}}
    transitions:
      - {name: approve, from: open, to: approved, set: {verdict: $.arguments.verdict}}
  release:
    version: 1
    title: Release
    initial: draft
    states: {draft: {}, reviewed: {}, shipped: {terminal: true}}
    transitions:
      - name: review
        from: draft
        to: reviewed
        executor: {kind: workflow, definitionId: review, timeoutMs: 1000}
        set: {verdict: $.output.verdict}
        produces: [reviewed]
      - {name: ship, from: reviewed, to: shipped}
`

func waitEngine(t *testing.T) *workflow.Engine {
	t.Helper()
	return engineOf(t, "wait.yaml", []byte(waitYAML))
}

// TestParkWithdrawsApproval: a move that parks on a child workflow while
// an approval is pending withdraws the approval, as any other move does.
func TestParkWithdrawsApproval(t *testing.T) {
	ctx := context.Background()
	e := engineOf(t, "wait.yaml", []byte(waitYAML+`      - {name: sign, from: draft, to: reviewed, actor: human}
`))
	start, err := e.Start(ctx, workflow.StartRequest{DefinitionID: "release", Tenant: "t"})
	if err != nil {
		t.Fatal(err)
	}
	pending, err := e.Fire(ctx, start.Instance, "sign", nil)
	if err != nil || pending.Pending == nil {
		t.Fatalf("sign: %+v, %v", pending, err)
	}
	out, err := e.Fire(ctx, pending.Instance, "review", nil)
	if err != nil {
		t.Fatalf("review while sign waits: %v", err)
	}
	if out.Parked == nil || out.Instance.Pending != nil || !cancelled(out.Events, pending.Pending.ApprovalID) {
		t.Errorf("review while sign waits: %+v, events %+v", out, out.Events)
	}
}

// TestWorkflowExecutorParks: the move parks (Waiting, Parked, the child
// among Children, a workflow.parked event), no move is legal while it
// waits, Resume completes it with the child's context, and FailWait ends
// it with the parent where it was.
func TestWorkflowExecutorParks(t *testing.T) {
	ctx := context.Background()
	e := waitEngine(t)
	start, err := e.Start(ctx, workflow.StartRequest{DefinitionID: "release", Tenant: "t"})
	if err != nil {
		t.Fatal(err)
	}
	out, err := e.Fire(ctx, start.Instance, "review", nil)
	if err != nil {
		t.Fatalf("Fire review: %v", err)
	}
	parent := out.Instance
	w := parent.Waiting
	if w == nil || out.Parked != w || parent.State != "draft" || parent.Version != 2 || len(out.Children) != 1 ||
		w.ChildID != out.Children[0].ID || w.TimeoutMs != 1000 || w.Transition != "review" || out.Events[len(out.Events)-1].Type != "workflow.parked" {
		t.Fatalf("parked: %+v, waiting %+v, events %+v", parent, w, out.Events)
	}
	child := out.Children[0]
	if _, err := e.Fire(ctx, parent, "review", nil); contracts.AsError(err).Code != contracts.CodeInvalidTransition {
		t.Fatalf("a move while parked: %v, want INVALID_TRANSITION", err)
	}
	if _, err := e.Resume(ctx, parent, child); contracts.AsError(err).Code != contracts.CodeMissionStateConflict {
		t.Fatalf("Resume on an active child: %v", err)
	}
	if _, err := e.Resume(ctx, parent, &workflow.Instance{ID: "other", DefinitionID: "review", State: "approved"}); contracts.AsError(err).Code != contracts.CodeMissionStateConflict {
		t.Fatalf("Resume on another child: %v", err)
	}

	moved, err := e.Fire(ctx, child, "approve", map[string]any{"verdict": "lgtm"})
	if err != nil {
		t.Fatal(err)
	}
	res, err := e.Resume(ctx, parent, moved.Instance)
	if err != nil {
		t.Fatalf("Resume: %v", err)
	}
	if in := res.Instance; in.State != "reviewed" || in.Waiting != nil || in.Context["verdict"] != "lgtm" || in.Version != 3 || len(in.Evidence) != 1 {
		t.Fatalf("resumed: %+v", in)
	}
	if parent.Waiting == nil {
		t.Fatal("Resume changed the instance it was given")
	}

	cancelled, _ := e.Cancel(child, "no")
	res, err = e.Resume(ctx, parent, cancelled.Instance)
	if err != nil {
		t.Fatalf("Resume on a cancelled child: %v", err)
	}
	if in := res.Instance; in.State != "draft" || in.Waiting != nil || in.Version != 3 || res.Events[0].Type != "workflow.wait.failed" {
		t.Fatalf("failed wait: %+v %+v", in, res.Events)
	}
	if _, err := e.FailWait(res.Instance, "workflow.wait.timedout", "late"); contracts.AsError(err).Code != contracts.CodeMissionStateConflict {
		t.Fatalf("FailWait on an instance that does not wait: %v", err)
	}
	c, err := e.Cancel(parent, "stop")
	if err != nil || c.Instance.Waiting != nil || c.Events[0].Attributes["childId"] != child.ID {
		t.Fatalf("Cancel of a parked instance: %+v %v", c, err)
	}
}
