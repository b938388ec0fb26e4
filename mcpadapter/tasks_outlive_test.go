package mcpadapter_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/praxa/praxa/contracts"
	"github.com/praxa/praxa/gateway/gatewaytest"
	"github.com/praxa/praxa/gateway/ids"
	"github.com/praxa/praxa/mcpadapter"
)

// slowGateway starts a gateway whose requests time out after 500ms and
// whose capability slow.deploy is a real child process that runs while
// the returned gate file exists (at most 20s), appending a line to the
// returned marker file each time it runs.
func slowGateway(t *testing.T) (h *harness, gate, marker string) {
	t.Helper()
	dir := t.TempDir()
	gate, marker = filepath.Join(dir, "gate"), filepath.Join(dir, "ran")
	cfg := gatewaytest.SlowDeployConfig(fmt.Sprintf(`echo ran >> %s; for i in $(seq 400); do test -f %s || exit 0; sleep 0.05; done; exit 1`, marker, gate))
	path := filepath.Join(dir, "praxec.yaml")
	if err := os.WriteFile(path, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	return newHarness(t, &harnessOptions{configFile: path}), gate, marker
}

func closeGate(t testing.TB, gate string) {
	t.Helper()
	if err := os.Remove(gate); err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
}

func openGate(t testing.TB, gate string) {
	t.Helper()
	if err := os.WriteFile(gate, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.Remove(gate) })
}

// createdTask decodes the last tools/call answer as a CreateTaskResult.
func createdTask(t testing.TB, rec *resultRecorder) mcpadapter.Task {
	t.Helper()
	var task mcpadapter.Task
	if err := json.Unmarshal(rec.result("tools/call"), &task); err != nil || task.ResultType != "task" {
		t.Fatalf("tools/call answered %s (%v), want a CreateTaskResult", rec.result("tools/call"), err)
	}
	return task
}

// pollTask reads the task until it leaves working (bounded: the child
// process ends within 20s).
func pollTask(t testing.TB, cs *mcp.ClientSession, id string) *mcpadapter.Task {
	t.Helper()
	var task *mcpadapter.Task
	gatewaytest.Eventually(t, "task "+id+" leaving working", 20*time.Second, func() bool {
		task = getTask(t, cs, id)
		return task.Status != "working"
	})
	return task
}

// taskMission is the mission a completed task's result holds.
func taskMission(t testing.TB, task *mcpadapter.Task) (runID string, version int64) {
	t.Helper()
	var r struct {
		StructuredContent struct {
			RunID    string `json:"runId"`
			Workflow struct {
				Version int64 `json:"version"`
			} `json:"workflow"`
		} `json:"structuredContent"`
		IsError bool `json:"isError"`
	}
	if err := json.Unmarshal(task.Result, &r); err != nil || r.IsError {
		t.Fatalf("task result %s (%v)", task.Result, err)
	}
	return r.StructuredContent.RunID, r.StructuredContent.Workflow.Version
}

// TestTasksMoveOutlivesRequest: a start and a move whose executor runs
// past the request's deadline answer a declaring 2026-07-28 client with a
// working task; tasks/get reports it working while the move holds its
// lease (the start's, then the move's), then completed with the mission;
// the command runs once each time. A client without the extension gets
// today's 504 outcome-unknown.
func TestTasksMoveOutlivesRequest(t *testing.T) {
	h, gate, marker := slowGateway(t)
	tok := h.token(t, nil, nil)
	cs, rec := h.tasksClient(t, tok, true, nil)
	ctx := context.Background()

	// The start: its first move calls slow.deploy.
	openGate(t, gate)
	run := "slow-" + ids.Request()
	if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: contracts.ToolCreateMission, Arguments: map[string]any{
		"idempotencyKey": ids.Request(), "goal": "deploy", "definitionId": "proxy_default", "runId": run,
		"input": map[string]any{"capability": "slow.deploy"}}}); err != nil {
		t.Fatal(err)
	}
	task := createdTask(t, rec)
	if task.TaskID != run || task.Status != "working" || !strings.Contains(task.StatusMessage, "start of proxy_default") {
		t.Fatalf("the outlived start answered %+v", task)
	}
	if got := getTask(t, cs, run); got.Status != "working" || !strings.Contains(got.StatusMessage, "still starting") {
		t.Errorf("tasks/get while the start runs: %+v", got)
	}
	closeGate(t, gate)
	done := pollTask(t, cs, run)
	if done.Status != "completed" {
		t.Fatalf("tasks/get after the start: %+v", done)
	}
	gotRun, v := taskMission(t, done)
	if gotRun != run || v < 1 {
		t.Fatalf("the completed start's result names run %s at version %d", gotRun, v)
	}

	// A move on the run: slow.deploy again, as a signal.
	openGate(t, gate)
	if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: contracts.ToolSignalMission, Arguments: map[string]any{
		"idempotencyKey": ids.Request(), "runId": run, "signal": "slow.deploy", "expectedVersion": v}}); err != nil {
		t.Fatal(err)
	}
	task = createdTask(t, rec)
	if task.TaskID != run || task.Status != "working" || !strings.Contains(task.StatusMessage, "slow.deploy") {
		t.Fatalf("the outlived signal answered %+v", task)
	}
	working := getTask(t, cs, run)
	if working.Status != "working" || !strings.Contains(working.StatusMessage, fmt.Sprintf("slow.deploy from version %d", v)) {
		t.Errorf("tasks/get while the move runs: %+v", working)
	}
	// The mission read names the move in flight, as any replica reads it.
	read := call(t, cs, contracts.ToolGetMission, map[string]any{"runId": run})
	if read.str("moving.transition") != "slow.deploy" {
		t.Errorf("the mission read while the move runs: %s", read.raw)
	}
	closeGate(t, gate)
	done = pollTask(t, cs, run)
	if done.Status != "completed" {
		t.Fatalf("tasks/get after the move: %+v", done)
	}
	if _, v2 := taskMission(t, done); v2 <= v {
		t.Errorf("the completed move's mission is at version %d, want past %d", v2, v)
	}

	// Without the extension: the 504 of today.
	plain, _ := h.tasksClient(t, tok, false, nil)
	_, v = taskMission(t, done)
	openGate(t, gate)
	env, _ := callErr(t, plain, contracts.ToolSignalMission, map[string]any{
		"idempotencyKey": ids.Request(), "runId": run, "signal": "slow.deploy", "expectedVersion": v}, contracts.CodeOutcomeUnknown)
	if !strings.Contains(env.Error.Message, "still running") {
		t.Errorf("without the extension: %+v", env.Error)
	}
	closeGate(t, gate)
	gatewaytest.Poll(20*time.Second, func() bool {
		return call(t, plain, contracts.ToolGetMission, map[string]any{"runId": run}).body["moving"] == nil
	})
	if n := gatewaytest.FileCount(t, marker, "ran"); n != 3 {
		t.Errorf("slow.deploy ran %d times, want 3", n)
	}
}

// TestTasksPraxecCommandOutlives: a praxec.command submit, which names its
// run by workflowId, whose executor outlives the request answers a task
// whose id is the run's (the workflow's id, for a run started without a
// runId of its own); tasks/get follows it to completion.
func TestTasksPraxecCommandOutlives(t *testing.T) {
	h, gate, _ := slowGateway(t)
	cs, rec := h.tasksClient(t, h.token(t, nil, nil), true, nil)
	started := call(t, cs, contracts.ToolPraxecCommand, map[string]any{"definitionId": "proxy_default",
		"input": map[string]any{"capability": "slow.deploy"}})
	wf := started.str("workflow.id")
	openGate(t, gate)
	if _, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: contracts.ToolPraxecCommand, Arguments: map[string]any{
		"workflowId": wf, "expectedVersion": version(started), "transition": "slow.deploy"}}); err != nil {
		t.Fatal(err)
	}
	task := createdTask(t, rec)
	if task.TaskID != wf || task.Status != "working" || !strings.Contains(task.StatusMessage, "slow.deploy") {
		t.Fatalf("the outlived praxec.command submit answered %+v", task)
	}
	// praxec.query get names the move in flight too.
	if got := call(t, cs, contracts.ToolPraxecQuery, map[string]any{"workflowId": wf}); got.str("moving.transition") != "slow.deploy" {
		t.Errorf("praxec.query get while the move runs: %s", got.raw)
	}
	closeGate(t, gate)
	if done := pollTask(t, cs, wf); done.Status != "completed" {
		t.Fatalf("tasks/get after the move: %+v", done)
	}
}

// TestTasksPraxecCommandParks: a praxec.command submit that leaves an
// approval pending answers a declaring client with a task on the run
// (tasks/get then reads it as aura_get_mission does); a run started with
// a runId of its own, which praxec.command cannot name, keeps today's
// answer.
func TestTasksPraxecCommandParks(t *testing.T) {
	h := newHarness(t, nil)
	cs, rec := h.tasksClient(t, h.token(t, nil, nil), true, nil)
	for _, runID := range []string{"", "release-" + ids.Request()} {
		start := map[string]any{"definitionId": "release_approval"}
		if runID != "" {
			start["runId"] = runID
		}
		started := call(t, cs, contracts.ToolPraxecCommand, start)
		wf := started.str("workflow.id")
		requested := call(t, cs, contracts.ToolPraxecCommand, map[string]any{"workflowId": wf, "expectedVersion": version(started),
			"transition": "request_release", "arguments": map[string]any{"version": "1.2.3"}})
		res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: contracts.ToolPraxecCommand, Arguments: map[string]any{
			"workflowId": wf, "expectedVersion": version(requested), "transition": "approve_release"}})
		if err != nil {
			t.Fatal(err)
		}
		if runID != "" {
			if a := success(t, contracts.ToolPraxecCommand, res); a.str("result.status") != "pending_approval" {
				t.Errorf("a run with its own runId: %s", a.raw)
			}
			if strings.Contains(string(rec.result("tools/call")), `"resultType":"task"`) {
				t.Errorf("a run with its own runId got a task: %s", rec.result("tools/call"))
			}
			continue
		}
		task := createdTask(t, rec)
		if task.TaskID != wf || task.Status != "working" || !strings.Contains(task.StatusMessage, "waiting for approval") {
			t.Fatalf("the parked praxec.command submit answered %+v", task)
		}
		if got := getTask(t, cs, wf); got.Status != "working" {
			t.Errorf("tasks/get of the parked run: %+v", got)
		}
	}
}
